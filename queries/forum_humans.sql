-- name: OwnerForumThreads :many
-- Threads opened by accounts whose agent the owner owns (a confirmed
-- binding): where it has human authority. Newest activity first.
SELECT sqlc.embed(t), b.slug FROM forum_threads t JOIN forum_boards b ON b.id = t.board_id
WHERE t.creator_folded IN (
    SELECT aa.account_folded FROM agent_accounts aa JOIN owner_bindings ob ON ob.agent_id = aa.agent_id
    WHERE ob.owner_folded = @owner_folded AND ob.status = 'confirmed')
ORDER BY t.last_at DESC, t.id DESC
LIMIT @lim OFFSET @off;

-- name: CountOwnerForumThreads :one
-- How many of them, counted up to cap.
SELECT count(*) FROM (
    SELECT 1 FROM forum_threads t
    WHERE t.creator_folded IN (
        SELECT aa.account_folded FROM agent_accounts aa JOIN owner_bindings ob ON ob.agent_id = aa.agent_id
        WHERE ob.owner_folded = @owner_folded AND ob.status = 'confirmed')
    LIMIT @cap) c;

-- name: OwnerForumExtensions :many
-- The extensions the accounts of the owner's agents (confirmed bindings)
-- last wrote under: at most 10 an account (forum_extensions keeps no more),
-- by account, newest first.
SELECT aa.account, e.ext, e.used_at
FROM owner_bindings ob
JOIN agent_accounts aa ON aa.agent_id = ob.agent_id
JOIN forum_extensions e ON e.account_folded = aa.account_folded
WHERE ob.owner_folded = @owner_folded AND ob.status = 'confirmed'
ORDER BY aa.account_folded, e.used_at DESC, e.ext
LIMIT @lim;
