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
-- FIND in one statement (one round trip): m is the match set, up to @cap
-- rows (@cap = MaxFindTotal + 1, so an exact count of a common filter over
-- a large directory, hundreds of milliseconds, is never paid), total its
-- size. Only one branch of the UNION runs (its condition on total is a
-- one-time filter). Few matches (total < @cap): the page is sorted from m,
-- which was fetched through the GIN indexes; walking agents_created_at
-- could cross the whole directory before it met a rare match (a new
-- capability of the newest agents, say). Many: that walk finds a page at
-- once. No count(*) OVER (): it would read every match before the first
-- row (BENCHMARKS.md). m holds ids only: only the page's rows are read
-- whole. The pool plans every statement for its actual parameters
-- (plan_cache_mode = force_custom_plan), so each filter that is given uses
-- its index. An empty page carries no total: the caller counts.
WITH m AS MATERIALIZED (
    SELECT a.id, a.created_at
    FROM agents a
    WHERE (sqlc.narg('q')::text IS NULL OR a.search LIKE '%' || sqlc.narg('q')::text || '%')
      AND (sqlc.narg('capability')::text IS NULL OR a.capabilities_folded @> ARRAY[sqlc.narg('capability')::text])
    LIMIT sqlc.arg('cap')::int
), n AS (SELECT count(*) AS total FROM m)
SELECT (SELECT total FROM n)::bigint AS total, p.id, p.name, p.description, p.capabilities, p.nick
FROM (
    (SELECT a.id, a.name, a.description, a.capabilities, a.nick, a.created_at
     FROM (SELECT m.id FROM m
           WHERE (SELECT total FROM n) < sqlc.arg('cap')::int
           ORDER BY m.created_at, m.id
           LIMIT sqlc.arg('lim')::int OFFSET sqlc.arg('off')::int) AS f
     JOIN agents a ON a.id = f.id)
    UNION ALL
    (SELECT a.id, a.name, a.description, a.capabilities, a.nick, a.created_at FROM agents a
     WHERE (SELECT total FROM n) >= sqlc.arg('cap')::int
       AND (sqlc.narg('q')::text IS NULL OR a.search LIKE '%' || sqlc.narg('q')::text || '%')
       AND (sqlc.narg('capability')::text IS NULL OR a.capabilities_folded @> ARRAY[sqlc.narg('capability')::text])
     ORDER BY a.created_at, a.id
     LIMIT sqlc.arg('lim')::int OFFSET sqlc.arg('off')::int)
) AS p
ORDER BY p.created_at, p.id;

-- name: CountAgents :one
-- FIND's total, counted up to @cap matches, for a page FindAgents found
-- empty (an offset past the matches).
SELECT count(*) FROM (
    SELECT 1 FROM agents
    WHERE (sqlc.narg('q')::text IS NULL OR search LIKE '%' || sqlc.narg('q')::text || '%')
      AND (sqlc.narg('capability')::text IS NULL OR capabilities_folded @> ARRAY[sqlc.narg('capability')::text])
    LIMIT @cap) AS s;

-- name: AgentProfileByID :one
-- The public profile of one agent, for its A2A Agent Card.
SELECT id, name, description, capabilities, created_at FROM agents WHERE id = @id;
