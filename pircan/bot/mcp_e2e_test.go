package bot_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/irc"
)

// An MCP agent and IRC agents meet across the faces: contacts both ways,
// messages both ways, a 60,000-byte message whole over MCP and cut to 200
// characters on IRC.
func TestMCPCrossFace(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0"})
	ircs := bot.Agents(t, "xf", 2)
	b, c := ircs[0], ircs[1]
	bID, cID := b.Hello(`{"name":"`+b.Nick()+`"}`), c.Hello(`{"name":"`+c.Nick()+`"}`)
	m := newMCPAgent(t, bot, "mcpxf")

	out := m.run(t,
		call("register", args{"description": "An agent on MCP"}),
		call("contact", args{"to": bID, "purpose": "Exchange field reports"}),
	)
	hello := result(t, "register", out[0])
	hasKeys(t, "register", hello, "agent_id", "name", "new", "next", "note")
	mID, _ := hello["agent_id"].(string)
	if !pircan.ValidID(mID) || hello["name"] != m.Account || hello["new"] != true {
		t.Fatalf("register: the name defaults to the account: %s", out[0].Line)
	}
	contact := result(t, "contact", out[1])
	hasKeys(t, "contact", contact, "request_id", "status")
	if contact["status"] != "pending" {
		t.Fatalf("contact: %s", out[1].Line)
	}

	// The IRC target hears of it over IRC, content-free, and accepts.
	if n := b.NextNotify(); n.Str("type") != "contact_request" || n.Int("pending") != 1 || strings.Contains(n.Raw, "field reports") {
		t.Fatalf("NOTIFY: %s", n.Raw)
	}
	reqs, _ := b.AskList(`PIRCAN/1 CONTACTS`)
	if len(reqs) != 1 || reqs[0].Str("request_id") != contact["request_id"] || reqs[0].Str("purpose") != "Exchange field reports" ||
		fmt.Sprint(reqs[0].Fields["from"]) != fmt.Sprint(map[string]any{"agent_id": mID, "name": m.Account}) {
		t.Fatalf("CONTACTS: %v", reqs)
	}
	if r := b.Ask(`PIRCAN/1 ACCEPT {"request_id":"` + reqs[0].Str("request_id") + `"}`); r.Verb != "ACCEPT" {
		t.Fatalf("ACCEPT: %s", r.Raw)
	}
	// The other way: an IRC agent asks the MCP agent, who accepts over MCP.
	r := c.Ask(`PIRCAN/1 CONTACT {"to":"` + mID + `","purpose":"Ask the MCP agent"}`)
	if r.Str("status") != "pending" {
		t.Fatalf("CONTACT to the MCP agent: %s", r.Raw)
	}
	cReq := r.Str("request_id")
	const fromIRC = "Grüße — the report is ready ✓ 東京"
	sent := b.Ask(`PIRCAN/1 SEND {"to":"` + mID + `","text":"` + fromIRC + `"}`)
	if sent.Verb != "SEND" {
		t.Fatalf("SEND to the MCP agent: %s", sent.Raw)
	}

	long := longText(pircan.MaxStoredText)
	out = m.run(t,
		call("list_agreements", nil),
		call("list_contacts", nil),
		call("accept_contact", args{"request_id": cReq}),
		call("read_inbox", nil),
		call("send_direct_message", args{"to": bID, "text": long}),
		call("send_direct_message", args{"to": bID, "text": long + "x"}),
		call("read_inbox", nil),
	)
	ag := listItems(t, "list_agreements", result(t, "list_agreements", out[0]), 1)
	hasKeys(t, "agreement", ag[0], "agreement_id", "with", "role", "scopes", "status", "expires_at")
	hasKeys(t, "agreement's with", sub(ag[0], "with"), "agent_id", "name", "irc_accounts")
	if sub(ag[0], "with")["agent_id"] != bID || fmt.Sprint(sub(ag[0], "with")["irc_accounts"]) != "["+b.Account+"]" ||
		ag[0]["role"] != "requester" || ag[0]["status"] != "active" || fmt.Sprint(ag[0]["scopes"]) != "[message]" {
		t.Errorf("list_agreements: %s", out[0].Line)
	}
	in := listItems(t, "list_contacts", result(t, "list_contacts", out[1]), 1)
	hasKeys(t, "contact item", in[0], "request_id", "from", "purpose", "scopes", "ttl_days", "status", "expires_at")
	if in[0]["request_id"] != cReq || sub(in[0], "from")["agent_id"] != cID || sub(in[0], "from")["name"] != c.Nick() || in[0]["purpose"] != "Ask the MCP agent" {
		t.Errorf("list_contacts: %s", out[1].Line)
	}
	acc := result(t, "accept_contact", out[2])
	hasKeys(t, "accept_contact", acc, "request_id", "status", "agreement_id", "scopes", "expires_at")
	if acc["status"] != "accepted" || !pircan.ValidID(fmt.Sprint(acc["agreement_id"])) {
		t.Errorf("accept_contact: %s", out[2].Line)
	}
	msgs := listItems(t, "read_inbox", result(t, "read_inbox", out[3]), 1)
	hasKeys(t, "message", msgs[0], "message_id", "from", "agreement_id", "conversation_id", "hop", "at", "text")
	if msgs[0]["message_id"] != sent.Str("message_id") || msgs[0]["text"] != fromIRC ||
		sub(msgs[0], "from")["agent_id"] != bID || sub(msgs[0], "from")["name"] != b.Nick() {
		t.Errorf("read_inbox: %s", out[3].Line)
	}
	sendOut := result(t, "send_direct_message", out[4])
	hasKeys(t, "send_direct_message", sendOut, "message_id", "conversation_id", "agreement_id", "hop")
	refused(t, "60,001 bytes", out[5], "too_long", "text")
	listItems(t, "read_inbox again", result(t, "read_inbox again", out[6]), 0)

	// The IRC requester hears its request was answered.
	if n := c.NextNotify(); n.Str("type") != "contact_update" {
		t.Errorf("requester's NOTIFY: %s", n.Raw)
	}
	// On IRC the long message shows cut to 200 characters, saying so.
	if n := b.NextNotify(); n.Str("type") != "message" || n.Int("unread") != 1 {
		t.Fatalf("message NOTIFY: %s", n.Raw)
	}
	lines, end := b.AskList(`PIRCAN/1 INBOX`)
	verbs := []string{}
	for _, l := range lines {
		verbs = append(verbs, l.Verb)
		if len(l.Raw) > irc.MaxReplyBytes {
			t.Errorf("line over %d bytes: %s", irc.MaxReplyBytes, l.Raw)
		}
	}
	if len(lines) < 2 || verbs[0] != "MESSAGE" || verbs[len(verbs)-1] != "MESSAGE-MORE" || lines[len(lines)-1].Fields["truncated"] != true {
		t.Fatalf("INBOX lines: %v", lines)
	}
	joined := bottest.JoinMessages(lines)
	head := string([]rune(long)[:200])
	if len(joined) != 1 || joined[0].Str("text") != head || joined[0].Fields["truncated"] != true ||
		joined[0].Str("message_id") != sendOut["message_id"] || fmt.Sprint(joined[0].Fields["from"]) != fmt.Sprint(map[string]any{"agent_id": mID, "name": m.Account}) ||
		end.Int("total") != 1 || !utf8.ValidString(joined[0].Str("text")) || len(head) <= 200 {
		t.Fatalf("long message on IRC: %v %s", joined, end.Raw)
	}
}
