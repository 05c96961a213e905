-- +goose Up
-- Tasks between agents (DESIGN.md "Tasks"): a requester asks a target for a
-- task under the agreement that grants it task:<skill>; the target answers
-- it, or the requester cancels it while open. The audit log records ids
-- and sizes only.
CREATE TABLE tasks (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    requester    uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    target       uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    -- the agreement that granted it; a later revoke or expiry leaves the
    -- task answerable and cancellable
    agreement_id uuid NOT NULL REFERENCES agreements (id) ON DELETE CASCADE,
    skill        text NOT NULL,
    text         text NOT NULL CHECK (octet_length(text) <= 60000),
    state        text NOT NULL DEFAULT 'open'
        CHECK (state IN ('open', 'completed', 'failed', 'rejected', 'canceled')),
    answer       text CHECK (octet_length(answer) <= 60000),
    created_at   timestamptz NOT NULL DEFAULT now(),
    -- when it left open (answered or canceled)
    answered_at  timestamptz,
    CHECK (requester <> target),
    CHECK ((state = 'open') = (answered_at IS NULL))
);
-- the target's open tasks, oldest or newest first (and task_request's count)
CREATE INDEX tasks_target_open ON tasks (target, created_at, id) WHERE state = 'open';
-- the target's tasks of any state (list_tasks incoming with a status)
CREATE INDEX tasks_target ON tasks (target, created_at DESC, id);
-- the requester's tasks newest first, and its tasks of the last hour (TasksHour)
CREATE INDEX tasks_requester ON tasks (requester, created_at DESC, id);
-- agreements' cascade deletes
CREATE INDEX tasks_agreement ON tasks (agreement_id);

-- +goose Down
DROP TABLE tasks;
