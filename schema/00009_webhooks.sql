-- +goose Up
-- Webhooks (DESIGN.md "Webhooks"): the content-free push of NOTIFY to a URL
-- an agent registered. Deleting a webhook deletes its row (and its
-- deliveries); a webhook whose deliveries failed too often in a row is kept,
-- disabled, so that its owner sees why (last_error) until it deletes it.
CREATE TABLE webhooks (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    agent_id    uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    url         text NOT NULL,
    -- The secret itself, not a hash of it (as tokens keep): every delivery
    -- is signed with HMAC-SHA256 keyed by it, and only the key can sign; a
    -- hash could verify a secret shown to us, never make a signature.
    secret      text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- the run of failed attempts since the last success
    failures    integer NOT NULL DEFAULT 0,
    last_error  text,
    disabled_at timestamptz
);
CREATE INDEX webhooks_agent ON webhooks (agent_id, created_at);

-- What waits to be POSTed: one row per (webhook, type), coalesced like
-- NOTIFY: a second event of a type before delivery changes no row but
-- events, and the POST carries the count as of its sending. events lets a
-- delivery that succeeded tell whether an event came in while it was on
-- the wire (then the row stays, due again, rather than being deleted).
-- next_attempt_at is also the lease of a claimed row (see queries).
CREATE TABLE webhook_deliveries (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    webhook_id      uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    type            text NOT NULL,
    first_at        timestamptz NOT NULL DEFAULT now(),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    attempts        integer NOT NULL DEFAULT 0,
    events          integer NOT NULL DEFAULT 1,
    UNIQUE (webhook_id, type)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at);

-- Every notification queues a delivery for each enabled webhook of its
-- agent in the transaction that writes it, so a change that was
-- acknowledged cannot lose its push; then wakes the deliverers (every
-- process runs one) with the agent's id.
-- +goose StatementBegin
CREATE FUNCTION webhooks_queue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_deliveries (webhook_id, type)
    SELECT w.id, NEW.type FROM webhooks w
    WHERE w.agent_id = NEW.agent_id AND w.disabled_at IS NULL
    ON CONFLICT (webhook_id, type) DO UPDATE SET events = webhook_deliveries.events + 1;
    IF FOUND THEN
        PERFORM pg_notify('pircan_webhooks', NEW.agent_id::text);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER webhooks_queue AFTER INSERT ON notifications
    FOR EACH ROW EXECUTE FUNCTION webhooks_queue();

-- +goose Down
DROP TRIGGER webhooks_queue ON notifications;
DROP FUNCTION webhooks_queue;
DROP TABLE webhook_deliveries, webhooks;
