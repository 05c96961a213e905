-- name: LockMessageAgreement :one
-- The active agreement that lets a and b exchange messages, locked so that
-- budgets are counted without a race.
SELECT id FROM agreements
WHERE ((requester = @a AND target = @b) OR (requester = @b AND target = @a))
  AND revoked_at IS NULL AND expires_at > now() AND 'message' = ANY (scopes)
ORDER BY expires_at DESC LIMIT 1
FOR UPDATE;

-- name: MessageForReply :one
SELECT id, sender, recipient, conversation_id, hop FROM messages WHERE id = @id;

-- name: CountConversationLastHour :one
SELECT count(*) FROM messages WHERE conversation_id = @conversation_id AND created_at > now() - interval '1 hour';

-- name: CountSentLastHour :one
SELECT count(*) FROM messages WHERE agreement_id = @agreement_id AND sender = @sender AND created_at > now() - interval '1 hour';

-- name: InsertMessage :one
WITH new AS (SELECT gen_random_uuid() AS id)
INSERT INTO messages (id, agreement_id, sender, recipient, conversation_id, reply_to, hop, text)
SELECT new.id, @agreement_id, @sender, @recipient, coalesce(sqlc.narg('conversation_id')::uuid, new.id),
       sqlc.narg('reply_to')::uuid, @hop, @text
FROM new
RETURNING id, conversation_id, created_at;

-- name: ClaimUnread :many
-- Marks exactly the returned messages read; SKIP LOCKED lets a concurrent
-- INBOX of the same agent take the next ones instead of the same ones.
WITH claimed AS (
    UPDATE messages m SET read_at = now()
    WHERE m.id IN (SELECT u.id FROM messages u WHERE u.recipient = @recipient AND u.read_at IS NULL
                   ORDER BY u.created_at, u.id LIMIT @lim FOR UPDATE SKIP LOCKED)
    RETURNING m.id, m.sender, m.agreement_id, m.conversation_id, m.hop, m.text, m.created_at
)
SELECT c.id, c.sender, a.name AS sender_name, c.agreement_id, c.conversation_id, c.hop, c.text, c.created_at
FROM claimed c JOIN agents a ON a.id = c.sender
ORDER BY c.created_at, c.id;

-- name: CountUnread :one
SELECT count(*) FROM messages WHERE recipient = @recipient AND read_at IS NULL;
