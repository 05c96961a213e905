-- The Parley forum (DESIGN.md "Phase 3"). A write takes the writing
-- account's transaction-scoped advisory lock first (LockForumLine), so its
-- hourly and daily counts cannot be beaten by racing writes from several
-- replicas; a change of a thread locks the thread's row (LockForumThread),
-- so the rules the core runs on it see every earlier change.

-- name: LockForumLine :exec
SELECT pg_advisory_xact_lock(hashtextextended('forum:' || @account_folded::text, 0));

-- name: CountForumMessagesLastHour :one
-- Each counted limit's query also reads wait_us: the time until its oldest
-- counted row leaves the window (the refusal's retry_after), in the same read.
-- The window (@span, the core's) is named once, in w: sqlc v1.31 garbles
-- this statement when it names a parameter twice.
WITH w AS (SELECT now() - @span::interval AS since)
SELECT count(*) AS n, COALESCE(ceil(date_part('epoch', min(created_at) - (SELECT since FROM w)) * 1000000), 0)::bigint AS wait_us
FROM forum_messages WHERE author_folded = @author_folded AND created_at > (SELECT since FROM w);

-- name: CountForumThreadsLastHour :one
WITH w AS (SELECT now() - @span::interval AS since)
SELECT count(*) AS n, COALESCE(ceil(date_part('epoch', min(created_at) - (SELECT since FROM w)) * 1000000), 0)::bigint AS wait_us
FROM forum_threads WHERE creator_folded = @creator_folded AND created_at > (SELECT since FROM w);

-- name: CountForumBoardsLastDay :one
WITH w AS (SELECT now() - @span::interval AS since)
SELECT count(*) AS n, COALESCE(ceil(date_part('epoch', min(created_at) - (SELECT since FROM w)) * 1000000), 0)::bigint AS wait_us
FROM forum_boards WHERE created_by = @created_by AND created_by <> '' AND created_at > (SELECT since FROM w);

-- name: ListForumBoards :many
-- Boards with their counters (the sum and latest of their count rows;
-- 'epoch' for a board without messages).
SELECT sqlc.embed(b), coalesce(c.messages, 0)::bigint AS messages, coalesce(c.last_at, 'epoch')::timestamptz AS last_at,
       count(*) OVER () AS total
FROM forum_boards b
LEFT JOIN LATERAL (SELECT sum(messages) AS messages, max(last_at) AS last_at
                   FROM forum_board_counts WHERE board_id = b.id) c ON true
ORDER BY b.id LIMIT @lim OFFSET @off;

-- name: CountForumBoards :one
SELECT count(*) FROM forum_boards;

-- name: ForumBoardByID :one
SELECT * FROM forum_boards WHERE id = @id;

-- name: ForumBoardBySlug :one
SELECT * FROM forum_boards WHERE slug = @slug;

-- name: ForumBoardCounts :one
-- A board's message count and last activity: its count rows (16 at most);
-- 'epoch' for a board without messages.
SELECT coalesce(sum(messages), 0)::bigint AS messages, coalesce(max(last_at), 'epoch')::timestamptz AS last_at
FROM forum_board_counts WHERE board_id = @board_id;

-- name: InsertForumBoard :one
INSERT INTO forum_boards (slug, name, description, created_by)
VALUES (@slug, @name, @description, @created_by)
RETURNING *;

-- name: LockForumBoard :one
SELECT id FROM forum_boards WHERE id = @id FOR NO KEY UPDATE;

-- name: ForumBoardThreadAdded :exec
-- A new thread on a board (its row is locked already: LockForumBoard).
UPDATE forum_boards SET threads = threads + 1 WHERE id = @id;

-- name: ForumBoardMessageCounted :exec
-- A message on a board, counted in the row of its thread's shard: posts to
-- other threads of the board count in other rows, and do not wait.
INSERT INTO forum_board_counts (board_id, shard, messages, last_at) VALUES (@board_id, @shard, 1, now())
ON CONFLICT (board_id, shard) DO UPDATE SET messages = forum_board_counts.messages + 1, last_at = now();

-- name: NextForumThreadID :one
-- A new thread's id, taken with the post's first reads, so that its
-- statements can be sent at once (store/pipe.go).
SELECT nextval(pg_get_serial_sequence('forum_threads', 'id'))::bigint AS id;

-- name: InsertForumThread :exec
INSERT INTO forum_threads (id, board_id, creator_account, creator_folded, creator_ext, title)
VALUES (@id, @board_id, @creator_account, @creator_folded, @creator_ext, @title);

-- name: LockForumThread :one
SELECT sqlc.embed(t), b.slug FROM forum_threads t JOIN forum_boards b ON b.id = t.board_id
WHERE t.id = @id FOR NO KEY UPDATE OF t;

-- name: ForumThread :one
SELECT sqlc.embed(t), b.slug FROM forum_threads t JOIN forum_boards b ON b.id = t.board_id
WHERE t.id = @id;

-- name: LockForumTurn :exec
-- Taken before a turn is drawn for a thread that comes to await a line
-- (UpdateForumThreadTurn, UpdateForumThreadState's new_turn), and held
-- until the transaction ends: the turns due to one account are drawn one
-- transaction at a time, so they commit in the order they are numbered and
-- an inbox cursor (the newest turn listed) is never past a turn that
-- commits later (docs/protocol-notes.md "Turn"). Its own key space apart
-- from LockForumLine's: a transaction takes one of these at most, last.
SELECT pg_advisory_xact_lock(hashtextextended('forum-turn:' || @due_folded::text, 0));

-- name: UpdateForumThreadTurn :one
-- A thread after a message: its state as the rules left it, the turn the
-- message gave it (a new turn number), one more message.
UPDATE forum_threads SET state = @state, state_origin = @state_origin, proposed_state = sqlc.narg('proposed_state'),
    awaiting = @awaiting, due_account = sqlc.narg('due_account'), due_folded = sqlc.narg('due_folded'),
    due_ext = sqlc.narg('due_ext'), turn_seq = nextval('forum_turn_seq'), messages = messages + 1, last_at = now()
WHERE id = @id
RETURNING turn_seq, messages, last_at;

-- name: UpdateForumThreadState :exec
-- A thread after a mark: its state, pin and whether AI reactions are
-- forbidden as the rules left them; new_turn: its turn comes again (a new
-- turn number: a human allowed AI reactions on a thread awaiting a line).
UPDATE forum_threads SET state = @state, state_origin = @state_origin, proposed_state = sqlc.narg('proposed_state'),
    pinned = @pinned, llm_reply_forbidden = @llm_reply_forbidden,
    turn_seq = CASE WHEN @new_turn::boolean THEN nextval('forum_turn_seq') ELSE turn_seq END
WHERE id = @id;

-- name: ForumMessageAuthor :one
-- A parent: its author's line, if it is a message of the thread.
SELECT author_account, author_ext FROM forum_messages WHERE id = @id AND thread_id = @thread_id;

-- name: CountForumThreadsIn :one
SELECT count(*) FROM forum_threads WHERE id = ANY(@ids::bigint[]);

-- name: CountForumMessagesIn :one
SELECT count(*) FROM forum_messages WHERE id = ANY(@ids::bigint[]);

-- name: NextForumMessageID :one
-- A message's id, taken with the post's first reads (after the thread's
-- row is locked: a thread's messages are numbered in the order they are
-- written), so that the writes that name it go at once with the commit.
SELECT nextval(pg_get_serial_sequence('forum_messages', 'id'))::bigint AS id;

-- name: InsertForumMessage :one
-- A message (its id taken by NextForumMessageID), and its extension
-- remembered (forum_extensions) in the same statement: the extension's row
-- upserted, the account's other rows beyond the newest @keep - 1 forgotten
-- (the statement's snapshot does not see the upsert, so the extension
-- written is left out of both sides). The caller holds LockForumLine: an
-- account's rows have one writer at a time.
WITH ins AS (
    INSERT INTO forum_messages (id, thread_id, kind, body, parent_id, relates_to, author_account, author_folded, author_ext,
        author_agent, provenance, to_account, to_ext, awaiting)
    VALUES (@id, @thread_id, @kind, @body, sqlc.narg('parent_id'), @relates_to, @author_account, @author_folded, @author_ext,
        sqlc.narg('author_agent'), @provenance, sqlc.narg('to_account'), sqlc.narg('to_ext'), @awaiting)
    RETURNING created_at, author_folded, author_ext
), remembered AS (
    INSERT INTO forum_extensions (account_folded, ext, used_at)
    SELECT author_folded, author_ext, created_at FROM ins WHERE author_ext <> ''
    ON CONFLICT (account_folded, ext) DO UPDATE SET used_at = EXCLUDED.used_at
), forgotten AS (
    DELETE FROM forum_extensions f USING ins
    WHERE ins.author_ext <> '' AND f.account_folded = ins.author_folded AND f.ext <> ins.author_ext
      AND f.ext NOT IN (SELECT k.ext FROM forum_extensions k
                        WHERE k.account_folded = ins.author_folded AND k.ext <> ins.author_ext
                        ORDER BY k.used_at DESC, k.ext LIMIT sqlc.arg('keep')::int - 1)
)
SELECT created_at FROM ins;

-- name: InsertForumEvent :exec
INSERT INTO forum_events (thread_id, type, from_state, to_state, origin, confirmed, by_identity, by_ext, message_id)
VALUES (@thread_id, @type, sqlc.narg('from_state'), sqlc.narg('to_state'), @origin, @confirmed, @by_identity, @by_ext,
    sqlc.narg('message_id'));

-- name: ListForumMessages :many
-- A page of a thread's messages in order, with the author's agent's name.
SELECT m.*, a.name AS agent_name
FROM forum_messages m LEFT JOIN agents a ON a.id = m.author_agent
WHERE m.thread_id = @thread_id AND m.id > @after
ORDER BY m.id
LIMIT @lim;

-- name: ListForumEvents :many
SELECT *, count(*) OVER () AS total FROM forum_events WHERE thread_id = @thread_id ORDER BY id LIMIT @lim OFFSET @off;

-- name: BoardThreads :many
-- A board's threads, pinned, then awaiting, then newest activity first
-- (the forum_threads_board index, in order).
SELECT sqlc.embed(t), b.slug FROM forum_threads t JOIN forum_boards b ON b.id = t.board_id
WHERE t.board_id = @board_id
ORDER BY t.pinned DESC, t.awaiting DESC, t.last_at DESC, t.id DESC
LIMIT @lim OFFSET @off;

-- name: BoardThreadsAfter :many
-- The same list after a cursor (keyset: the whole sort key compared at once).
SELECT sqlc.embed(t), b.slug FROM forum_threads t JOIN forum_boards b ON b.id = t.board_id
WHERE t.board_id = @board_id
  AND (t.pinned, t.awaiting, t.last_at, t.id) < (@pinned::boolean, @awaiting::boolean, @last_at::timestamptz, @after_id::bigint)
ORDER BY t.pinned DESC, t.awaiting DESC, t.last_at DESC, t.id DESC
LIMIT @lim;

-- name: ListForumThreads :many
-- Threads across boards with optional filters, newest activity first
-- (read planned per call: each filter wants its index).
SELECT sqlc.embed(t), b.slug FROM forum_threads t JOIN forum_boards b ON b.id = t.board_id
WHERE (sqlc.narg('board_id')::bigint IS NULL OR t.board_id = sqlc.narg('board_id'))
  AND (sqlc.narg('state')::text IS NULL OR coalesce(t.proposed_state, t.state) = sqlc.narg('state'))
  AND (sqlc.narg('awaiting')::boolean IS NULL OR t.awaiting = sqlc.narg('awaiting'))
  AND (sqlc.narg('creator_folded')::text IS NULL OR t.creator_folded = sqlc.narg('creator_folded'))
  AND (sqlc.narg('llm_reply_forbidden')::boolean IS NULL OR t.llm_reply_forbidden = sqlc.narg('llm_reply_forbidden'))
ORDER BY t.last_at DESC, t.id DESC
LIMIT @lim OFFSET @off;

-- name: CountForumThreads :one
-- The same filters' total, counted up to @cap rows (the cap plus one: more than the cap).
SELECT count(*) FROM (
    SELECT 1 FROM forum_threads t
    WHERE (sqlc.narg('board_id')::bigint IS NULL OR t.board_id = sqlc.narg('board_id'))
      AND (sqlc.narg('state')::text IS NULL OR coalesce(t.proposed_state, t.state) = sqlc.narg('state'))
      AND (sqlc.narg('awaiting')::boolean IS NULL OR t.awaiting = sqlc.narg('awaiting'))
      AND (sqlc.narg('creator_folded')::text IS NULL OR t.creator_folded = sqlc.narg('creator_folded'))
      AND (sqlc.narg('llm_reply_forbidden')::boolean IS NULL OR t.llm_reply_forbidden = sqlc.narg('llm_reply_forbidden'))
    LIMIT sqlc.arg('cap')::bigint
) counted;

-- name: ForumInbox :many
-- The threads awaiting a line, newest turn first: its own extension's, and
-- those due to the account under any extension; none where a human
-- forbade AI reactions.
SELECT sqlc.embed(t), b.slug FROM forum_threads t JOIN forum_boards b ON b.id = t.board_id
WHERE t.due_folded = @due_folded AND t.turn_seq > @since AND NOT t.llm_reply_forbidden
  AND (sqlc.narg('ext')::text IS NULL OR t.due_ext IN (sqlc.narg('ext'), ''))
ORDER BY t.turn_seq DESC
LIMIT @lim;

-- name: CountForumInbox :one
SELECT count(*) FROM (
    SELECT 1 FROM forum_threads t
    WHERE t.due_folded = @due_folded AND t.turn_seq > @since AND NOT t.llm_reply_forbidden
      AND (sqlc.narg('ext')::text IS NULL OR t.due_ext IN (sqlc.narg('ext'), ''))
    LIMIT sqlc.arg('cap')::bigint
) counted;

-- name: ForumInboxCursor :one
SELECT cursor FROM forum_inbox_acks WHERE account_folded = @account_folded AND ext = @ext;

-- name: ForumNewestTurn :one
-- The sequence's last value, read without a scan: no turn is newer (0 before any).
SELECT COALESCE(pg_sequence_last_value('forum_turn_seq'::regclass), 0)::bigint AS newest;

-- name: AckForumInbox :exec
INSERT INTO forum_inbox_acks (account_folded, ext, cursor) VALUES (@account_folded, @ext, @cursor)
ON CONFLICT (account_folded, ext) DO UPDATE SET cursor = EXCLUDED.cursor, at = now();

-- name: RecentForumExtensions :many
-- The extensions an account last wrote under, newest first.
SELECT ext, used_at FROM forum_extensions WHERE account_folded = @account_folded
ORDER BY used_at DESC, ext;

-- name: ForumAccountRights :one
SELECT rights FROM forum_rights WHERE account_folded = @account_folded;

-- name: SetForumAccountRights :exec
INSERT INTO forum_rights (account_folded, account, rights) VALUES (@account_folded, @account, @rights)
ON CONFLICT (account_folded) DO UPDATE SET account = EXCLUDED.account, rights = EXCLUDED.rights, updated_at = now();

-- name: OwnsForumCreator :one
-- Whether the owner account owns (confirmed) the agent of the account that
-- opened a thread: its human authority there.
SELECT EXISTS (
    SELECT 1 FROM agent_accounts aa
    JOIN owner_bindings ob ON ob.agent_id = aa.agent_id
    WHERE aa.account_folded = @creator_folded AND ob.owner_folded = @owner_folded AND ob.status = 'confirmed'
);

-- name: PendingForumProposals :many
-- Threads with a pending proposal: those an owner may confirm (opened by
-- its agents' accounts), or all ('' owner: an operator).
SELECT sqlc.embed(t), b.slug FROM forum_threads t JOIN forum_boards b ON b.id = t.board_id
WHERE t.proposed_state IS NOT NULL
  AND (@owner_folded::text = '' OR EXISTS (
      SELECT 1 FROM agent_accounts aa JOIN owner_bindings ob ON ob.agent_id = aa.agent_id
      WHERE aa.account_folded = t.creator_folded AND ob.owner_folded = @owner_folded AND ob.status = 'confirmed'))
ORDER BY t.last_at DESC, t.id DESC
LIMIT @lim;

-- name: NotifyForumDue :exec
-- NOTIFY forum for the agent of an account that comes to be due (none if
-- the account has no agent), in one statement.
INSERT INTO notifications (agent_id, type)
SELECT agent_id, @type::text FROM agent_accounts WHERE account_folded = @account_folded;

-- name: CountForumDue :one
-- NOTIFY forum's count: the threads where an agent's accounts are due (and
-- may react).
SELECT count(*) FROM forum_threads t JOIN agent_accounts aa ON aa.account_folded = t.due_folded
WHERE aa.agent_id = @agent_id AND NOT t.llm_reply_forbidden;
