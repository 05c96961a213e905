-- +goose Up
-- FIND by q and a capability: the capability's agents in registration
-- order, each with its search text in the index itself, so a count stops
-- after FIND's 1,000 matches having read a few thousand index tuples and
-- no heap page (q:"chemical" + capability:"hazmat" at 1,000,000 agents:
-- 1.5 ms, where the GIN index decoded six trigram posting lists whole in
-- 14 ms; BENCHMARKS.md).
--
-- Rebuilt, not altered: 00014's trigger deleted a changed agent's rows by
-- agent_id, which no index leads with, so every registration and every
-- change of capabilities scanned the whole table (286 ms at 1,000,000
-- agents). The trigger now deletes by the primary key, from OLD's values,
-- a deleted agent's rows included; no foreign key, whose ON DELETE would
-- scan by agent_id in the same way.
DROP TRIGGER agents_capabilities_rows ON agents;
DROP FUNCTION pircan_agent_capabilities();
DROP TABLE agent_capabilities;
CREATE TABLE agent_capabilities (
    capability text NOT NULL,
    created_at timestamptz NOT NULL,
    agent_id   uuid NOT NULL,
    search     text NOT NULL,
    PRIMARY KEY (capability, created_at, agent_id) INCLUDE (search)
);
INSERT INTO agent_capabilities (capability, created_at, agent_id, search)
SELECT DISTINCT c, a.created_at, a.id, a.search FROM agents a, unnest(a.capabilities_folded) AS c;

-- +goose StatementBegin
CREATE FUNCTION pircan_agent_capabilities() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM agent_capabilities
        WHERE capability = ANY (OLD.capabilities_folded) AND created_at = OLD.created_at AND agent_id = OLD.id;
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        DELETE FROM agent_capabilities
        WHERE capability = ANY (OLD.capabilities_folded) AND created_at = OLD.created_at AND agent_id = OLD.id
          AND (NOT capability = ANY (NEW.capabilities_folded) OR NEW.created_at <> OLD.created_at);
    END IF;
    INSERT INTO agent_capabilities (capability, created_at, agent_id, search)
    SELECT DISTINCT c, NEW.created_at, NEW.id, NEW.search FROM unnest(NEW.capabilities_folded) AS c
    ON CONFLICT (capability, created_at, agent_id) DO UPDATE SET search = EXCLUDED.search
        WHERE agent_capabilities.search IS DISTINCT FROM EXCLUDED.search;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER agents_capabilities_rows AFTER INSERT OR DELETE ON agents
    FOR EACH ROW EXECUTE FUNCTION pircan_agent_capabilities();
-- A HELLO that changes nothing here (the reconnecting agent's) writes nothing.
CREATE TRIGGER agents_capabilities_changed AFTER UPDATE ON agents
    FOR EACH ROW
    WHEN ((OLD.capabilities_folded, OLD.search, OLD.created_at)
          IS DISTINCT FROM (NEW.capabilities_folded, NEW.search, NEW.created_at))
    EXECUTE FUNCTION pircan_agent_capabilities();

-- A GIN index with fastupdate keeps new entries in a pending list that every
-- search reads whole until a vacuum merges it: 1,500 changed agents made
-- each FIND by q read 266 pages more (0.6 → 1.9 ms for a rare word), and the
-- list may grow to 4 MB. The directory is searched far more often than it
-- changes, so a change pays for its own index entries.
ALTER INDEX agents_capabilities_search SET (fastupdate = off);
ALTER INDEX agents_capabilities SET (fastupdate = off);
SELECT gin_clean_pending_list('agents_capabilities_search'::regclass), gin_clean_pending_list('agents_capabilities'::regclass);

-- +goose Down
ALTER INDEX agents_capabilities RESET (fastupdate);
ALTER INDEX agents_capabilities_search RESET (fastupdate);
DROP TRIGGER agents_capabilities_changed ON agents;
DROP TRIGGER agents_capabilities_rows ON agents;
DROP FUNCTION pircan_agent_capabilities();
DROP TABLE agent_capabilities;
CREATE TABLE agent_capabilities (
    capability text NOT NULL,
    created_at timestamptz NOT NULL,
    agent_id   uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    PRIMARY KEY (capability, created_at, agent_id)
);
INSERT INTO agent_capabilities (capability, created_at, agent_id)
SELECT DISTINCT c, a.created_at, a.id FROM agents a, unnest(a.capabilities_folded) AS c;
-- +goose StatementBegin
CREATE FUNCTION pircan_agent_capabilities() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM agent_capabilities
    WHERE agent_id = NEW.id AND NOT capability = ANY (NEW.capabilities_folded);
    INSERT INTO agent_capabilities (capability, created_at, agent_id)
    SELECT DISTINCT c, NEW.created_at, NEW.id FROM unnest(NEW.capabilities_folded) AS c
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER agents_capabilities_rows AFTER INSERT OR UPDATE OF capabilities_folded ON agents
    FOR EACH ROW EXECUTE FUNCTION pircan_agent_capabilities();
