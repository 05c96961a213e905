package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ergochat/irc-go/ircmsg"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/ircnet"
	"github.com/creatimus/pircan/pircan/irc"
)

// Over the real network: with a 64-character id, every line of a reply
// arrives (MESSAGE whole, with re on each of its lines; CONTACT-ITEM,
// ACCEPT and AGREEMENT with four 64-character task scopes; HELP), each a
// whole JSON object within the IRC line, and the bot logs no reply it
// could not fit.

var longID = strings.Repeat("L", irc.MaxIDChars)

// nextRaw waits for the next reply line and checks it as the recipient got
// it: the whole IRC line within 512 bytes, its JSON an object with re.
func nextRaw(t *testing.T, a *bottest.Agent) bottest.Reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	fromBot := a.FromBot()
	m, err := a.Expect(ctx, func(m ircmsg.Message) bool {
		return fromBot(m) && !strings.HasPrefix(m.Params[1], irc.Prefix+" NOTIFY ") &&
			!strings.HasPrefix(m.Params[1], irc.Prefix+" WELCOME ")
	})
	if err != nil {
		t.Fatalf("no reply: %v", err)
	}
	text := m.Params[1]
	if n := len(":" + m.Source + " NOTICE " + m.Params[0] + " :" + text + "\r\n"); n > 512 {
		t.Fatalf("IRC line of %d bytes: %s", n, text)
	}
	r, err := bottest.ParseReply(text)
	if err != nil {
		t.Fatal(err)
	}
	verb, js, _ := strings.Cut(strings.TrimPrefix(text, irc.Prefix+" "), " ")
	bare := js
	if i := strings.LastIndex(js, `,"re":"`); i >= 0 {
		bare = js[:i] + "}"
	}
	relayed := verb == "MESSAGE" || verb == "TASK" // re may stand outside the 350 bytes (DESIGN.md)
	if limit := irc.MaxReplyBytes; len(text) > limit && !(relayed && len(irc.Prefix+" "+verb+" "+bare) <= limit) {
		t.Fatalf("reply of %d bytes: %s", len(text), text)
	}
	if r.Str("re") != longID {
		t.Fatalf("reply without its re: %s", text)
	}
	return r
}

// askAll sends a request and reads its lines up to the -END line (or the
// one reply of a one-reply verb).
func askAll(t *testing.T, a *bottest.Agent, line string) []bottest.Reply {
	t.Helper()
	a.Send(line)
	var out []bottest.Reply
	for {
		r := nextRaw(t, a)
		out = append(out, r)
		if r.Verb == "ERROR" || !strings.HasSuffix(r.Verb, "-RESULT") && !strings.HasSuffix(r.Verb, "-ITEM") &&
			r.Verb != "MESSAGE" && r.Verb != "MESSAGE-MORE" && r.Verb != "TASK" && r.Verb != "TASK-MORE" &&
			r.Verb != "AGREEMENT" && r.Verb != "CHANNEL" {
			return out
		}
	}
}

func TestLongIDRepliesArriveWhole(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testLongIDRepliesArriveWhole)
}

