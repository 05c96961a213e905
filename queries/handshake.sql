-- name: AgentPolicy :one
SELECT id, name, policy, policy_locked FROM agents WHERE id = @id;

-- name: SetPolicy :execrows
-- The agent's own change: refused (0 rows) once an owner locked it.
UPDATE agents SET policy = @policy, updated_at = now() WHERE id = @id AND NOT policy_locked;

-- name: SetOwnerPolicy :exec
-- An owner's change: owner-decides locks the policy, anything else unlocks it.
UPDATE agents SET policy = @policy, policy_locked = (@policy = 'owner-decides'), updated_at = now() WHERE id = @id;

-- name: ExpireStaleRequests :exec
UPDATE contact_requests SET status = 'expired'
WHERE from_agent = @from_agent AND to_agent = @to_agent AND status = 'pending'
  AND created_at <= now() - @request_lifetime::interval;

-- name: CountRequestsLastHour :one
SELECT count(*) FROM contact_requests WHERE from_agent = @from_agent AND created_at > now() - @span::interval;

-- name: CountPendingOutgoing :one
SELECT count(*) FROM contact_requests
WHERE from_agent = @from_agent AND status = 'pending' AND created_at > now() - @request_lifetime::interval;

-- name: HasPendingRequest :one
SELECT EXISTS (SELECT 1 FROM contact_requests
    WHERE from_agent = @from_agent AND to_agent = @to_agent AND status = 'pending'
      AND created_at > now() - @request_lifetime::interval);

-- name: DeclinedRecently :one
-- The 24-hour cooldown after the target (or its owner) declined.
SELECT EXISTS (SELECT 1 FROM contact_requests
    WHERE from_agent = @from_agent AND to_agent = @to_agent AND status = 'declined'
      AND decided_by IN ('agent', 'owner') AND decided_at > now() - @cooldown::interval);

-- name: ActiveAgreementsBetween :many
SELECT id, requester, target, scopes FROM agreements
WHERE ((requester = @a AND target = @b) OR (requester = @b AND target = @a))
  AND revoked_at IS NULL AND expires_at > now()
ORDER BY expires_at DESC;

-- name: InsertContactRequest :one
INSERT INTO contact_requests (from_agent, to_agent, purpose, scopes, ttl_days, status, decided_by, decided_at)
VALUES (@from_agent, @to_agent, @purpose, @scopes, @ttl_days, @status, sqlc.narg('decided_by'),
        CASE WHEN @status = 'pending' THEN NULL ELSE now() END)
RETURNING id, created_at;

-- name: InsertAgreement :one
INSERT INTO agreements (request_id, requester, target, scopes, expires_at)
VALUES (@request_id, @requester, @target, @scopes, now() + make_interval(days => @ttl_days::int))
RETURNING id, expires_at;

-- name: LockRequest :one
-- The request, locked, with its target's policy (a decision's facts).
SELECT r.id, r.from_agent, r.to_agent, r.purpose, r.scopes, r.ttl_days, r.status,
       (r.status = 'pending' AND r.created_at <= now() - @request_lifetime::interval)::boolean AS expired,
       a.policy AS target_policy
FROM contact_requests r JOIN agents a ON a.id = r.to_agent
WHERE r.id = @id FOR UPDATE OF r;

-- name: DecideRequest :exec
UPDATE contact_requests SET status = @status, decided_by = sqlc.narg('decided_by'), decided_at = now() WHERE id = @id;

-- name: ListContacts :many
-- Incoming or outgoing requests, with the status as of now (a pending
-- request older than 7 days reads as expired).
SELECT r.id, o.id AS other_id, o.name AS other_name, r.purpose, r.scopes, r.ttl_days,
       s.status::text AS status, (r.created_at + @request_lifetime::interval)::timestamptz AS expires_at,
       count(*) OVER () AS total
FROM contact_requests r
JOIN agents o ON o.id = CASE WHEN @incoming::boolean THEN r.from_agent ELSE r.to_agent END
CROSS JOIN LATERAL (SELECT CASE WHEN r.status = 'pending' AND r.created_at <= now() - @request_lifetime::interval
                                THEN 'expired' ELSE r.status END AS status) s
WHERE (CASE WHEN @incoming::boolean THEN r.to_agent ELSE r.from_agent END) = @agent
  AND (@status::text = 'any' OR s.status = @status::text)
ORDER BY r.created_at DESC, r.id
LIMIT @lim OFFSET @off;

-- name: CountPendingIncoming :one
SELECT count(*) FROM contact_requests
WHERE to_agent = @agent AND status = 'pending' AND created_at > now() - @request_lifetime::interval;

-- name: ListAgreements :many
SELECT g.id, o.id AS other_id, o.name AS other_name,
       (SELECT coalesce(array_agg(b.account ORDER BY b.bound_at), '{}')::text[] FROM agent_accounts b WHERE b.agent_id = o.id) AS irc_accounts,
       CASE WHEN g.requester = @agent THEN 'requester' ELSE 'target' END::text AS role,
       g.scopes,
       CASE WHEN g.revoked_at IS NOT NULL THEN 'revoked' WHEN g.expires_at <= now() THEN 'expired' ELSE 'active' END::text AS status,
       g.expires_at, count(*) OVER () AS total
FROM agreements g
JOIN agents o ON o.id = CASE WHEN g.requester = @agent THEN g.target ELSE g.requester END
WHERE (g.requester = @agent OR g.target = @agent)
  AND (@include_ended::boolean OR (g.revoked_at IS NULL AND g.expires_at > now()))
ORDER BY g.created_at DESC, g.id
LIMIT @lim OFFSET @off;

-- name: LockAgreement :one
SELECT id, requester, target, scopes, (revoked_at IS NULL AND expires_at > now())::boolean AS active
FROM agreements WHERE id = @id FOR UPDATE;

-- name: RevokeAgreement :exec
UPDATE agreements SET revoked_at = now(), revoked_by = @revoked_by WHERE id = @id;

-- name: LockAgent :exec
-- Serialises one agent's contact requests, so its hourly and pending
-- limits are counted without a race. NO KEY: the foreign-key checks of a
-- request in the other direction need a share lock on this row.
SELECT id FROM agents WHERE id = @id FOR NO KEY UPDATE;
