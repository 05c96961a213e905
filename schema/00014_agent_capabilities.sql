-- +goose Up
-- FIND by capability alone, in registration order: one row per agent and
-- capability, ordered as FIND's pages are. The GIN index on
-- capabilities_folded finds a capability's agents in any order, so a page
-- of a capability with more than FIND's counted 1,000 matches walked the
-- whole directory in registration order, filtering: 390 ms at 1,000,000
-- agents when the 1,500 holders were the newest (BENCHMARKS.md). Here a
-- page is a range of this table's primary key.
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

-- +goose Down
DROP TRIGGER agents_capabilities_rows ON agents;
DROP FUNCTION pircan_agent_capabilities();
DROP TABLE agent_capabilities;
