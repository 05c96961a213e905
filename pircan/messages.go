package pircan

import (
	"context"
	"fmt"
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
	// Messages still on their way to this agent are skipped, not returned
	// twice; each returned one is marked read only once all its lines were
	// handed to the connection for this account (inflight.go).
	actor := c.actor()
	msgs, remaining, serr := c.svc.store.Inbox(ctx, actor, limit, c.svc.reads.skip(actor.AgentID))
	if serr != nil {
		return nil, serr
	}
	var out []Reply
	for _, m := range msgs {
		lines := messageReplies(m, c.req)
		done := c.svc.reads.handOut(actor, m.MessageID, len(lines))
		for i := range lines {
			lines[i].Done = done
		}
		out = append(out, lines...)
	}
	return append(out, Reply{Verb: "INBOX-END", Fields: Object{
		{"returned", len(msgs)}, {"total", len(msgs) + remaining}, {"offset", 0}}}), nil
}

// messageReplies renders one message for IRC. The spec's MESSAGE fields
// (four UUIDs, a time) leave room for only part of a 200-character text in
// a 350-byte line, so the MESSAGE line carries what fits and
// `"continues":true`, and MESSAGE-MORE lines carry the rest in order: an
// IRC agent gets every character it may be sent over IRC. A longer text
// (sent over MCP) is cut at 200 characters with "truncated", as the spec says.
func messageReplies(m Message, req *Request) []Reply {
	text := []rune(m.Text)
	cut := len(text) > MaxIRCText
	if cut {
		text = text[:MaxIRCText]
	}
	head := Object{
		{"message_id", m.MessageID},
		{"from", Object{{"agent_id", m.From.AgentID}, {"name", Text(m.From.Name)}}},
		{"agreement_id", m.AgreementID}, {"conversation_id", m.ConversationID},
		{"hop", m.Hop}, {"at", timeText(m.At)},
	}
	verb, fields := "MESSAGE", head
	var out []Reply
	for {
		n := fitRunes(verb, fields, text, req)
		// A plain string: fitRunes measured it, so the encoder never cuts a
		// piece whose rest is on the next line.
		line := fields.With("text", string(text[:n]))
		rest := text[n:]
		if len(rest) > 0 {
			line = line.With("continues", true)
		} else if cut {
			line = line.With("truncated", true)
		}
		out = append(out, Reply{Verb: verb, Fields: line})
		if len(rest) == 0 {
			return out
		}
		text = rest
		verb, fields = "MESSAGE-MORE", Object{{"message_id", m.MessageID}}
	}
}

// fitRunes is how many runes of text fit whole in the line, with its flag
// and the request's re (or without re, when not even the bare MESSAGE line
// fits beside it: then Encode leaves re out). A MESSAGE-MORE line always
// carries at least one rune, so the text moves on.
func fitRunes(verb string, fields Object, text []rune, req *Request) int {
	withRe := req != nil && req.HasID
	fits := func(n int) bool {
		f := fields.With("text", string(text[:n])).With("continues", true)
		if withRe {
			f = f.With("re", req.ID)
		}
		return len(encodeLine(verb, f)) <= MaxReplyBytes
	}
	if withRe && !fits(0) {
		withRe = false
	}
	lo, hi := 1, len(text)
	if verb == "MESSAGE" {
		lo = 0
	}
	if fits(hi) {
		return hi
	}
	for lo < hi { // largest n that fits
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// String is for logs: never the text.
func (m Message) String() string {
	return fmt.Sprintf("message %s (%d bytes)", m.MessageID, len(m.Text))
}
