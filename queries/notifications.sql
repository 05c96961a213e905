-- name: InsertNotification :exec
INSERT INTO notifications (agent_id, type) VALUES (@agent_id, @type);

-- name: ClaimNotifications :many
-- Takes every waiting notification of the last 24 hours for delivery.
UPDATE notifications SET delivered_at = now()
WHERE agent_id = @agent_id AND delivered_at IS NULL AND created_at > now() - @lifetime::interval
RETURNING type;

-- name: AgentsWithWaitingNotifications :many
SELECT DISTINCT agent_id FROM notifications
WHERE delivered_at IS NULL AND created_at > now() - @lifetime::interval;

-- name: AccountsOfAgent :many
SELECT account FROM agent_accounts WHERE agent_id = @agent_id ORDER BY bound_at;

-- name: CountWaitingNotifications :one
-- Notifications waiting for delivery, counted up to max_rows (a cheap gauge
-- for /metrics: it scans at most that many rows of the partial index).
SELECT count(*) FROM (
    SELECT 1 FROM notifications
    WHERE delivered_at IS NULL AND created_at > now() - @lifetime::interval
    LIMIT @max_rows
) AS waiting;

-- name: ReleaseNotifyWake :exec
-- Before a claim, in its transaction (schema 00071): waits for the writers
-- that found the wake row, and lets the next notification wake again.
DELETE FROM notify_wakes WHERE agent_id = @agent_id;