func testLongIDRepliesArriveWhole(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	var log syncBuffer
	bot := bottest.Start(t, bottest.Options{Kind: kind, Limits: raised(), Log: &log})
	a, b, aID, bID := pair(t, bot, "size")
	agree(t, a, b, bID)

	// HELP, and HELP for one verb.
	r := askAll(t, a, `PIRCAN/1 HELP {"id":"`+longID+`"}`)
	if verbs, _ := r[0].Fields["verbs"].([]any); r[0].Verb != "HELP" || len(verbs) < 20 || r[0].Str("docs") == "" || r[0].Str("syntax") == "" {
		t.Fatalf("HELP: %s", r[0].Raw)
	}
	if r := askAll(t, a, `PIRCAN/1 HELP {"verb":"report","id":"`+longID+`"}`); r[0].Str("summary") == "" || r[0].Fields["truncated"] != nil {
		t.Fatalf("HELP REPORT: %s", r[0].Raw)
	}

	// Messages of 15 and of 200 characters, multibyte and escaped.
	texts := []string{"fifteen chars!!", strings.Repeat("ab\"é", 50)}
	for _, text := range texts {
		js, _ := json.Marshal(text)
		if r := a.Ask(`PIRCAN/1 SEND {"to":"` + bID + `","text":` + string(js) + `}`); r.Verb != "SEND" {
			t.Fatalf("SEND: %s", r.Raw)
		}
	}
	lines := askAll(t, b, `PIRCAN/1 INBOX {"limit":5,"id":"`+longID+`"}`)
	if end := lines[len(lines)-1]; end.Verb != "INBOX-END" || end.Int("returned") != 2 {
		t.Fatalf("INBOX-END: %s", end.Raw)
	}
	msgs := bottest.JoinMessages(lines[:len(lines)-1])
	if len(msgs) != 2 || len(lines) < 4 {
		t.Fatalf("INBOX: %d messages in %d lines: %v", len(msgs), len(lines), lines)
	}
	for i, m := range msgs {
		from, _ := m.Fields["from"].(map[string]any)
		if m.Verb != "MESSAGE" || m.Str("text") != texts[i] || from["agent_id"] != aID || from["name"] != a.Nick() || m.Fields["truncated"] != nil {
			t.Fatalf("message %d: %s (joined text %q)", i, m.Raw, m.Str("text"))
		}
	}
	for _, l := range lines {
		if l.Verb == "MESSAGE" && l.Fields["continues"] == true && l.Fields["truncated"] != true {
			t.Fatalf("a MESSAGE that continues must say truncated: %s", l.Raw)
		}
	}

	// Four task scopes of 64 characters: CONTACT-ITEM, ACCEPT, AGREEMENT.
	c := bot.Agents(t, "sizec", 1)[0]
	c.Hello("")
	var scopes []string
	for i := range 4 {
		scopes = append(scopes, fmt.Sprintf(`"task:%d%s"`, i, strings.Repeat("k", 63)))
	}
	req := `PIRCAN/1 CONTACT {"to":"` + bID + `","purpose":"p","scopes":[` + strings.Join(scopes, ",") + `],"id":"x"}`
	if len(req) > irc.MaxRequestBytes {
		t.Fatalf("fixture: request of %d bytes", len(req))
	}
	b.Ask(`PIRCAN/1 POLICY {"policy":"agent-decides"}`)
	cr := c.Ask(req)
	if cr.Str("status") != "pending" {
		t.Fatalf("CONTACT: %s", cr.Raw)
	}
	items := askAll(t, b, `PIRCAN/1 CONTACTS {"id":"`+longID+`"}`)
	if len(items) != 2 || items[0].Verb != "CONTACT-ITEM" || items[0].Str("request_id") != cr.Str("request_id") || items[1].Verb != "CONTACTS-END" {
		t.Fatalf("CONTACTS: %v", items)
	}
	checkScopes(t, items[0], scopes)
	acc := askAll(t, b, `PIRCAN/1 ACCEPT {"request_id":"`+cr.Str("request_id")+`","id":"`+longID+`"}`)
	if acc[0].Verb != "ACCEPT" || acc[0].Str("agreement_id") == "" {
		t.Fatalf("ACCEPT: %s", acc[0].Raw)
	}
	checkScopes(t, acc[0], scopes)
	ags := askAll(t, c, `PIRCAN/1 AGREEMENTS {"id":"`+longID+`"}`)
	if len(ags) != 2 || ags[0].Verb != "AGREEMENT" || ags[0].Str("agreement_id") != acc[0].Str("agreement_id") {
		t.Fatalf("AGREEMENTS: %v", ags)
	}
	checkScopes(t, ags[0], scopes)
	if with, _ := ags[0].Fields["with"].(map[string]any); with["agent_id"] != bID || with["name"] == "" {
		t.Fatalf("AGREEMENT with: %s", ags[0].Raw)
	}

	if strings.Contains(log.String(), "does not fit") {
		t.Fatalf("the bot logged a reply it could not fit:\n%s", log.String())
	}
}

// checkScopes: the scopes shown are the first of those granted, whole,
// and a shortened list says truncated.
func checkScopes(t *testing.T, r bottest.Reply, want []string) {
	t.Helper()
	got, _ := r.Fields["scopes"].([]any)
	for i, g := range got {
		if i >= len(want) || `"`+fmt.Sprint(g)+`"` != want[i] {
			t.Fatalf("%s scopes %v are not the first of %v", r.Verb, got, want)
		}
	}
	if (len(got) < len(want)) != (r.Fields["truncated"] == true) {
		t.Fatalf("%s: %d of %d scopes, truncated %v: %s", r.Verb, len(got), len(want), r.Fields["truncated"], r.Raw)
	}
}

// A browser's User-Agent is whatever it sent: C1 and bidi controls in it
// reach the owner's IRC client only as JSON escapes, inside the budget.
func TestLoginBrowserControlsEscaped(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Limits: raised(), HTTPAddr: "127.0.0.1:0"})
	owner := bot.Agents(t, "uaown", 1)[0]
	ua := "Evil/1.0 \u009b31m \u202egpj.exe\u202c \u0085 " + strings.Repeat("\u2066x", 60)
	browser := newPortalClient(t, bot, ua)
	code := browser.code()
	owner.Send(`PIRCAN/1 LOGIN {"code":"` + code + `","id":"` + longID + `"}`)
	r := nextRaw(t, owner)
	if r.Verb != "LOGIN" || r.Fields["signed_in"] != true {
		t.Fatalf("LOGIN: %s", r.Raw)
	}
	if i := strings.IndexFunc(r.Raw, func(c rune) bool {
		return c >= 0x80 && c <= 0x9f || c >= 0x202a && c <= 0x202e || c >= 0x2066 && c <= 0x2069
	}); i >= 0 {
		t.Fatalf("raw control at byte %d of %q", i, r.Raw)
	}
	for _, esc := range []string{`\u009b31m`, `\u202egpj.exe\u202c`, `\u0085`} {
		if !strings.Contains(r.Raw, esc) {
			t.Errorf("LOGIN does not carry %s escaped: %s", esc, r.Raw)
		}
	}
	if got := r.Str("browser"); !strings.HasPrefix(ua, got) || len(got) < len("Evil/1.0 \u009b31m \u202egpj.exe\u202c \u0085") || r.Fields["truncated"] != true {
		t.Fatalf("browser %q is not the User-Agent's start, cut with truncated: %s", got, r.Raw)
	}
}
