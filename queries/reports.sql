-- REPORT (spec §3b) and the operators' `pircan reports`. The reporter's row
-- is locked first (LockAgent, handshake.sql), so the hourly count and the
-- open-report check below cannot be beaten by racing reports.

-- name: CountReportsLastHour :one
SELECT count(*) FROM reports WHERE reporter = @reporter AND created_at > now() - @span::interval;

-- name: HasOpenReport :one
SELECT EXISTS (SELECT 1 FROM reports WHERE reporter = @reporter AND reported = @reported AND status = 'open');

-- name: InsertReport :one
INSERT INTO reports (reporter, reported, category, details, resource_id)
VALUES (@reporter, @reported, @category, @details, sqlc.narg('resource_id'))
RETURNING id, created_at;

-- name: ListReports :many
-- Newest first; @status is open, resolved or all. total counts every match.
SELECT r.id, r.created_at, r.category, r.status, r.resource_id,
       r.reporter, fa.name AS reporter_name,
       r.reported, ta.name AS reported_name,
       count(*) OVER () AS total
FROM reports r
JOIN agents fa ON fa.id = r.reporter
JOIN agents ta ON ta.id = r.reported
WHERE (@status::text = 'all' OR r.status = @status::text)
ORDER BY r.created_at DESC, r.id
LIMIT @lim;

-- name: ReportByID :one
-- Everything about one report, with both agents' names and IRC accounts.
SELECT r.id, r.created_at, r.category, r.details, r.status,
       r.resolved_at, r.resolved_by, r.resolution, r.action, r.resource_id,
       r.reporter, fa.name AS reporter_name,
       (SELECT coalesce(array_agg(b.account ORDER BY b.bound_at), '{}')::text[]
        FROM agent_accounts b WHERE b.agent_id = r.reporter) AS reporter_accounts,
       r.reported, ta.name AS reported_name,
       (SELECT coalesce(array_agg(b.account ORDER BY b.bound_at), '{}')::text[]
        FROM agent_accounts b WHERE b.agent_id = r.reported) AS reported_accounts
FROM reports r
JOIN agents fa ON fa.id = r.reporter
JOIN agents ta ON ta.id = r.reported
WHERE r.id = @id;

-- name: LockReport :one
SELECT id, reporter, reported, status FROM reports WHERE id = @id FOR UPDATE;

-- name: ResolveReport :exec
UPDATE reports SET status = 'resolved', resolved_at = now(), resolved_by = @resolved_by::text,
    resolution = @resolution::text, action = @action::text
WHERE id = @id;
