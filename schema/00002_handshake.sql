-- +goose Up
-- Contact policy (spec §3b). policy_locked: an owner chose owner-decides in
-- the portal, and only an owner may change it now.
ALTER TABLE agents
    ADD COLUMN policy text NOT NULL DEFAULT 'agent-decides'
        CHECK (policy IN ('agent-decides', 'owner-decides', 'auto-accept', 'deny')),
    ADD COLUMN policy_locked boolean NOT NULL DEFAULT false;

-- A request to agree on scopes. 'expired' is written lazily; a pending row
-- older than 7 days reads as expired everywhere (now() is the clock).
CREATE TABLE contact_requests (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    from_agent   uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    to_agent     uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    purpose      text NOT NULL,
    scopes       text[] NOT NULL,
    ttl_days     integer NOT NULL CHECK (ttl_days BETWEEN 1 AND 365),
    status       text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'accepted', 'declined', 'cancelled', 'expired')),
    -- who decided: the target agent, its owner, or its policy at once
    decided_by   text CHECK (decided_by IN ('agent', 'owner', 'policy')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    decided_at   timestamptz,
    CHECK (from_agent <> to_agent)
);
-- One pending request per pair; the insert path expires stale ones first.
CREATE UNIQUE INDEX contact_requests_one_pending ON contact_requests (from_agent, to_agent) WHERE status = 'pending';
CREATE INDEX contact_requests_from ON contact_requests (from_agent, created_at);
CREATE INDEX contact_requests_to ON contact_requests (to_agent, status, created_at);

-- An agreement: what the two agents may exchange, until expires_at or revoked.
CREATE TABLE agreements (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    -- unique: two racing ACCEPTs of one request cannot make two agreements
    request_id  uuid NOT NULL UNIQUE REFERENCES contact_requests (id) ON DELETE CASCADE,
    requester   uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    target      uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    scopes      text[] NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    revoked_at  timestamptz,
    revoked_by  uuid
);
CREATE INDEX agreements_requester ON agreements (requester, target);
CREATE INDEX agreements_target ON agreements (target, requester);

-- Direct messages. conversation_id is the id of the chain's first message;
-- hop is the reply depth (0 for a first message).
CREATE TABLE messages (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    agreement_id    uuid NOT NULL REFERENCES agreements (id) ON DELETE CASCADE,
    sender          uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    recipient       uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    conversation_id uuid NOT NULL,
    reply_to        uuid REFERENCES messages (id) ON DELETE SET NULL,
    hop             integer NOT NULL,
    text            text NOT NULL CHECK (octet_length(text) <= 60000),
    created_at      timestamptz NOT NULL DEFAULT now(),
    read_at         timestamptz
);
CREATE INDEX messages_unread ON messages (recipient, created_at, id) WHERE read_at IS NULL;
CREATE INDEX messages_conversation ON messages (conversation_id, created_at);
CREATE INDEX messages_sender ON messages (agreement_id, sender, created_at);

-- Content-free notifications, written in the same transaction as the change
-- that causes them; delivered when the agent is visible, for 24 hours.
CREATE TABLE notifications (
    id           bigserial PRIMARY KEY,
    agent_id     uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    type         text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    delivered_at timestamptz
);
CREATE INDEX notifications_waiting ON notifications (agent_id, created_at) WHERE delivered_at IS NULL;

-- Wake the IRC instance at once, whichever process wrote the row.
-- +goose StatementBegin
CREATE FUNCTION notifications_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('pircan_notify', NEW.agent_id::text);
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER notifications_wake AFTER INSERT ON notifications
    FOR EACH ROW EXECUTE FUNCTION notifications_wake();

-- +goose Down
DROP TABLE notifications, messages, agreements, contact_requests;
DROP FUNCTION notifications_wake;
ALTER TABLE agents DROP COLUMN policy, DROP COLUMN policy_locked;
