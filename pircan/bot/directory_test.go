package bot_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/ircnet"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/irc"
)

func TestHelloRegistersAndUpdates(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testHelloRegistersAndUpdates)
}

func testHelloRegistersAndUpdates(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Kind: kind})
	a := bot.Agents(t, "hello", 1)[0]

	r := a.Ask(`PIRCAN/1 HELLO {"id":"h1"}`)
	if r.Verb != "HELLO" || r.Fields["new"] != true || r.Str("name") != a.Nick() || r.Str("re") != "h1" ||
		r.Str("next") != "FIND, CHANNELS, JOIN" || r.Str("note") == "" || !pircan.ValidID(r.Str("agent_id")) {
		t.Fatalf("first HELLO: %s", r.Raw)
	}
	id := r.Str("agent_id")
	r = a.Ask(`PIRCAN/1 HELLO {"name":"Hazmat Agent","description":"Chemical release assessment","capabilities":["hazmat","Chemistry"],"card_url":"https://example.org/agent-card.json"}`)
	if r.Fields["new"] != false || r.Str("agent_id") != id || r.Str("name") != "Hazmat Agent" {
		t.Fatalf("repeated HELLO: %s", r.Raw)
	}
	r = a.Ask(`PIRCAN/1 WHOAMI {"id":"w"}`)
	if r.Str("agent_id") != id || r.Str("name") != "Hazmat Agent" || fmt.Sprint(r.Fields["capabilities"]) != "[hazmat Chemistry]" ||
		r.Fields["owner"] != nil || r.Str("re") != "w" {
		t.Fatalf("WHOAMI: %s", r.Raw)
	}
	// Only the given fields change.
	a.Ask(`PIRCAN/1 HELLO {"description":"Now with toxicology"}`)
	items, _ := a.AskList(`PIRCAN/1 FIND {"q":"toxicology"}`)
	if len(items) != 1 || items[0].Str("name") != "Hazmat Agent" || fmt.Sprint(items[0].Fields["capabilities"]) != "[hazmat Chemistry]" {
		t.Fatalf("after a partial update: %v", items)
	}

	bad := []struct{ args, code, field string }{
		{`{"name":"` + strings.Repeat("n", 81) + `"}`, "too_long", "name"},
		{`{"description":"` + strings.Repeat("d", 301) + `"}`, "too_long", "description"},
		{`{"capabilities":[` + strings.Repeat(`"c",`, 20) + `"c21"]}`, "invalid_argument", "capabilities"},
		{`{"capabilities":["` + strings.Repeat("c", 65) + `"]}`, "too_long", "capabilities"},
		{`{"capabilities":["a","A"]}`, "invalid_argument", "capabilities"},
		{`{"capabilities":"hazmat"}`, "invalid_argument", "capabilities"},
		{`{"card_url":"http://example.org/card"}`, "invalid_argument", "card_url"},
		{`{"card_url":"https://` + strings.Repeat("u", 300) + `"}`, "too_long", "card_url"},
		{`{"name":"line\r\nPRIVMSG #agents :pwned"}`, "invalid_argument", "name"},
		{`{"description":"nul\u0000"}`, "invalid_argument", "description"},
		{`{"nmae":"typo"}`, "invalid_argument", "nmae"},
	}
	before := auditCount(t, bot)
	for _, c := range bad {
		r := a.Ask(`PIRCAN/1 HELLO ` + c.args)
		if r.Code() != c.code || r.Str("field") != c.field {
			t.Errorf("HELLO %s: got %s, want %s/%s", c.args, r.Raw, c.code, c.field)
		}
	}
	if auditCount(t, bot) != before {
		t.Errorf("a refused HELLO changed the profile")
	}
	if r := a.Ask(`PIRCAN/1 WHOAMI`); r.Str("name") != "Hazmat Agent" {
		t.Fatalf("profile after refused updates: %s", r.Raw)
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	limits := pircan.DefaultLimits
	limits.PerCaller = 100 // many FINDs from one agent in this test
	bot := bottest.Start(t, bottest.Options{Limits: limits})
	agents := bot.Agents(t, "finder", 8)
	for i, a := range agents {
		caps := `["translation"]`
		if i%2 == 0 {
			caps = `["Hazmat","chemistry"]`
		}
		a.Hello(fmt.Sprintf(`{"name":"Agent %d","description":"Handles %s releases","capabilities":%s}`, i,
			map[bool]string{true: "Ammonia", false: "paper"}[i < 3], caps))
	}
	me := agents[0]

	items, end := me.AskList(`PIRCAN/1 FIND {"capability":"HAZMAT","id":"f"}`)
	if len(items) != 4 || end.Verb != "FIND-END" || end.Int("total") != 4 || end.Int("returned") != 4 || end.Int("offset") != 0 {
		t.Fatalf("capability: %v %s", items, end.Raw)
	}
	for _, it := range append(items, end) {
		if it.Str("re") != "f" {
			t.Errorf("every line carries re: %s", it.Raw)
		}
	}
	first := items[0]
	for _, k := range []string{"agent_id", "name", "nick", "capabilities", "description"} {
		if _, ok := first.Fields[k]; !ok {
			t.Errorf("FIND-RESULT lacks %s: %s", k, first.Raw)
		}
	}
	// The filters' rules (exact capability, q over name and description,
	// both together) are the core's: pircan/directory_test.go TestFind.
	if _, end := me.AskList(`PIRCAN/1 FIND {"q":"aMMONIA"}`); end.Int("total") != 3 {
		t.Errorf("q is case-insensitive over description: %s", end.Raw)
	}
	// Paging: default limit 5, then the rest, then past the end.
	seen := map[string]bool{}
	items, end = me.AskList(`PIRCAN/1 FIND`)
	if len(items) != 5 || end.Int("total") != 8 {
		t.Fatalf("default page: %d items, %s", len(items), end.Raw)
	}
	for _, it := range items {
		seen[it.Str("agent_id")] = true
	}
	items, end = me.AskList(`PIRCAN/1 FIND {"offset":5,"limit":10}`)
	if len(items) != 3 || end.Int("offset") != 5 || end.Int("returned") != 3 {
		t.Fatalf("second page: %d items, %s", len(items), end.Raw)
	}
	for _, it := range items {
		if seen[it.Str("agent_id")] {
			t.Errorf("pages overlap at %s", it.Str("agent_id"))
		}
	}
	if items, end = me.AskList(`PIRCAN/1 FIND {"offset":50}`); len(items) != 0 || end.Int("total") != 8 {
		t.Fatalf("past the end: %s", end.Raw)
	}
	if items, _ = me.AskList(`PIRCAN/1 FIND {"limit":1}`); len(items) != 1 {
		t.Fatalf("limit 1: %d", len(items))
	}
}

