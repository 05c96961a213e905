package pircan

import (
	"context"
	"fmt"
	"unicode/utf8"
)

const (
	// MaxIRCText is the cap on a SEND's text over IRC, in characters.
	MaxIRCText = 200
	// MaxStoredText is the cap on a stored message, in bytes (MCP and A2A
	// may send this much; IRC shows such a message shortened).
	MaxStoredText = 60000
)

func send(ctx context.Context, c *call) ([]Reply, error) {
	var a struct {
		To      *string `json:"to"`
		Text    *string `json:"text"`
		ReplyTo *string `json:"reply_to"`
	}
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	to, err := requiredID("to", a.To)
	if err != nil {
		return nil, err
	}
	if a.Text == nil {
		return nil, FieldError(CodeInvalidArgument, "text", `"text" is required.`)
	}
	if err := checkText("text", *a.Text, MaxIRCText); err != nil {
		return nil, err
	}
	m := NewMessage{To: to, Text: *a.Text}
	if a.ReplyTo != nil {
		if m.ReplyTo, err = requiredID("reply_to", a.ReplyTo); err != nil {
			return nil, err
		}
	}
	l := c.svc.cfg.Limits
	sent, serr := c.svc.store.Send(ctx, c.actor(), m, l)
	if serr != nil {
		return nil, ruleErrors(serr, map[error]*Error{
			ErrNotAuthorized:      Errorf(CodeNotAuthorized, "No active agreement with the message scope allows this; use CONTACT first."),
			ErrInvalidReplyTo:     FieldError(CodeInvalidArgument, "reply_to", "reply_to must be a message between you and this agent."),
			ErrLoopLimit:          Errorf(CodeLoopLimit, "This reply chain is more than %d hops deep; start a new conversation.", l.MaxHops),
			ErrConversationBudget: Errorf(CodeConversationBudget, "This conversation has had %d messages in the last hour.", l.ConversationHour),
			ErrRateLimited:        Errorf(CodeRateLimited, "At most %d messages per hour per agreement.", l.MessagesHour),
		})
	}
	return one("SEND", Object{{"message_id", sent.MessageID}, {"conversation_id", sent.ConversationID},
		{"agreement_id", sent.AgreementID}, {"hop", sent.Hop}}), nil
}

func inbox(ctx context.Context, c *call) ([]Reply, error) {
	var a struct {
		Limit *int `json:"limit"`
	}
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	limit, err := checkRange("limit", a.Limit, 1, 10, 5)
	if err != nil {
		return nil, err
	}
	msgs, remaining, serr := c.svc.store.Inbox(ctx, c.actor(), limit)
	if serr != nil {
		return nil, serr
	}
	items := make([]Object, len(msgs))
	for i, m := range msgs {
		items[i] = messageFields(m)
	}
	return listReplies("MESSAGE", "INBOX", items, len(items)+remaining, 0), nil
}

// messageFields is a MESSAGE line. A text longer than fits (or than IRC's
// 200 characters, for one sent over MCP) is shortened, with "truncated".
func messageFields(m Message) Object {
	text := m.Text
	cut := utf8.RuneCountInString(text) > MaxIRCText
	if cut {
		text = string([]rune(text)[:MaxIRCText])
	}
	f := Object{
		{"message_id", m.MessageID},
		{"from", Object{{"agent_id", m.From.AgentID}, {"name", Text(m.From.Name)}}},
		{"agreement_id", m.AgreementID}, {"conversation_id", m.ConversationID},
		{"hop", m.Hop}, {"at", timeText(m.At)}, {"text", Text(text)},
	}
	if cut {
		f = append(f, Field{"truncated", true})
	}
	return f
}

// String is for logs: never the text.
func (m Message) String() string {
	return fmt.Sprintf("message %s (%d bytes)", m.MessageID, len(m.Text))
}
