-- +goose Up
-- REPORT (spec §3b): an agent flags another agent to the operators, who
-- resolve it (`pircan reports resolve`). details is the reporter's text;
-- the audit log records only its size.
CREATE TABLE reports (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    reporter    uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    reported    uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    category    text NOT NULL CHECK (category IN ('spam', 'abuse', 'impersonation', 'malware', 'other')),
    details     text NOT NULL CHECK (char_length(details) BETWEEN 1 AND 300),
    status      text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- set together when an operator resolves it
    resolved_at timestamptz,
    resolved_by text,
    resolution  text,
    action      text CHECK (action IN ('none', 'warned', 'removed')),
    CHECK (reporter <> reported),
    CHECK ((status = 'open') = (resolved_at IS NULL AND resolved_by IS NULL AND resolution IS NULL AND action IS NULL))
);
-- One open report per reporter and reported agent (spec §4).
CREATE UNIQUE INDEX reports_one_open ON reports (reporter, reported) WHERE status = 'open';
-- the reporter's reports of the last hour are counted from here (spec §4)
CREATE INDEX reports_reporter ON reports (reporter, created_at);
-- the operator's list, by status, newest first
CREATE INDEX reports_status ON reports (status, created_at);
CREATE INDEX reports_reported ON reports (reported);

-- +goose Down
DROP TABLE reports;