// Identity follows the NickServ account, never the nick.
func TestIdentityFollowsAccount(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testIdentityFollowsAccount)
}

func testIdentityFollowsAccount(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Kind: kind})
	a := bot.Agents(t, "ident", 1)[0]
	id := a.Hello(`{"name":"Nick Changer"}`)
	oldNick := a.Nick()
	newNick := bottest.Unique("renamed")
	if err := a.SetNick(t.Context(), newNick); err != nil {
		t.Fatal(err)
	}
	if r := a.Ask(`PIRCAN/1 WHOAMI`); r.Str("agent_id") != id {
		t.Fatalf("after a nick change: %s", r.Raw)
	}
	items, _ := a.AskList(`PIRCAN/1 FIND {"q":"nick changer"}`)
	if len(items) != 1 || items[0].Str("nick") != newNick {
		t.Fatalf("FIND shows the nick last seen: %v", items)
	}
	// Someone else takes the old nick: it is just a label, no identity.
	imp := bot.Guest(t, "imp")
	if err := imp.SetNick(t.Context(), oldNick); err != nil {
		t.Fatal(err)
	}
	if r := imp.Ask(`PIRCAN/1 WHOAMI`); r.Code() != "not_identified" {
		t.Fatalf("old nick without the account: %s", r.Raw)
	}
	// Another account is another agent, whatever its nick.
	other := bot.Agents(t, "other", 1)[0]
	if r := other.Ask(`PIRCAN/1 WHOAMI`); r.Code() != "not_registered" {
		t.Fatalf("other account: %s", r.Raw)
	}
}

// Whatever an agent writes into its profile, every reply is one valid JSON
// line of at most 350 bytes, and no text can start a new IRC line.
func TestRepliesStayOneSafeLine(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testRepliesStayOneSafeLine)
}

func testRepliesStayOneSafeLine(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Kind: kind})
	a := bot.Agents(t, "safe", 1)[0]
	// 80 four-byte runes, quotes, backslashes and U+2028 all fit the field rules.
	name := strings.Repeat("\U0001F9EA", 40) + strings.Repeat(`"\`, 18) + "\u2028end"
	desc := strings.Repeat("Ω\"\\", 50)
	// A request is at most 400 bytes: one field per HELLO.
	for _, f := range []map[string]any{{"name": name}, {"description": desc},
		{"capabilities": []string{strings.Repeat("é", 64), strings.Repeat("ü", 64)}}} {
		js, _ := json.Marshal(f)
		a.Hello(string(js))
	}
	a.Send(`PIRCAN/1 FIND {"id":"t"}`)
	for _, line := range []string{a.NextLine(), a.NextLine()} {
		if len(line) > irc.MaxReplyBytes || strings.ContainsAny(line, "\r\n\x00") {
			t.Fatalf("unsafe line (%d bytes): %q", len(line), line)
		}
		r, err := bottest.ParseReply(line)
		if err != nil {
			t.Fatal(err)
		}
		if r.Verb == "FIND-RESULT" {
			if r.Fields["truncated"] != true || r.Str("re") != "t" {
				t.Errorf("a shortened reply says so and keeps re: %s", line)
			}
			if !strings.HasPrefix(name, r.Str("name")) {
				t.Errorf("name was not cut at a character boundary: %q", r.Str("name"))
			}
		}
	}
	// The stored profile is whole: WHOAMI fits and returns the full name.
	if r := a.Ask(`PIRCAN/1 WHOAMI`); r.Str("name") != name && r.Fields["truncated"] != true {
		t.Fatalf("WHOAMI: %s", r.Raw)
	}
}
