-- name: LockMessageAgreement :one
-- The active agreement that lets a and b exchange messages, locked so that
-- budgets are counted without a race: the same row for every sender of the
-- pair (id breaks a tie of expiries, so two senders never lock two rows).
SELECT id FROM agreements
WHERE ((requester = @a AND target = @b) OR (requester = @b AND target = @a))
  AND revoked_at IS NULL AND expires_at > now() AND 'message' = ANY (scopes)
ORDER BY expires_at DESC, id DESC LIMIT 1
FOR UPDATE;

-- name: MessageForReply :one
SELECT id, sender, recipient, conversation_id, hop FROM messages WHERE id = @id;

-- name: SendMessage :one
-- SEND's budgets, the insert, its audit entry and the recipient's
-- notification in one statement (one round trip, one plan). It must run
-- after LockMessageAgreement, in the same transaction: its snapshot is
-- then taken once the lock is held, so it counts every message of an
-- earlier holder. The conversation's budget binds replies only (a new
-- message starts its own conversation). Nothing is written unless both
-- budgets have room; inserted says which happened, the counts say why.
WITH sent AS (
    SELECT count(*) AS n FROM messages s
    WHERE s.agreement_id = @agreement_id AND s.sender = @sender AND s.created_at > now() - @span::interval
), conv AS (
    SELECT count(*) AS n FROM messages c
    WHERE c.conversation_id = @conversation_id AND c.created_at > now() - @span::interval
), ins AS (
    INSERT INTO messages (id, agreement_id, sender, recipient, conversation_id, reply_to, hop, text)
    SELECT @id::uuid, @agreement_id::uuid, @sender::uuid, @recipient::uuid, @conversation_id::uuid,
           sqlc.narg('reply_to')::uuid, @hop::int, @text::text
    FROM sent, conv
    WHERE sent.n < @messages_hour::bigint
      AND (sqlc.narg('reply_to')::uuid IS NULL OR conv.n < @conversation_hour::bigint)
    RETURNING id
), audited AS (
    INSERT INTO audit_log (actor_account, actor_agent, action, subject, details)
    SELECT @actor_account::text, sqlc.narg('actor_agent')::uuid, @action::text, ins.id::text, @details::jsonb FROM ins
), notified AS (
    INSERT INTO notifications (agent_id, type) SELECT @recipient::uuid, @notify_type::text FROM ins
)
SELECT sent.n AS sent_last_hour, conv.n AS conversation_last_hour, (SELECT count(*) FROM ins) AS inserted
FROM sent, conv;

-- name: PeekUnread :many
-- The oldest unread messages not in skip (those in flight to the reader),
-- unchanged: a message is marked read only once delivered (MarkRead).
-- unread is how many such messages there are in all, counted in the same
-- snapshot (no rows: none).
SELECT m.id, m.sender, a.name AS sender_name, m.agreement_id, m.conversation_id, m.hop, m.text, m.created_at,
       (SELECT count(*) FROM messages u
        WHERE u.recipient = @recipient AND u.read_at IS NULL
          AND NOT (u.id = ANY (coalesce(@skip::uuid[], '{}'))))::bigint AS unread
FROM messages m JOIN agents a ON a.id = m.sender
WHERE m.recipient = @recipient AND m.read_at IS NULL AND NOT (m.id = ANY (coalesce(@skip::uuid[], '{}')))
ORDER BY m.created_at, m.id
LIMIT @lim;

-- name: MarkRead :many
-- Idempotent: only messages still unread are marked, and returned. For
-- several readers at once (one statement, one commit): reader i is
-- recipients[i], with its audit entry's account and details; message j is
-- ids[j], delivered to id_recipients[j]. Each reader whose messages changed
-- gets one audit entry (its details plus the ids marked), written by the
-- same statement.
WITH readers AS (
    SELECT unnest(@recipients::uuid[]) AS recipient, unnest(@actor_accounts::text[]) AS actor_account,
           unnest(@details::text[]) AS details
), delivered AS (
    SELECT unnest(@id_recipients::uuid[]) AS recipient, unnest(@ids::uuid[]) AS id
), marked AS (
    UPDATE messages m SET read_at = now()
    FROM delivered d
    WHERE m.id = d.id AND m.recipient = d.recipient AND m.read_at IS NULL
    RETURNING m.id, m.recipient
), audited AS (
    INSERT INTO audit_log (actor_account, actor_agent, action, subject, details)
    SELECT r.actor_account, r.recipient, @action::text, r.recipient::text,
           r.details::jsonb || jsonb_build_object('message_ids', jsonb_agg(marked.id))
    FROM marked JOIN readers r ON r.recipient = marked.recipient
    GROUP BY r.recipient, r.actor_account, r.details
)
SELECT id FROM marked;

-- name: CountUnread :one
SELECT count(*) FROM messages WHERE recipient = @recipient AND read_at IS NULL;
