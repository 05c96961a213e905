package irc

import (
	"sync"

	"github.com/creatimus/pircan/pircan"
)

// Rendering of the message verbs: SEND, INBOX.

func renderSend(_ *call, m pircan.SentMessage) []Reply {
	return one("SEND", Object{{"message_id", m.MessageID}, {"conversation_id", m.ConversationID},
		{"agreement_id", m.AgreementID}, {"hop", m.Hop}})
}

// renderInbox renders each message in its lines; a message counts as
// delivered (and is marked read) only when every one of its lines was
// handed to the connection for the account that asked (Reply.Done).
func renderInbox(c *call, r pircan.InboxResult) []Reply {
	var out []Reply
	for _, d := range r.Messages {
		lines := messageReplies(d.Message, c.req)
		done := allDelivered(len(lines), d.Settle)
		for i := range lines {
			lines[i].Done = done
		}
		out = append(out, lines...)
	}
	return append(out, Reply{Verb: "INBOX-END", Fields: Object{
		{"returned", len(r.Messages)}, {"total", len(r.Messages) + r.Remaining}, {"offset", 0}}})
}

// allDelivered is the hook of n lines: settle hears, once all n have
// reported, whether every one was delivered.
func allDelivered(n int, settle func(bool)) func(bool) {
	var mu sync.Mutex
	left, all := n, true
	return func(delivered bool) {
		mu.Lock()
		left--
		all = all && delivered
		last, ok := left == 0, all
		mu.Unlock()
		if last {
			settle(ok)
		}
	}
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
func messageReplies(m pircan.Message, req *Request) []Reply {
	text := []rune(m.Text)
	cut := len(text) > pircan.MaxIRCText
	if cut {
		text = text[:pircan.MaxIRCText]
	}
	head := Object{
		{"message_id", m.MessageID},
		{"from", party(m.From)},
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
