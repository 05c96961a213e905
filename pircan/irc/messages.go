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
// a 350-byte line: see continuedReplies. The sender's name comes before the
// text.
func messageReplies(m pircan.Message, req *Request) []Reply {
	head := Object{
		{"message_id", m.MessageID},
		{"from", party(m.From)},
		{"agreement_id", m.AgreementID}, {"conversation_id", m.ConversationID},
		{"hop", m.Hop}, {"at", timeText(m.At)},
	}
	return continuedReplies("MESSAGE", head, Field{"message_id", m.MessageID}, m.Text, req)
}

// continuedReplies renders a text of up to 200 characters (MESSAGE, TASK)
// over a head line and <verb>-MORE lines. The head line carries what fits,
// with `"continues":true` and `"truncated":true` (a client that knows only
// the spec sees that the line is not the whole text), and the -MORE lines,
// named by key, carry the rest in order: an IRC agent gets every character
// it may be sent over IRC. The head's fields come before the text: the text
// moves to -MORE lines first, and only a head line that cannot hold a name
// whole beside an empty text has it shortened (by Encode). A longer text
// (sent over MCP or A2A) is cut at 200 characters with "truncated" on the
// last line, as the spec says. Every line gets the request's re (finish).
func continuedReplies(verb string, head Object, key Field, full string, req *Request) []Reply {
	text := []rune(full)
	cut := len(text) > pircan.MaxIRCText
	if cut {
		text = text[:pircan.MaxIRCText]
	}
	line, fields, first := verb, head, true
	var out []Reply
	for {
		n := fitRunes(line, first, fields, text, cut, req)
		out = append(out, Reply{Verb: line, Fields: pieceFields(first, fields, text, n, cut)})
		if n == len(text) {
			return out
		}
		text = text[n:]
		line, fields, first = verb+"-MORE", Object{key}, false
	}
}

// pieceFields is one line of a text: fields, then the first n runes of
// text (a plain string: fitRunes measured it, so the encoder never cuts a
// piece whose rest is on the next line) and the line's flags.
func pieceFields(first bool, fields Object, text []rune, n int, cut bool) Object {
	line := fields.With("text", string(text[:n]))
	switch {
	case n < len(text) && first:
		return line.With("continues", true).With("truncated", true)
	case n < len(text):
		return line.With("continues", true)
	case cut:
		return line.With("truncated", true)
	}
	return line
}

// fitRunes is how many runes of text fit whole in the line, with its flags
// and the request's re, within Encode's budget for the verb. A head line
// may carry none (its fields come first); a -MORE line always carries at
// least one rune, so the text moves on.
func fitRunes(verb string, first bool, fields Object, text []rune, cut bool, req *Request) int {
	fits := func(n int) bool {
		f := pieceFields(first, fields, text, n, cut)
		if req != nil && req.HasID {
			f = f.With("re", req.ID)
		}
		return overBy(verb, f) <= 0
	}
	if fits(len(text)) {
		return len(text)
	}
	lo, hi := 0, len(text)-1 // the flags are the same for every n < len(text)
	if !first {
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
