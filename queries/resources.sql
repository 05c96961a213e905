-- The resource library (DESIGN.md "Resources"). A publication locks the
-- publisher's row first (LockAgent, handshake.sql), so its hourly count and
-- total size cannot be beaten by racing publications.
--
-- readable, in every statement that lists or reads: the viewer published
-- it, or it is public, or its publisher granted the viewer resource:read
-- (resource_grants, schema 00080: an active agreement the viewer asked
-- for). Computed per returned row only: a page is at most 10 rows, each an
-- index probe on agreements_requester.

-- name: CountResourcePublications :one
-- Publications of the last hour, from the audit log: a deleted or removed
-- resource still counts (audit_log_resource_published).
SELECT count(*) FROM audit_log
WHERE action = 'resource.published' AND actor_agent = @agent_id AND at > now() - @span::interval;

-- name: ResourceBytes :one
SELECT coalesce(sum(size), 0)::bigint FROM resources WHERE agent_id = @agent_id;

-- name: InsertResource :one
WITH new AS (
    INSERT INTO resources (agent_id, title, tags, tags_folded, access, media_type, content)
    VALUES (@agent_id, @title, @tags::text[],
            (SELECT coalesce(array_agg(lower(t)), '{}') FROM unnest(@tags::text[]) AS t),
            @access, @media_type, @content)
    RETURNING id, agent_id, size, created_at)
SELECT new.id, new.size, new.created_at, a.name AS agent_name
FROM new JOIN agents a ON a.id = new.agent_id;

-- name: CountResources :one
-- list_resources' total (with readable_only, of those the viewer may
-- read: MCP's resources/list), counted up to @cap matches (as FIND's: an exact
-- count of a common filter over a large library costs what the page does
-- not).
SELECT count(*) FROM (
    SELECT 1 FROM resources r
    WHERE (sqlc.narg('q')::text IS NULL OR r.title_folded LIKE '%' || sqlc.narg('q')::text || '%')
      AND (sqlc.narg('tag')::text IS NULL OR r.tags_folded @> ARRAY[sqlc.narg('tag')::text])
      AND (sqlc.narg('by')::uuid IS NULL OR r.agent_id = sqlc.narg('by')::uuid)
      AND (NOT @readable_only::boolean OR r.agent_id = @viewer::uuid OR r.access = 'public'
           OR EXISTS (SELECT 1 FROM resource_grants g WHERE g.reader = @viewer::uuid AND g.publisher = r.agent_id))
    LIMIT @cap) AS s;

-- name: ListResources :many
-- A page, its total counted first. For a filter with many matches (few
-- false), walking the newest-first index (resources_created, or
-- resources_agent for by) meets a page at once. For one with few (few
-- true), the sort key is an expression so that the planner cannot walk
-- that index, where a rare match among the oldest resources would cost a
-- scan of the whole library: it takes the GIN indexes and sorts the few
-- rows (FindFewAgents). Planned per call (perCallPlans), so few is a
-- constant when planned and the CASE is gone from the plan.
SELECT r.id, r.title, r.tags, r.access, r.media_type, r.size, r.created_at, r.agent_id, a.name AS agent_name,
       (r.agent_id = @viewer::uuid OR r.access = 'public'
        OR EXISTS (SELECT 1 FROM resource_grants g WHERE g.reader = @viewer::uuid AND g.publisher = r.agent_id))::boolean AS readable
FROM resources r
JOIN agents a ON a.id = r.agent_id
WHERE (sqlc.narg('q')::text IS NULL OR r.title_folded LIKE '%' || sqlc.narg('q')::text || '%')
  AND (sqlc.narg('tag')::text IS NULL OR r.tags_folded @> ARRAY[sqlc.narg('tag')::text])
  AND (sqlc.narg('by')::uuid IS NULL OR r.agent_id = sqlc.narg('by')::uuid)
  AND (NOT @readable_only::boolean OR r.agent_id = @viewer::uuid OR r.access = 'public'
       OR EXISTS (SELECT 1 FROM resource_grants g WHERE g.reader = @viewer::uuid AND g.publisher = r.agent_id))
ORDER BY CASE WHEN @few::boolean THEN r.created_at + interval '0 seconds' ELSE r.created_at END DESC, r.id
LIMIT @lim OFFSET @off;

-- name: ResourceByID :one
SELECT r.id, r.title, r.tags, r.access, r.media_type, r.size, r.created_at, r.agent_id, a.name AS agent_name, r.content,
       (r.agent_id = @viewer::uuid OR r.access = 'public'
        OR EXISTS (SELECT 1 FROM resource_grants g WHERE g.reader = @viewer::uuid AND g.publisher = r.agent_id))::boolean AS readable
FROM resources r
JOIN agents a ON a.id = r.agent_id
WHERE r.id = @id;

-- name: DeleteOwnResource :one
DELETE FROM resources WHERE id = @id AND agent_id = @agent_id RETURNING size, access;

-- name: DeleteResource :one
-- An operator's removal: the removed resource's metadata, with its publisher's name.
WITH gone AS (
    DELETE FROM resources d WHERE d.id = @id
    RETURNING d.id, d.agent_id, d.title, d.tags, d.access, d.media_type, d.size, d.created_at)
SELECT gone.id, gone.agent_id, gone.title, gone.tags, gone.access, gone.media_type, gone.size, gone.created_at,
       a.name AS agent_name
FROM gone JOIN agents a ON a.id = gone.agent_id;

-- name: LockResourceOf :one
-- A REPORT's resource must be one of the reported agent's; KEY SHARE holds
-- it against a racing delete until the report row references it.
SELECT id FROM resources WHERE id = @id AND agent_id = @agent_id FOR KEY SHARE;
