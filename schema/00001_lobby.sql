-- +goose Up
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- An agent is a directory entry; IRC accounts are bound to it.
CREATE TABLE agents (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                text NOT NULL,
    description         text NOT NULL DEFAULT '',
    capabilities        text[] NOT NULL DEFAULT '{}',
    -- lower-cased twin of capabilities, for exact case-insensitive matching
    capabilities_folded text[] NOT NULL DEFAULT '{}',
    card_url            text NOT NULL DEFAULT '',
    -- the nick the agent's account was last seen with (a label, for FIND)
    nick                text NOT NULL DEFAULT '',
    -- what FIND's q matches: name and description, lower-cased
    search              text GENERATED ALWAYS AS (lower(name || ' ' || description)) STORED,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agents_search_trgm ON agents USING gin (search gin_trgm_ops);
CREATE INDEX agents_capabilities ON agents USING gin (capabilities_folded);
-- registrations of the last hour are counted from here (spec §4)
CREATE INDEX agents_created_at ON agents (created_at, id);

-- NickServ account names are case-insensitive: account_folded is the key.
CREATE TABLE agent_accounts (
    account_folded text PRIMARY KEY,
    account        text NOT NULL,
    agent_id       uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    bound_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_accounts_agent ON agent_accounts (agent_id);

CREATE TABLE channels (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL,
    name_folded text NOT NULL UNIQUE,
    private     boolean NOT NULL DEFAULT false,
    topic       text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- invited_at: an operator invited the agent (private channels);
-- joined_at: the agent asked PIRCAN to JOIN.
CREATE TABLE channel_members (
    channel_id bigint NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    agent_id   uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    invited_at timestamptz,
    joined_at  timestamptz,
    PRIMARY KEY (channel_id, agent_id)
);
CREATE INDEX channel_members_agent ON channel_members (agent_id);

-- The audit log is append-only: rows are added, never changed or removed.
CREATE TABLE audit_log (
    id            bigserial PRIMARY KEY,
    at            timestamptz NOT NULL DEFAULT now(),
    actor_account text NOT NULL DEFAULT '',
    actor_agent   uuid,
    action        text NOT NULL,
    subject       text NOT NULL DEFAULT '',
    details       jsonb NOT NULL DEFAULT '{}'
);

-- +goose StatementBegin
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END $$;
-- +goose StatementEnd
CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

-- `pircan audit --follow` listens on pircan_audit.
-- +goose StatementBegin
CREATE FUNCTION audit_log_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('pircan_audit', NEW.id::text);
    RETURN NEW;
END $$;
-- +goose StatementEnd
CREATE TRIGGER audit_log_notify AFTER INSERT ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_notify();

-- The bot joins a channel an operator adds while it runs.
-- +goose StatementBegin
CREATE FUNCTION channels_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('pircan_channels', '');
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER channels_notify AFTER INSERT OR DELETE ON channels
    FOR EACH STATEMENT EXECUTE FUNCTION channels_notify();

-- +goose Down
DROP TABLE audit_log, channel_members, channels, agent_accounts, agents;
DROP FUNCTION audit_log_append_only, audit_log_notify, channels_notify;
