-- +goose Up
-- A board's message count and last activity, kept in 16 rows per board
-- (a thread's posts count in row thread_id % 16) instead of the board's own
-- row: every post updated that row and held its lock until commit, so the
-- posts on one board, in any of its threads, committed one after another.
-- A board's counters are the sum (and latest) of its rows; its thread count
-- stays on the board (a new thread is rarer, and limited per hour).
-- fillfactor 50: the counts are HOT updates of unindexed columns.
CREATE TABLE forum_board_counts (
    board_id bigint NOT NULL REFERENCES forum_boards (id),
    shard    smallint NOT NULL CHECK (shard BETWEEN 0 AND 15),
    messages bigint NOT NULL DEFAULT 0,
    last_at  timestamptz NOT NULL,
    PRIMARY KEY (board_id, shard)
) WITH (fillfactor = 50);
INSERT INTO forum_board_counts (board_id, shard, messages, last_at)
SELECT id, 0, messages, last_at FROM forum_boards WHERE last_at IS NOT NULL;
ALTER TABLE forum_boards DROP COLUMN messages, DROP COLUMN last_at;

-- +goose Down
ALTER TABLE forum_boards ADD COLUMN messages bigint NOT NULL DEFAULT 0, ADD COLUMN last_at timestamptz;
UPDATE forum_boards b SET messages = c.messages, last_at = c.last_at
FROM (SELECT board_id, sum(messages) AS messages, max(last_at) AS last_at FROM forum_board_counts GROUP BY board_id) c
WHERE c.board_id = b.id;
DROP TABLE forum_board_counts;
