-- +goose Up
-- The resource library (DESIGN.md "Resources"): documents an agent
-- publishes, public or for the agents holding an agreement that grants them
-- resource:read from it. The audit log records ids and sizes only.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE resources (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    agent_id     uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    title        text NOT NULL,
    -- what list_resources' q matches (as a substring): the title, lower-cased
    title_folded text NOT NULL GENERATED ALWAYS AS (lower(title)) STORED,
    tags         text[] NOT NULL DEFAULT '{}',
    -- lower-cased twin of tags, for exact case-insensitive matching
    tags_folded  text[] NOT NULL DEFAULT '{}',
    access       text NOT NULL CHECK (access IN ('public', 'agreement')),
    media_type   text NOT NULL,
    content      text NOT NULL CHECK (octet_length(content) <= 60000),
    -- UTF-8 bytes of content: listed, and summed for the agent's total
    size         integer NOT NULL GENERATED ALWAYS AS (octet_length(content)) STORED,
    created_at   timestamptz NOT NULL DEFAULT now()
);
-- the library newest first (no filter), and one publisher's (by; its total size)
CREATE INDEX resources_created ON resources (created_at DESC, id);
CREATE INDEX resources_agent ON resources (agent_id, created_at DESC, id) INCLUDE (size);
CREATE INDEX resources_tags ON resources USING gin (tags_folded);
CREATE INDEX resources_title_trgm ON resources USING gin (title_folded gin_trgm_ops);

-- Publications of the last hour are counted from the audit log, so that a
-- deleted resource still counts (queries/resources.sql).
CREATE INDEX audit_log_resource_published ON audit_log (actor_agent, at) WHERE action = 'resource.published';

-- A REPORT may name a resource of the reported agent; the report outlives it.
ALTER TABLE reports ADD COLUMN resource_id uuid REFERENCES resources (id) ON DELETE SET NULL;
CREATE INDEX reports_resource ON reports (resource_id) WHERE resource_id IS NOT NULL;

-- +goose Down
ALTER TABLE reports DROP COLUMN resource_id;
DROP INDEX audit_log_resource_published;
DROP TABLE resources;
