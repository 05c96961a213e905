-- name: CountWebhooks :one
-- Disabled webhooks count too: they stay until their agent deletes them.
SELECT count(*) FROM webhooks WHERE agent_id = @agent_id;

-- name: InsertWebhook :one
INSERT INTO webhooks (agent_id, url, secret) VALUES (@agent_id, @url, @secret)
RETURNING id, created_at;

-- name: ListWebhooks :many
SELECT id, agent_id, url, created_at, failures, last_error, disabled_at
FROM webhooks WHERE agent_id = @agent_id ORDER BY created_at, id;

-- name: DeleteWebhook :one
DELETE FROM webhooks WHERE id = @id AND agent_id = @agent_id RETURNING url;

-- name: ClaimDeliveries :many
-- Takes up to max_rows due deliveries and leases them (next_attempt_at =
-- lease_until) in one statement: SKIP LOCKED lets any number of deliverers
-- claim at once without waiting on or taking each other's rows, and the
-- lease keeps a claimed row from being claimed again while it is POSTed; a
-- deliverer that dies mid-POST only delays it until the lease ends. Of one
-- webhook at most per_webhook are on the wire in this deliverer:
-- busy_ids/busy_counts say how many it has already. Only the oldest
-- candidates due rows are ranked (by the due index), so a claim costs the
-- same whatever the backlog: a webhook has at most one row per type, so
-- enough of them are claimable (the deliverer asks for several times
-- max_rows plus its busy webhooks). A paused webhook's rows were deferred
-- with it (DeferWebhookDeliveries); the check here is for a race.
WITH inflight AS (
    SELECT unnest(@busy_ids::uuid[]) AS webhook_id, unnest(@busy_counts::int[]) AS n
), candidates AS (
    SELECT d.id, d.webhook_id, d.next_attempt_at
    FROM webhook_deliveries d
    WHERE d.next_attempt_at <= @now AND d.first_at > @expired_before
    ORDER BY d.next_attempt_at
    LIMIT @candidates
), ranked AS (
    SELECT c.id, c.next_attempt_at,
           row_number() OVER (PARTITION BY c.webhook_id ORDER BY c.next_attempt_at, c.id) + coalesce(i.n, 0) AS slot
    FROM candidates c
    JOIN webhooks w ON w.id = c.webhook_id
    LEFT JOIN inflight i ON i.webhook_id = c.webhook_id
    WHERE w.disabled_at IS NULL AND (w.paused_until IS NULL OR w.paused_until <= @now)
), due AS (
    SELECT d.id FROM webhook_deliveries d JOIN ranked r ON r.id = d.id
    WHERE r.slot <= @per_webhook::int AND d.next_attempt_at <= @now
    ORDER BY r.next_attempt_at
    LIMIT @max_rows
    FOR UPDATE OF d SKIP LOCKED
)
UPDATE webhook_deliveries d SET next_attempt_at = @lease_until
FROM due, webhooks w
WHERE d.id = due.id AND w.id = d.webhook_id
RETURNING d.id, d.type, d.attempts, d.events, d.first_at, w.id AS webhook_id, w.url, w.secret, w.agent_id;

-- name: DeleteDelivered :execrows
-- The delivery is done unless an event came in while it was on the wire.
DELETE FROM webhook_deliveries WHERE id = @id AND events = @events;

-- name: RequeueDelivered :exec
-- An event came in during a successful POST: a new delivery (new id) of
-- the type is due at once, with the count as of then.
UPDATE webhook_deliveries SET id = gen_random_uuid(), events = 1, attempts = 0,
    first_at = now(), next_attempt_at = now()
WHERE id = @id;

-- name: WebhookSucceeded :exec
UPDATE webhooks SET failures = 0 WHERE id = @id;

-- name: RetryDelivery :exec
UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = @next_attempt_at WHERE id = @id;

-- name: WebhookFailed :one
UPDATE webhooks SET failures = failures + 1, last_error = @last_error WHERE id = @id
RETURNING failures, agent_id, url;

-- name: PauseWebhook :exec
UPDATE webhooks SET paused_until = @paused_until WHERE id = @id;

-- name: DeferWebhookDeliveries :exec
-- A paused webhook's deliveries wait with it: out of the due range, so
-- claims never walk past them.
UPDATE webhook_deliveries SET next_attempt_at = @paused_until
WHERE webhook_id = @webhook_id AND next_attempt_at < @paused_until;

-- name: DisableWebhook :exec
UPDATE webhooks SET disabled_at = now() WHERE id = @id;

-- name: DropWebhookDeliveries :exec
DELETE FROM webhook_deliveries WHERE webhook_id = @webhook_id;

-- name: DropExpiredDeliveries :execrows
-- Deliveries that could not be made within their time (first_at before
-- @before), and any left for a disabled webhook by an event racing its
-- disabling.
DELETE FROM webhook_deliveries d
WHERE d.first_at < @before
   OR EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.disabled_at IS NOT NULL);
