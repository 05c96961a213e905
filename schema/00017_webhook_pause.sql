-- +goose Up
-- A webhook whose receiver failed, or answered over the deliverer's latency
-- budget, is paused until paused_until: no delivery of it is claimed before
-- then, so a slow or failing receiver waits its backoff with all of its
-- deliveries instead of taking the deliverers' workers with each of them.
ALTER TABLE webhooks ADD COLUMN paused_until timestamptz;

-- +goose Down
ALTER TABLE webhooks DROP COLUMN paused_until;
