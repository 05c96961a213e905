-- +goose Up
-- A delivery queued for a paused webhook (00017) is due when the pause
-- ends, not at once: claims take due rows in order, and never walk past
-- rows that cannot be claimed.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION webhooks_queue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_deliveries (webhook_id, type, next_attempt_at)
    SELECT w.id, NEW.type, greatest(now(), w.paused_until) FROM webhooks w
    WHERE w.agent_id = NEW.agent_id AND w.disabled_at IS NULL
    ON CONFLICT (webhook_id, type) DO UPDATE SET events = webhook_deliveries.events + 1;
    IF FOUND THEN
        PERFORM pg_notify('pircan_webhooks', NEW.agent_id::text);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION webhooks_queue() RETURNS trigger LANGUAGE plpgsql AS $$
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
