package store

import (
	"context"
	"errors"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// Send implements pircan.Store. The agreement row is locked for the whole
// transaction, so the budgets below are counted without a race.
func (s *Store) Send(ctx context.Context, actor pircan.Actor, m pircan.NewMessage, l pircan.Limits) (pircan.SentMessage, error) {
	var sent pircan.SentMessage
	me := actor.AgentID
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		if m.To == me {
			return pircan.ErrNotAuthorized
		}
		agreementID, err := q.LockMessageAgreement(ctx, db.LockMessageAgreementParams{A: me, B: m.To})
		if err != nil {
			if errors.Is(err, errNoRows) {
				return pircan.ErrNotAuthorized
			}
			return err
		}
		p := db.InsertMessageParams{AgreementID: agreementID, Sender: me, Recipient: m.To, Text: m.Text}
		if m.ReplyTo != "" {
			parent, err := q.MessageForReply(ctx, m.ReplyTo)
			if err != nil {
				return orErr(notFoundOr(err), pircan.ErrInvalidReplyTo)
			}
			if !(parent.Sender == m.To && parent.Recipient == me || parent.Sender == me && parent.Recipient == m.To) {
				return pircan.ErrInvalidReplyTo
			}
			p.ReplyTo, p.ConversationID, p.Hop = &parent.ID, &parent.ConversationID, parent.Hop+1
			if int(p.Hop) > l.MaxHops {
				return pircan.ErrLoopLimit
			}
			n, err := q.CountConversationLastHour(ctx, parent.ConversationID)
			if err != nil || n >= int64(l.ConversationHour) {
				return orErr(err, pircan.ErrConversationBudget)
			}
		}
		n, err := q.CountSentLastHour(ctx, db.CountSentLastHourParams{AgreementID: agreementID, Sender: me})
		if err != nil || n >= int64(l.MessagesHour) {
			return orErr(err, pircan.ErrRateLimited)
		}
		row, err := q.InsertMessage(ctx, p)
		if err != nil {
			return err
		}
		sent = pircan.SentMessage{MessageID: row.ID, ConversationID: row.ConversationID, AgreementID: agreementID, Hop: int(p.Hop)}
		if err := audit(ctx, q, actor, "message.send", row.ID, map[string]any{"to": m.To, "agreement_id": agreementID,
			"conversation_id": row.ConversationID, "hop": p.Hop, "bytes": len(m.Text)}); err != nil {
			return err
		}
		return notify(ctx, q, m.To, pircan.NotifyMessage)
	})
	return sent, err
}

// notFoundOr hides "no such row" (the caller supplies the rule's error) and
// keeps real failures.
func notFoundOr(err error) error {
	if errors.Is(err, errNoRows) {
		return nil
	}
	return err
}

// Inbox implements pircan.Store: it reads, and changes nothing.
func (s *Store) Inbox(ctx context.Context, actor pircan.Actor, limit int, skip []string) ([]pircan.Message, int, error) {
	var out []pircan.Message
	remaining := 0
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.PeekUnread(ctx, db.PeekUnreadParams{Recipient: actor.AgentID, Skip: skip, Lim: int32(limit)})
		if err != nil {
			return err
		}
		for _, r := range rows {
			out = append(out, pircan.Message{MessageID: r.ID, From: pircan.PartyRef{AgentID: r.Sender, Name: r.SenderName},
				AgreementID: r.AgreementID, ConversationID: r.ConversationID, Hop: int(r.Hop), At: r.CreatedAt, Text: r.Text})
		}
		n, err := q.CountUnreadExcept(ctx, db.CountUnreadExceptParams{Recipient: actor.AgentID, Skip: skip})
		remaining = max(0, int(n)-len(rows))
		return err
	})
	return out, remaining, err
}

// MarkRead implements pircan.Store. Only messages still unread change (and
// are audited), so marking twice is harmless.
func (s *Store) MarkRead(ctx context.Context, actor pircan.Actor, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		marked, err := q.MarkRead(ctx, db.MarkReadParams{Recipient: actor.AgentID, Ids: ids})
		if err != nil || len(marked) == 0 {
			return err
		}
		return audit(ctx, q, actor, "message.read", actor.AgentID, map[string]any{"message_ids": marked})
	})
}
