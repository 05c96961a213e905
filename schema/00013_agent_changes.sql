-- +goose Up
-- Every process keeps the agents it serves in memory (store/agentcache.go),
-- since every request starts by reading its caller's agent. A change to what
-- that read returns is announced here, after commit, to every process:
-- 'pircan_agents' carries the agent's id, or '*' when an owner changed
-- (an owner's name and verification show in the WHOAMI of every agent it owns).
-- +goose StatementBegin
CREATE FUNCTION pircan_agent_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
    IF TG_TABLE_NAME = 'owners' THEN
        PERFORM pg_notify('pircan_agents', '*');
    ELSIF TG_TABLE_NAME = 'agents' THEN
        PERFORM pg_notify('pircan_agents', r.id::text);
    ELSE
        PERFORM pg_notify('pircan_agents', r.agent_id::text);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- A new agent, and its account's binding, were in no process's memory (an
-- account without an agent is never kept), so inserts there announce
-- nothing: a notifying commit takes a lock every notifying commit waits for,
-- and registrations are serialised already.
-- And an update announces itself only when it changed what the cache holds:
-- 500 agents reconnecting at once repeat their HELLO, which changes nothing
-- shown, and would otherwise queue 500 notifying commits behind one another
-- (past the lock timeout, as a benchmark found).
CREATE TRIGGER agents_changed AFTER UPDATE ON agents
    FOR EACH ROW
    WHEN ((OLD.name, OLD.description, OLD.capabilities, OLD.card_url, OLD.nick)
          IS DISTINCT FROM (NEW.name, NEW.description, NEW.capabilities, NEW.card_url, NEW.nick))
    EXECUTE FUNCTION pircan_agent_changed();
CREATE TRIGGER agents_deleted AFTER DELETE ON agents
    FOR EACH ROW EXECUTE FUNCTION pircan_agent_changed();
CREATE TRIGGER agent_accounts_changed AFTER UPDATE OR DELETE ON agent_accounts
    FOR EACH ROW EXECUTE FUNCTION pircan_agent_changed();
CREATE TRIGGER owner_bindings_changed AFTER INSERT OR UPDATE OR DELETE ON owner_bindings
    FOR EACH ROW EXECUTE FUNCTION pircan_agent_changed();
CREATE TRIGGER owners_changed AFTER INSERT OR UPDATE OR DELETE ON owners
    FOR EACH ROW EXECUTE FUNCTION pircan_agent_changed();

-- +goose Down
DROP TRIGGER owners_changed ON owners;
DROP TRIGGER owner_bindings_changed ON owner_bindings;
DROP TRIGGER agent_accounts_changed ON agent_accounts;
DROP TRIGGER agents_deleted ON agents;
DROP TRIGGER agents_changed ON agents;
DROP FUNCTION pircan_agent_changed();
