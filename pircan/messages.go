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
// a 350-byte line, so the MESSAGE line carries what fits, with
// `"continues":true` and `"truncated":true` (a client that knows only the
// spec sees that the line is not the whole text), and MESSAGE-MORE lines
// carry the rest in order: an IRC agent gets every character it may be sent
// over IRC. The sender's name comes before the text: the text moves to
// MESSAGE-MORE lines first, and only a MESSAGE line that cannot hold the
// name whole beside an empty text has it shortened (by Encode). A longer
// text (sent over MCP) is cut at 200 characters with "truncated" on the
// last line, as the spec says. Every line gets the request's re (finish).
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
		n := fitRunes(verb, fields, text, cut, req)
		out = append(out, Reply{Verb: verb, Fields: pieceFields(verb, fields, text, n, cut)})
		if n == len(text) {
			return out
		}
		text = text[n:]
		verb, fields = "MESSAGE-MORE", Object{{"message_id", m.MessageID}}
	}
}

// pieceFields is one line of a message: fields, then the first n runes of
// text (a plain string: fitRunes measured it, so the encoder never cuts a
// piece whose rest is on the next line) and the line's flags.
func pieceFields(verb string, fields Object, text []rune, n int, cut bool) Object {
	line := fields.With("text", string(text[:n]))
	switch {
	case n < len(text) && verb == "MESSAGE":
		return line.With("continues", true).With("truncated", true)
	case n < len(text):
		return line.With("continues", true)
	case cut:
		return line.With("truncated", true)
	}
	return line
}

// fitRunes is how many runes of text fit whole in the line, with its flags
// and the request's re, within Encode's budget for the verb. A MESSAGE
// line may carry none (the name comes first); a MESSAGE-MORE line always
// carries at least one rune, so the text moves on.
func fitRunes(verb string, fields Object, text []rune, cut bool, req *Request) int {
	fits := func(n int) bool {
		f := pieceFields(verb, fields, text, n, cut)
		if req != nil && req.HasID {
			f = f.With("re", req.ID)
		}
		return overBy(verb, f) <= 0
	}
	if fits(len(text)) {
		return len(text)
	}
	lo, hi := 0, len(text)-1 // the flags are the same for every n < len(text)
	if verb != "MESSAGE" {
		lo = 1
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
