package bot_test

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/ircnet"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/irc"
)

// agree makes a an agreement with b (b auto-accepts message requests).
func agree(t *testing.T, a, b *bottest.Agent, bID string) string {
	t.Helper()
	b.Ask(`PIRCAN/1 POLICY {"policy":"auto-accept"}`)
	r := a.Ask(`PIRCAN/1 CONTACT {"to":"` + bID + `","purpose":"talk"}`)
	if r.Str("status") != "accepted" {
		t.Fatalf("agreement: %s", r.Raw)
	}
	return r.Str("agreement_id")
}

func TestSendAndInbox(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Limits: raised()})
	a, b, aID, bID := pair(t, bot, "msg")
	if r := a.Ask(`PIRCAN/1 SEND {"to":"` + bID + `","text":"hello"}`); r.Code() != "not_authorized" {
		t.Fatalf("SEND without an agreement: %s", r.Raw)
	}
	agreementID := agree(t, a, b, bID)

	r := a.Ask(`PIRCAN/1 SEND {"to":"` + bID + `","text":"Sample data is ready.","id":"s"}`)
	if r.Verb != "SEND" || r.Str("agreement_id") != agreementID || r.Int("hop") != 0 || r.Str("conversation_id") != r.Str("message_id") || r.Str("re") != "s" {
		t.Fatalf("SEND: %s", r.Raw)
	}
	first := r.Str("message_id")
	bad := []struct{ args, code, field string }{
		{`{"to":"` + bID + `"}`, "invalid_argument", "text"},
		{`{"to":"` + bID + `","text":"` + strings.Repeat("x", 201) + `"}`, "too_long", "text"},
		{`{"to":"` + bID + `","text":"  "}`, "empty", "text"},
		{`{"to":"` + bID + `","text":"x","reply_to":"00000000-0000-4000-8000-000000000000"}`, "invalid_argument", "reply_to"},
		{`{"to":"` + aID + `","text":"to myself"}`, "not_authorized", ""},
	}
	for _, c := range bad {
		if r := a.Ask(`PIRCAN/1 SEND ` + c.args); r.Code() != c.code || r.Str("field") != c.field {
			t.Errorf("SEND %s: %s, want %s/%s", c.args, r.Raw, c.code, c.field)
		}
	}
	// 200 characters (not bytes) fit.
	if r := a.Ask(`PIRCAN/1 SEND {"to":"` + bID + `","text":"` + strings.Repeat("é", 150) + `"}`); r.Verb != "SEND" {
		t.Fatalf("150 two-byte characters: %s", r.Raw)
	}

	items, end := b.AskList(`PIRCAN/1 INBOX {"limit":1,"id":"i"}`)
	items = bottest.JoinMessages(items)
	if len(items) != 1 || end.Verb != "INBOX-END" || end.Int("returned") != 1 || end.Int("total") != 2 || end.Str("re") != "i" {
		t.Fatalf("INBOX: %v %s", items, end.Raw)
	}
	m := items[0]
	from, _ := m.Fields["from"].(map[string]any)
	if m.Str("message_id") != first || from["agent_id"] != aID || from["name"] != a.Nick() || m.Str("text") != "Sample data is ready." ||
		m.Str("agreement_id") != agreementID || m.Str("conversation_id") != first || m.Int("hop") != 0 || m.Str("at") == "" || m.Str("re") != "i" {
		t.Fatalf("MESSAGE: %s", m.Raw)
	}
	// Marked read: the next INBOX has the second message only, then nothing.
	items, _ = b.AskList(`PIRCAN/1 INBOX`)
	items = bottest.JoinMessages(items)
	if len(items) != 1 || items[0].Str("text") != strings.Repeat("é", 150) {
		t.Fatalf("second INBOX: %v", items)
	}
	if items, end := b.AskList(`PIRCAN/1 INBOX`); len(items) != 0 || end.Int("total") != 0 {
		t.Fatalf("empty INBOX: %v %s", items, end.Raw)
	}

	// A reply joins the conversation one hop deeper.
	r = b.Ask(`PIRCAN/1 SEND {"to":"` + aID + `","text":"Thanks!","reply_to":"` + first + `"}`)
	if r.Int("hop") != 1 || r.Str("conversation_id") != first {
		t.Fatalf("reply: %s", r.Raw)
	}
	// A long message (up to 60,000 bytes, as the MCP face will send) shows
	// cut on IRC, saying so.
	long := strings.Repeat("Long report. ", 2000)
	if _, err := bot.Store().Send(t.Context(), pircan.Actor{AgentID: bID}, pircan.NewMessage{To: aID, Text: long}, pircan.SendRule{Limits: pircan.DefaultLimits}); err != nil {
		t.Fatal(err)
	}
	items, _ = a.AskList(`PIRCAN/1 INBOX {"limit":5}`)
	for _, it := range items {
		if len(it.Raw) > irc.MaxReplyBytes {
			t.Fatalf("line over 350 bytes: %s", it.Raw)
		}
	}
	items = bottest.JoinMessages(items)
	if len(items) != 2 || items[1].Fields["truncated"] != true || items[1].Str("text") != string([]rune(long)[:200]) {
		t.Fatalf("long message on IRC: %v", items)
	}
	// The audit log knows sizes and ids, never the text.
	entries, err := bot.Store().AuditLatest(t.Context(), 1000)
	must(t, err)
	sends := 0
	for _, e := range entries {
		if e.Action == "message.send" {
			sends++
		}
		if strings.Contains(string(e.Details), "Sample data") || strings.Contains(string(e.Details), "Long report") {
			t.Fatalf("message text in the audit log: %s", e.Details)
		}
	}
	if sends != 4 {
		t.Fatalf("%d message.send audit rows, want 4", sends)
	}
}

