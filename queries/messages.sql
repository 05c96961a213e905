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

-- name: PeekUnread :many
-- The oldest unread messages not in skip (those in flight to the reader),
-- unchanged: a message is marked read only once delivered (MarkRead).
SELECT m.id, m.sender, a.name AS sender_name, m.agreement_id, m.conversation_id, m.hop, m.text, m.created_at
FROM messages m JOIN agents a ON a.id = m.sender
WHERE m.recipient = @recipient AND m.read_at IS NULL AND NOT (m.id = ANY (coalesce(@skip::uuid[], '{}')))
ORDER BY m.created_at, m.id
LIMIT @lim;

-- name: CountUnreadExcept :one
SELECT count(*) FROM messages
WHERE recipient = @recipient AND read_at IS NULL AND NOT (id = ANY (coalesce(@skip::uuid[], '{}')));

-- name: MarkRead :many
-- Idempotent: only messages still unread are marked, and returned.
UPDATE messages SET read_at = now()
WHERE recipient = @recipient AND id = ANY (@ids::uuid[]) AND read_at IS NULL
RETURNING id;

-- name: CountUnread :one
SELECT count(*) FROM messages WHERE recipient = @recipient AND read_at IS NULL;
