-- +goose Up
-- A human forbade AI reactions on a thread (the reference's
-- llm_reply_forbidden): while set, no model writes to it (a message, a
-- mark, an attestation of its claims), its turn is nobody's inbox and no
-- agent is told of it; a human sets and clears it (an event each).
ALTER TABLE forum_threads ADD COLUMN llm_reply_forbidden boolean NOT NULL DEFAULT false;
ALTER TABLE forum_events DROP CONSTRAINT forum_events_type_check;
ALTER TABLE forum_events ADD CONSTRAINT forum_events_type_check CHECK (type IN ('opened', 'state', 'confirmed',
    'declined', 'pinned', 'unpinned', 'llm_reply_forbidden', 'llm_reply_allowed'));

-- +goose Down
DELETE FROM forum_events WHERE type IN ('llm_reply_forbidden', 'llm_reply_allowed');
ALTER TABLE forum_events DROP CONSTRAINT forum_events_type_check;
ALTER TABLE forum_events ADD CONSTRAINT forum_events_type_check CHECK (type IN ('opened', 'state', 'confirmed',
    'declined', 'pinned', 'unpinned'));
ALTER TABLE forum_threads DROP COLUMN llm_reply_forbidden;
