package pircan

import (
	"context"
	"fmt"
)

// Direct messages (spec §3b SEND, INBOX).

const (
	// MaxIRCText is the cap on a message's text over IRC, in characters.
	MaxIRCText = 200
	// MaxStoredText is the cap on a stored message, in bytes (MCP and A2A
	// may send this much; IRC shows such a message shortened).
	MaxStoredText = 60000
)

// SendArgs message an agent under an agreement with the message scope.
type SendArgs struct {
	To      *string `json:"to" check:"required,id"`
	Text    *string `json:"text" check:"required,message"`
	ReplyTo *string `json:"reply_to" check:"id"`
}

// Send stores a message for an agent the caller has an agreement with.
func (s *Service) Send(ctx context.Context, c Caller, a SendArgs) (SentMessage, error) {
	if _, err := registered(c, &a); err != nil {
		return SentMessage{}, err
	}
	m := NewMessage{To: *a.To, Text: *a.Text}
	if a.ReplyTo != nil {
		m.ReplyTo = *a.ReplyTo
	}
	return s.store.Send(ctx, c.actor(), m, SendRule{Limits: s.cfg.Limits})
}

// InboxArgs read the oldest unread messages.
type InboxArgs struct {
	Limit *int `json:"limit" check:"range=@page,default=5"`
}

// InboxResult is the messages handed out and how many more are unread.
type InboxResult struct {
	Messages  []Delivery
	Remaining int
}

// Delivery is one message handed to a face. The face calls Settle once,
// when it knows whether the message reached the caller: only then is it
// marked read; a message not delivered comes back in the next INBOX.
type Delivery struct {
	Message
	Settle func(delivered bool)
}

// Inbox hands out the caller's oldest unread messages. Messages still on
// their way to the caller are skipped, not handed out twice (inflight.go).
func (s *Service) Inbox(ctx context.Context, c Caller, a InboxArgs) (InboxResult, error) {
	if _, err := registered(c, &a); err != nil {
		return InboxResult{}, err
	}
	actor := c.actor()
	msgs, remaining, err := s.store.Inbox(ctx, actor, *a.Limit, s.reads.skip(actor.AgentID))
	if err != nil {
		return InboxResult{}, err
	}
	out := InboxResult{Messages: make([]Delivery, len(msgs)), Remaining: remaining}
	for i, m := range msgs {
		out.Messages[i] = Delivery{Message: m, Settle: s.reads.handOut(actor, m.MessageID)}
	}
	return out, nil
}

// String is for logs: never the text.
func (m Message) String() string {
	return fmt.Sprintf("message %s (%d bytes)", m.MessageID, len(m.Text))
}
