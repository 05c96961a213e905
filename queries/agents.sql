-- name: AgentByAccount :one
SELECT a.id, a.name, a.description, a.capabilities, a.card_url, a.nick, a.created_at, b.account
FROM agent_accounts b JOIN agents a ON a.id = b.agent_id
WHERE b.account_folded = @account_folded;

-- name: LockRegistrations :exec
-- Serialises new registrations so the hourly count below cannot be raced.
SELECT pg_advisory_xact_lock(7340001);

-- name: CountRecentRegistrations :one
SELECT count(*) FROM agents WHERE created_at > now() - @span::interval;

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
-- FIND by q with more matches than it counts, or by nothing: a walk in
-- registration order meets a page at once. Planned per call
-- (store.perCallPlans), the pattern optional.
SELECT id, name, description, capabilities, nick
FROM agents
WHERE (sqlc.narg('pattern')::text IS NULL OR search LIKE sqlc.narg('pattern')::text)
ORDER BY created_at, id
LIMIT @lim OFFSET @off;

-- name: FindFewAgents :many
-- FIND by q (and a capability) with few matches (counted first): the sort key is
-- an expression so the planner cannot walk agents_created_at, where a rare
-- match among the newest agents would cost a scan of the whole directory;
-- it takes the GIN indexes and sorts the few rows.
SELECT id, name, description, capabilities, nick
FROM agents
WHERE search LIKE @pattern::text
  AND (sqlc.narg('capability')::text IS NULL OR capabilities_folded @> ARRAY[sqlc.narg('capability')::text])
ORDER BY created_at + interval '0 seconds', id
LIMIT @lim OFFSET @off;

-- name: CountAgents :one
-- FIND's total with no filter, counted up to @cap.
SELECT count(*) FROM (SELECT 1 FROM agents LIMIT @cap) AS s;

-- name: SampleTextMatches :one
-- FIND's first look at a text: of the first @sample agents as the table
-- lies, how many there were and how many match (store/find.go).
SELECT count(*) AS seen, count(*) FILTER (WHERE search LIKE @pattern::text) AS matches
FROM (SELECT search FROM agents LIMIT @sample) AS s;

-- name: SampleCapabilityTextMatches :one
-- SampleTextMatches among a capability's first @sample agents, from
-- agent_capabilities' index alone.
SELECT count(*) AS seen, count(*) FILTER (WHERE search LIKE @pattern::text) AS matches
FROM (SELECT search FROM agent_capabilities WHERE capability = @capability
      ORDER BY created_at, agent_id LIMIT @sample) AS s;

-- name: WalkCountText :one
-- FIND's total for a common text: matches among at most @walk agents,
-- counted up to @cap.
SELECT count(*) FROM (
    SELECT 1 FROM (SELECT search FROM agents LIMIT @walk) AS s
    WHERE search LIKE @pattern::text LIMIT @cap) AS m;

-- name: WalkCountCapabilityText :one
-- WalkCountText among a capability's agents in registration order, from
-- agent_capabilities' index alone.
SELECT count(*) FROM (
    SELECT 1 FROM (SELECT search FROM agent_capabilities WHERE capability = @capability
                   ORDER BY created_at, agent_id LIMIT @walk) AS s
    WHERE search LIKE @pattern::text LIMIT @cap) AS m;

-- name: CountTextIndexed :one
-- FIND's total for a text a walk would not meet often, counted up to @cap.
-- The match set is a MATERIALIZED CTE so that the planner prices it whole
-- and takes the GIN index; seeing the LIMIT it prices a walk of the table
-- as nearly free and takes that instead (q:"map": 34,500 agents read,
-- 9–24 ms, where the index takes 4–6 ms). Its rows are still read only
-- until @cap. A text with no trigram (two letters) is one the index cannot
-- narrow, and the planner walks then.
WITH m AS MATERIALIZED (
    SELECT 1 FROM agents
    WHERE search LIKE @pattern::text
      AND (sqlc.narg('capability')::text IS NULL OR capabilities_folded @> ARRAY[sqlc.narg('capability')::text]))
SELECT count(*) FROM (SELECT 1 FROM m LIMIT @cap) AS s;

-- name: FindByCapabilityText :many
-- FIND by q and a capability with more matches than it counts: the
-- capability's agents in registration order, the text checked in the index.
SELECT a.id, a.name, a.description, a.capabilities, a.nick
FROM agent_capabilities c
JOIN agents a ON a.id = c.agent_id
WHERE c.capability = @capability AND c.search LIKE @pattern::text
ORDER BY c.created_at, c.agent_id
LIMIT @lim OFFSET @off;

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
