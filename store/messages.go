package store

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// Send implements pircan.Store. The agreement row is locked for the whole
// transaction, so the budgets are counted without a race; the counts, the
// insert, its audit entry and the notification are then one statement
// (SendMessage). It is a pipelined transaction (pipe.go) of two round
// trips: BEGIN with the lock (and a reply's parent), then that statement
// with COMMIT, which commits nothing when a budget is spent. The core's
// rule (pircan.SendRule) decides every refusal from what was read.
func (s *Store) Send(ctx context.Context, actor pircan.Actor, m pircan.NewMessage, rule pircan.SendRule) (pircan.SentMessage, error) {
	me, l := actor.AgentID, rule.Limits
	// The id is chosen here so that the audit entry, written by the same
	// statement, can be built beforehand.
	id := uuid.NewString()
	p := db.SendMessageParams{ID: id, Sender: me, Span: pircan.HourWindow, Recipient: m.To, Text: m.Text, ConversationID: id,
		MessagesHour: int64(l.MessagesHour), ConversationHour: int64(l.ConversationHour), NotifyType: pircan.NotifyMessage}
	var row db.SendMessageRow
	err := s.withPipe(ctx, func(ctx context.Context, pp *pipe) error {
		var (
			agreementID        string
			lockErr, parentErr error
			parent             db.MessageForReplyRow
		)
		pp.queue(func(q *db.Queries) error {
			agreementID, lockErr = q.LockMessageAgreement(ctx, db.LockMessageAgreementParams{A: me, B: m.To})
			return nil
		})
		if m.ReplyTo != "" {
			pp.queue(func(q *db.Queries) error {
				parent, parentErr = q.MessageForReply(ctx, m.ReplyTo)
				return nil
			})
		}
		if err := pp.send(ctx); err != nil {
			return err
		}
		if errors.Is(lockErr, errNoRows) {
			var mine, theirs bool
			err := pp.run(ctx, func(q *db.Queries) (err error) {
				mine, theirs, err = pendingBetween(ctx, q, me, m.To)
				return err
			})
			if err != nil {
				return err
			}
			return rule.NoAgreement(mine, theirs)
		}
		if lockErr != nil {
			return lockErr
		}
		p.AgreementID = agreementID
		if m.ReplyTo != "" {
			if err := notFoundOr(parentErr); err != nil {
				return err
			}
			between := parentErr == nil && (parent.Sender == m.To && parent.Recipient == me || parent.Sender == me && parent.Recipient == m.To)
			hop, perr := rule.Reply(between, int(parent.Hop))
			if perr != nil {
				return perr
			}
			p.ReplyTo, p.ConversationID, p.Hop = &parent.ID, parent.ConversationID, int32(hop)
		}
		e, err := auditEntry(actor, "message.send", id, map[string]any{"to": m.To, "agreement_id": agreementID,
			"conversation_id": p.ConversationID, "hop": p.Hop, "bytes": len(m.Text)})
		if err != nil {
			return err
		}
		p.ActorAccount, p.ActorAgent, p.Action, p.Details = e.ActorAccount, e.ActorAgent, e.Action, e.Details
		pp.queue(func(q *db.Queries) (err error) { row, err = q.SendMessage(ctx, p); return err })
		return nil // withPipe sends it with the commit
	})
	switch {
	case err != nil:
		return pircan.SentMessage{}, err
	case row.Inserted != 1:
		return pircan.SentMessage{}, rule.OverBudget(m.ReplyTo != "", int(row.ConversationLastHour))
	}
	return pircan.SentMessage{MessageID: id, ConversationID: p.ConversationID, AgreementID: p.AgreementID, Hop: int(p.Hop)}, nil
}

// pendingBetween says whether a contact request is pending from me to the
// other agent, and from it to me.
func pendingBetween(ctx context.Context, q *db.Queries, me, other string) (mine, theirs bool, err error) {
	if mine, err = q.HasPendingRequest(ctx, db.HasPendingRequestParams{FromAgent: me, ToAgent: other, RequestLifetime: pircan.RequestLifetime}); err != nil {
		return
	}
	theirs, err = q.HasPendingRequest(ctx, db.HasPendingRequestParams{FromAgent: other, ToAgent: me, RequestLifetime: pircan.RequestLifetime})
	return
}

// notFoundOr hides "no such row" (the caller supplies the rule's error) and
// keeps real failures.
func notFoundOr(err error) error {
	if errors.Is(err, errNoRows) {
		return nil
	}
	return err
}

// Inbox implements pircan.Store: it reads, and changes nothing, in one
// statement (the page and the count of the rest share its snapshot).
func (s *Store) Inbox(ctx context.Context, actor pircan.Actor, limit int, skip []string) ([]pircan.Message, int, error) {
	var out []pircan.Message
	remaining := 0
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.PeekUnread(ctx, db.PeekUnreadParams{Recipient: actor.AgentID, Skip: skip, Lim: int32(limit)})
		if err != nil {
			return err
		}
		for _, r := range rows {
			out = append(out, pircan.Message{MessageID: r.ID, From: pircan.PartyRef{AgentID: r.Sender, Name: r.SenderName},
				AgreementID: r.AgreementID, ConversationID: r.ConversationID, Hop: int(r.Hop), At: r.CreatedAt, Text: r.Text})
			remaining = max(0, int(r.Unread)-len(rows))
		}
		return nil
	})
	return out, remaining, err
}

// MarkRead implements pircan.Store: every reader's delivered messages in
// one statement, one commit. Only messages still unread change (and are
// audited, one entry per reader, by the same statement), so marking twice
// is harmless.
func (s *Store) MarkRead(ctx context.Context, reads []pircan.Reads) error {
	p := db.MarkReadParams{Action: "message.read"}
	for _, r := range reads {
		if len(r.IDs) == 0 {
			continue
		}
		e, err := auditEntry(r.Actor, p.Action, r.Actor.AgentID, nil)
		if err != nil {
			return err
		}
		p.Recipients = append(p.Recipients, r.Actor.AgentID)
		p.ActorAccounts = append(p.ActorAccounts, e.ActorAccount)
		p.Details = append(p.Details, string(e.Details))
		for _, id := range r.IDs {
			p.IDRecipients, p.Ids = append(p.IDRecipients, r.Actor.AgentID), append(p.Ids, id)
		}
	}
	if len(p.Ids) == 0 {
		return nil
	}
	return s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		_, err := q.MarkRead(ctx, p)
		return err
	})
}
