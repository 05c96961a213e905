package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/ircnet"
	"github.com/creatimus/pircan/pircan"
)

// Every malformed input gets its spec code, echoes the id when it could be
// read, and changes nothing.
func TestRequestErrors(t *testing.T) {
	t.Parallel()
	// More than 20 requests from one account: the per-caller limit is
	// raised here (TestRequestLimits covers it).
	limits := pircan.DefaultLimits
	limits.PerCaller = 1000
	bot := bottest.Start(t, bottest.Options{Limits: limits})
	agents := bot.Agents(t, "err", 2)
	reg, unreg := agents[0], agents[1]
	reg.Hello("")
	guest := bot.Guest(t, "guest")
	before := auditCount(t, bot)

	cases := []struct {
		who            *bottest.Agent
		line, code, re string
		field          string
	}{
		{reg, "hello there", "not_pircan", "", ""},
		{reg, "PIRCAN/2 HELP", "not_pircan", "", ""},
		{reg, "PIRCAN/1", "missing_verb", "", ""},
		{reg, `PIRCAN/1 {"id":"x"}`, "missing_verb", "x", ""}, // the object where the verb belongs still has the id
		{reg, "PIRCAN/1 FROB", "unknown_verb", "", ""},
		{reg, `PIRCAN/1 FROB {"id":"u1"}`, "unknown_verb", "u1", ""},
		{reg, `PIRCAN/1 FIND {"q":`, "invalid_json", "", ""},
		{reg, `PIRCAN/1 FIND [1,2]`, "invalid_json", "", ""},
		{reg, `PIRCAN/1 FIND {"q":"a"} trailing`, "invalid_json", "", ""},
		{reg, `PIRCAN/1 FIND {"q":"a","q":"b"}`, "invalid_json", "", ""},
		{reg, `PIRCAN/1 FIND {"id":5}`, "invalid_id", "", ""},
		{reg, `PIRCAN/1 FIND {"id":"` + strings.Repeat("x", 65) + `"}`, "invalid_id", "", ""},
		{reg, `PIRCAN/1 FIND {"limit":11,"id":"L"}`, "invalid_argument", "L", "limit"},
		{reg, `PIRCAN/1 FIND {"limit":0}`, "invalid_argument", "", "limit"},
		{reg, `PIRCAN/1 FIND {"limit":"5"}`, "invalid_argument", "", "limit"},
		{reg, `PIRCAN/1 FIND {"offset":-1}`, "invalid_argument", "", "offset"},
		{reg, `PIRCAN/1 FIND {"bogus":1,"id":"b"}`, "invalid_argument", "b", "bogus"},
		{reg, `PIRCAN/1 CHANNELS {"limit":21}`, "invalid_argument", "", "limit"},
		{reg, `PIRCAN/1 FIND {"q":"   "}`, "empty", "", "q"},
		{reg, `PIRCAN/1 FIND {"id":"long","q":"` + strings.Repeat("y", 400) + `"}`, "too_long", "long", ""},
		{reg, `PIRCAN/1 HELLO {"name":""}`, "empty", "", "name"},
		{reg, `PIRCAN/1 JOIN {}`, "invalid_argument", "", "channel"},
		{reg, `PIRCAN/1 JOIN {"channel":"nohash"}`, "invalid_argument", "", "channel"},
		{guest, `PIRCAN/1 HELLO {"id":"g"}`, "not_identified", "g", ""},
		{guest, `PIRCAN/1 WHOAMI`, "not_identified", "", ""},
		{guest, `PIRCAN/1 FIND`, "not_identified", "", ""},
		{unreg, `PIRCAN/1 WHOAMI {"id":"w"}`, "not_registered", "w", ""},
		{unreg, `PIRCAN/1 FIND`, "not_registered", "", ""},
		{unreg, `PIRCAN/1 CHANNELS`, "not_registered", "", ""},
		{unreg, `PIRCAN/1 JOIN {"channel":"#x"}`, "not_registered", "", ""},
	}
	for _, c := range cases {
		r := c.who.Ask(c.line)
		if r.Verb != "ERROR" || r.Code() != c.code {
			t.Errorf("%s: got %s, want code %s", c.line, r.Raw, c.code)
			continue
		}
		if r.Str("re") != c.re {
			t.Errorf("%s: re = %q, want %q", c.line, r.Str("re"), c.re)
		}
		if r.Str("field") != c.field {
			t.Errorf("%s: field = %q, want %q", c.line, r.Str("field"), c.field)
		}
		if r.Str("message") == "" || r.Fields["verb"] == nil {
			t.Errorf("%s: an ERROR names the verb and says why: %s", c.line, r.Raw)
		}
	}

	// Nothing of the above registered anyone or changed a profile.
	if after := auditCount(t, bot); after != before {
		t.Errorf("bad requests changed state: %d audit entries before, %d after", before, after)
	}

	// NOTICEs and CTCPs are never answered.
	reg.Notice(bot.Nick, "PIRCAN/1 ECHO")
	reg.Privmsg(bot.Nick, "\x01VERSION\x01")
	reg.Quiet(1500 * time.Millisecond)
}

func TestCaseInsensitiveVerbAndPlainHelp(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{})
	a := bot.Agents(t, "ci", 1)[0]
	a.Hello("")
	if r := a.Ask(`pircan/1 whoami {"id":"lc"}`); r.Verb != "WHOAMI" || r.Str("re") != "lc" {
		t.Fatalf("lower-case request: %s", r.Raw)
	}
	r := a.Ask(`PIRCAN/1 HELP`)
	verbs, _ := r.Fields["verbs"].([]any)
	if r.Verb != "HELP" || len(verbs) < 7 || r.Str("syntax") == "" {
		t.Fatalf("HELP: %s", r.Raw)
	}
	if r := a.Ask(`PIRCAN/1 HELP {"verb":"find"}`); r.Str("verb") != "FIND" || !strings.Contains(r.Str("args"), "capability") || r.Str("needs") != "registered" {
		t.Fatalf("HELP FIND: %s", r.Raw)
	}
	// Plain help is text for people: several lines, none of them JSON.
	a.Send("help")
	first := a.NextLine()
	if strings.HasPrefix(first, "PIRCAN/1") || !strings.Contains(first, "PIRCAN/1 <VERB>") {
		t.Fatalf("plain help: %q", first)
	}
	for range len(verbs) + 1 {
		if line := a.NextLine(); strings.HasPrefix(line, "PIRCAN/1 ") {
			t.Fatalf("plain help line looks like a reply: %q", line)
		}
	}
}

// ECHO needs no registration and shows the account PIRCAN verified.
func TestEcho(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testEcho)
}

func testEcho(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Kind: kind})
	a := bot.Agents(t, "echo", 1)[0]
	g := bot.Guest(t, "echoguest")
	r := a.Ask(`PIRCAN/1 ECHO {"text":"hi \"there\"","id":"e"}`)
	if r.Str("text") != `hi "there"` || r.Str("account") != a.Account || r.Fields["identified"] != true || r.Str("re") != "e" {
		t.Fatalf("identified ECHO: %s", r.Raw)
	}
	r = g.Ask(`PIRCAN/1 ECHO`)
	if r.Fields["account"] != nil || r.Fields["identified"] != false {
		t.Fatalf("guest ECHO: %s", r.Raw)
	}
}

// auditCount counts audit entries: every state change writes one.
func auditCount(t *testing.T, bot *bottest.Bot) int {
	t.Helper()
	entries, err := bot.Store().AuditLatest(t.Context(), 100000)
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}