// Two agents that auto-reply to each other are stopped by the network: a
// chain deeper than 8 hops is loop_limit, and a conversation of more than
// 40 messages an hour is conversation_budget.
func TestAutoReplyLoopIsStopped(t *testing.T) {
	t.Parallel()
	pacing := bottest.FastPacing // a long exchange; fairness has its own test
	bot := bottest.Start(t, bottest.Options{Limits: raised(), Pacing: pacing})
	a, b, aID, bID := pair(t, bot, "loop")
	agree(t, a, b, bID)

	// Each agent answers the last message it received, as a naive bot would.
	last := a.Ask(`PIRCAN/1 SEND {"to":"` + bID + `","text":"ping"}`).Str("message_id")
	sender, to := b, aID
	var stop bottest.Reply
	for hop := 1; hop <= 20; hop++ {
		r := sender.Ask(`PIRCAN/1 SEND {"to":"` + to + `","text":"pong","reply_to":"` + last + `"}`)
		if r.Verb != "SEND" {
			stop = r
			break
		}
		if r.Int("hop") != hop {
			t.Fatalf("hop %d: %s", hop, r.Raw)
		}
		last = r.Str("message_id")
		if sender == b {
			sender, to = a, bID
		} else {
			sender, to = b, aID
		}
	}
	if stop.Code() != "loop_limit" {
		t.Fatalf("the loop was not stopped at 8 hops: %s", stop.Raw)
	}

	// The conversation budget, and the chain's rules in full, are the
	// core's (pircan/messages_test.go TestSendReplyChains): here the
	// loop is stopped over IRC, with its code on the wire.
}

// Two connections of one account INBOX at once: every message comes out
// exactly once.
func TestRacingInbox(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testRacingInbox)
}

func testRacingInbox(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Kind: kind, Limits: raised(), Pacing: bottest.FastPacing})
	a, b, aID, bID := pair(t, bot, "inbox")
	agree(t, a, b, bID)
	want := map[string]bool{}
	for i := range 30 {
		m, err := bot.Store().Send(t.Context(), pircan.Actor{AgentID: aID}, pircan.NewMessage{To: bID, Text: fmt.Sprint("m", i)}, pircan.SendRule{Limits: pircan.DefaultLimits})
		must(t, err)
		want[m.MessageID] = true
	}
	twin, err := bot.Net.Dial(t.Context(), bottest.Unique("twin"))
	must(t, err)
	t.Cleanup(func() { twin.Close() })
	must(t, twin.Identify(t.Context(), b.Account, "pw-"+b.Account))
	readers := []*bottest.Agent{b, bot.Adopt(t, twin, b.Account)}
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	for _, r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				items, _ := r.AskList(`PIRCAN/1 INBOX {"limit":4}`)
				items = bottest.JoinMessages(items)
				if len(items) == 0 {
					return
				}
				mu.Lock()
				for _, it := range items {
					got = append(got, it.Str("message_id"))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Strings(got)
	for i, id := range got {
		if !want[id] || i > 0 && got[i-1] == id {
			t.Fatalf("message %s returned twice or never sent", id)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d of %d messages read", len(got), len(want))
	}
}
