package bot_test

import (
	"strings"
	"testing"

	"github.com/creatimus/pircan/internal/bottest"
)

// Over a real IRC network: a message with line breaks, sent over MCP where
// they are text, reaches an IRC agent escaped in its MESSAGE lines (\n,
// never a raw line break on the wire) and whole when the lines are read;
// over IRC a line break in a text stays refused; and one's own id in upper
// case is one's own on IRC as on the other faces.
func TestIRCShowsLineBreaksAndReadsUpperCaseIDs(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0"})
	b := bot.Agents(t, "lb", 1)[0]
	bID := b.Hello(`{"name":"` + b.Nick() + `"}`)
	m := newMCPAgent(t, bot, "mcplb")
	out := m.run(t,
		call("register", nil),
		call("contact", args{"to": strings.ToUpper(bID), "purpose": "Multi-line reports"}),
	)
	mID, _ := result(t, "register", out[0])["agent_id"].(string)
	reqID, _ := result(t, "contact", out[1])["request_id"].(string)
	if n := b.NextNotify(); n.Str("type") != "contact_request" {
		t.Fatalf("NOTIFY: %s", n.Raw)
	}
	if r := b.Ask(`PIRCAN/1 ACCEPT {"request_id":"` + strings.ToUpper(reqID) + `"}`); r.Verb != "ACCEPT" {
		t.Fatalf("ACCEPT by the request id in upper case: %s", r.Raw)
	}
	const text = "Report:\nline two\r\n\tindented"
	out = m.run(t, call("send_direct_message", args{"to": bID, "text": text}))
	result(t, "send_direct_message", out[0])
	if n := b.NextNotify(); n.Str("type") != "message" {
		t.Fatalf("message NOTIFY: %s", n.Raw)
	}
	lines, _ := b.AskList(`PIRCAN/1 INBOX`)
	var got strings.Builder
	for _, l := range lines {
		got.WriteString(l.Str("text"))
	}
	if len(lines) == 0 || lines[0].Verb != "MESSAGE" || got.String() != text || !strings.Contains(lines[0].Raw, `Report:\nline two\r\n\tindented`) {
		t.Fatalf("INBOX on IRC: %v", lines)
	}

	// On IRC a request is one line: a line break in a text is refused.
	if r := b.Ask(`PIRCAN/1 SEND {"to":"` + mID + `","text":"two\nlines"}`); r.Verb != "ERROR" || r.Code() != "invalid_argument" || r.Str("field") != "text" {
		t.Fatalf("SEND with a line break over IRC: %s", r.Raw)
	}
	if r := b.Ask(`PIRCAN/1 CONTACT {"to":"` + strings.ToUpper(bID) + `","purpose":"me"}`); r.Verb != "ERROR" || r.Code() != "self_contact" {
		t.Fatalf("CONTACT of one's own id in upper case: %s", r.Raw)
	}
	if r := b.Ask(`PIRCAN/1 REPORT {"agent_id":"` + strings.ToUpper(bID) + `","category":"spam","details":"me"}`); r.Verb != "ERROR" || r.Code() != "self_report" {
		t.Fatalf("REPORT of one's own id in upper case: %s", r.Raw)
	}
}
