-- name: AgentByAccount :one
SELECT a.id, a.name, a.description, a.capabilities, a.card_url, a.nick, a.created_at, b.account
FROM agent_accounts b JOIN agents a ON a.id = b.agent_id
WHERE b.account_folded = @account_folded;

-- name: LockRegistrations :exec
-- Serialises new registrations so the hourly count below cannot be raced.
SELECT pg_advisory_xact_lock(7340001);

-- name: CountRecentRegistrations :one
SELECT count(*) FROM agents WHERE created_at > now() - interval '1 hour';

-- name: CreateAgent :one
INSERT INTO agents (name, description, capabilities, capabilities_folded, card_url, nick)
VALUES (@name, @description, @capabilities::text[],
        (SELECT coalesce(array_agg(lower(c)), '{}') FROM unnest(@capabilities::text[]) AS c),
        @card_url, @nick)
RETURNING id, created_at;

-- name: BindAccount :exec
INSERT INTO agent_accounts (account_folded, account, agent_id) VALUES (@account_folded, @account, @agent_id);

-- name: UpdateProfile :one
UPDATE agents SET
    name = coalesce(sqlc.narg('name'), name),
    description = coalesce(sqlc.narg('description'), description),
    capabilities = coalesce(sqlc.narg('capabilities')::text[], capabilities),
    capabilities_folded = coalesce(
        (SELECT array_agg(lower(c)) FROM unnest(sqlc.narg('capabilities')::text[]) AS c),
        CASE WHEN sqlc.narg('capabilities')::text[] IS NULL THEN capabilities_folded ELSE '{}' END),
    card_url = coalesce(sqlc.narg('card_url'), card_url),
    nick = @nick,
    updated_at = now()
WHERE id = @id
RETURNING id, name, description, capabilities, card_url, nick, created_at;

-- name: SetNick :exec
UPDATE agents SET nick = @nick WHERE id = @id;

-- name: FindAgents :many
-- q and capability are optional; the store plans it for its actual
-- parameters on every call (store.perCallPlans), so each filter that is
-- given uses its index. No count(*) OVER () here: it would read
-- every match before the first row (BENCHMARKS.md).
SELECT id, name, description, capabilities, nick
FROM agents
WHERE (sqlc.narg('q')::text IS NULL OR search LIKE '%' || sqlc.narg('q')::text || '%')
  AND (sqlc.narg('capability')::text IS NULL OR capabilities_folded @> ARRAY[sqlc.narg('capability')::text])
ORDER BY created_at, id
LIMIT @lim OFFSET @off;

-- name: FindFewAgents :many
-- FindAgents for a filter with few matches (counted first): the sort key is
-- an expression so the planner cannot walk agents_created_at, where a rare
-- match among the newest agents would cost a scan of the whole directory;
-- it takes the GIN indexes and sorts the few rows.
SELECT id, name, description, capabilities, nick
FROM agents
WHERE (sqlc.narg('q')::text IS NULL OR search LIKE '%' || sqlc.narg('q')::text || '%')
  AND (sqlc.narg('capability')::text IS NULL OR capabilities_folded @> ARRAY[sqlc.narg('capability')::text])
ORDER BY created_at + interval '0 seconds', id
LIMIT @lim OFFSET @off;

-- name: CountAgents :one
-- FIND's total, counted up to @cap matches: an exact count of a common
-- filter over a large directory costs hundreds of milliseconds.
SELECT count(*) FROM (
    SELECT 1 FROM agents
    WHERE (sqlc.narg('q')::text IS NULL OR search LIKE '%' || sqlc.narg('q')::text || '%')
      AND (sqlc.narg('capability')::text IS NULL OR capabilities_folded @> ARRAY[sqlc.narg('capability')::text])
    LIMIT @cap) AS s;

-- name: CountByCapability :one
-- FIND's total for a capability alone, counted up to @cap matches: a range
-- of agent_capabilities' primary key, read from the index alone.
SELECT count(*) FROM (
    SELECT 1 FROM agent_capabilities WHERE capability = @capability LIMIT @cap) AS s;

-- name: FindByCapability :many
-- FIND by a capability alone: its agents in registration order, a page at a
-- time from agent_capabilities (schema 00014), whatever their number and
-- wherever they are in the directory; each row carries the total, counted
-- up to @cap (one round trip; an empty page asks CountByCapability).
SELECT a.id, a.name, a.description, a.capabilities, a.nick,
       (SELECT count(*) FROM (
           SELECT 1 FROM agent_capabilities t WHERE t.capability = @capability LIMIT @cap) AS s) AS total
FROM agent_capabilities c
JOIN agents a ON a.id = c.agent_id
WHERE c.capability = @capability
ORDER BY c.created_at, c.agent_id
LIMIT @lim OFFSET @off;

-- name: AgentProfileByID :one
-- The public profile of one agent, for its A2A Agent Card.
SELECT id, name, description, capabilities, created_at FROM agents WHERE id = @id;
