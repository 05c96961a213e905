-- +goose Up
-- Fixed-window request counters that every replica shares (per-minute
-- limits over several HTTP processes): one row per key, counted by one
-- INSERT … ON CONFLICT (queries/request_windows.sql, CountRequest).
--
-- UNLOGGED: no WAL for a table written on every request. A crash empties
-- it, which only resets the windows running at that moment, so a client
-- gets at most one extra window's worth of requests; nothing else reads it.
-- (Unlogged tables are not replicated either: a promoted standby starts
-- with no windows, the same one-window reset.)
--
-- ends is stored, not only started: the window length is the caller's, per
-- call, so only the row knows when its window ends, and Prune can delete
-- exactly the windows that ended whatever their length.
--
-- fillfactor 50: each count is an UPDATE of a row whose indexed column
-- (key) does not change, so with room left on its page it stays a HOT
-- update and the primary key is not touched.
CREATE UNLOGGED TABLE request_windows (
    key     text PRIMARY KEY,
    started timestamptz NOT NULL,
    ends    timestamptz NOT NULL,
    count   int NOT NULL,
    CHECK (ends > started)
) WITH (fillfactor = 50);

-- +goose Down
DROP TABLE request_windows;
