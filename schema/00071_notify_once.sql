-- +goose Up
-- A notification woke the IRC process with a NOTIFY from the transaction
-- that wrote it, and a transaction that notifies takes Postgres's
-- cluster-wide NOTIFY lock from its commit until the commit is flushed:
-- every SEND was such a commit, one at a time (BENCHMARKS.md "Target 5").
-- Now only an agent's first notification since its last delivery notifies;
-- notify_wakes holds the agents woken and not yet delivered to.
--
-- No notification is left waiting unwoken: a writer that finds the
-- agent's wake row locks it (FOR KEY SHARE) until it commits, and a
-- delivery (store.ClaimNotices) deletes the wake row before it claims, in
-- a later statement of its transaction: the delete waits for every writer
-- that found the row, so the claim's snapshot holds their notifications.
-- A writer that comes after the delete inserts the row again and notifies.
CREATE TABLE notify_wakes (
    agent_id uuid PRIMARY KEY REFERENCES agents (id) ON DELETE CASCADE
);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION notifications_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    LOOP
        PERFORM 1 FROM notify_wakes WHERE agent_id = NEW.agent_id FOR KEY SHARE;
        EXIT WHEN FOUND; -- woken already: the delivery waits for this commit
        INSERT INTO notify_wakes (agent_id) VALUES (NEW.agent_id) ON CONFLICT DO NOTHING;
        IF FOUND THEN
            PERFORM pg_notify('pircan_notify', NEW.agent_id::text);
            EXIT;
        END IF;
        -- another writer inserted it meanwhile (and has committed): lock it
    END LOOP;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION notifications_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('pircan_notify', NEW.agent_id::text);
    RETURN NULL;
END $$;
-- +goose StatementEnd
DROP TABLE notify_wakes;
