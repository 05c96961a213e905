package bot_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/pircan"
)

// 20 requests a minute per account; the 21st is told rate_limited once,
// then PIRCAN stays silent until the window passes.
func TestRequestLimits(t *testing.T) {
	t.Parallel()
	limits := pircan.DefaultLimits
	limits.Window = 4 * time.Second // the spec's counts, a shorter window so the test can see it end
	bot := bottest.Start(t, bottest.Options{Limits: limits})
	a := bot.Agents(t, "busy", 1)[0]
	for i := range 20 {
		a.Send(fmt.Sprintf(`PIRCAN/1 ECHO {"id":"%d"}`, i))
	}
	start := time.Now()
	a.Send(`PIRCAN/1 ECHO {"id":"over"}`)
	for i := range 5 {
		a.Send(fmt.Sprintf(`PIRCAN/1 ECHO {"id":"silent%d"}`, i))
	}
	for i := range 20 {
		if r := a.Next(); r.Verb != "ECHO" || r.Str("re") != fmt.Sprint(i) {
			t.Fatalf("reply %d: %s", i, r.Raw)
		}
	}
	r := a.Next()
	if r.Code() != "rate_limited" || r.Str("re") != "over" || r.Int("retry_after") < 1 {
		t.Fatalf("21st: %s", r.Raw)
	}
	a.Quiet(time.Until(start.Add(limits.Window)) - 200*time.Millisecond)
	time.Sleep(time.Until(start.Add(limits.Window + 100*time.Millisecond)))
	if r := a.Ask(`PIRCAN/1 ECHO {"id":"again"}`); r.Verb != "ECHO" || r.Str("re") != "again" {
		t.Fatalf("after the window: %s", r.Raw)
	}
}

// Callers without an account share 60 requests a minute, and changing nick
// does not buy more.
func TestUnidentifiedLimits(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{})
	guests := []*bottest.Agent{bot.Guest(t, "g"), bot.Guest(t, "g"), bot.Guest(t, "g"), bot.Guest(t, "g")}
	// Per nick: 20, then one rate_limited. A new nick is the same caller for
	// the shared window.
	g := guests[0]
	for range 21 {
		g.Send(`PIRCAN/1 ECHO`)
	}
	counts := countReplies(t, g, 21)
	if counts["ECHO"] != 20 || counts["rate_limited"] != 1 {
		t.Fatalf("one guest: %v", counts)
	}
	// Three more guests: 20 each would be 60 more, but only 40 remain in
	// the shared window (the 21st above did not count towards serving).
	var wg sync.WaitGroup
	results := make([]map[string]int, 3)
	for _, g := range guests[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				g.Send(`PIRCAN/1 ECHO`)
			}
		}()
	}
	wg.Wait()
	served, limited := 0, 0
	for i, g := range guests[1:] {
		results[i] = collectUntilQuiet(g)
		served += results[i]["ECHO"]
		limited += results[i]["rate_limited"]
	}
	if served+20 > 60 || served+20 < 59 || limited == 0 {
		t.Fatalf("shared window: served %d more (%v), limited %d", served, results, limited)
	}
	// The first guest changes nick: still over the shared limit.
	must(t, g.SetNick(t.Context(), bottest.Unique("fresh")))
	g.Send(`PIRCAN/1 ECHO`)
	if c := collectUntilQuiet(g); c["ECHO"] != 0 {
		t.Fatalf("a new nick reset the shared limit: %v", c)
	}
	// An identified agent is not affected.
	if r := bot.Agents(t, "ident", 1)[0].Ask(`PIRCAN/1 ECHO`); r.Verb != "ECHO" {
		t.Fatalf("identified caller: %s", r.Raw)
	}
}

func countReplies(t *testing.T, a *bottest.Agent, n int) map[string]int {
	t.Helper()
	out := map[string]int{}
	for range n {
		r := a.Next()
		key := r.Verb
		if r.Verb == "ERROR" {
			key = r.Code()
		}
		out[key]++
	}
	return out
}

// collectUntilQuiet gathers replies until the bot says nothing for 2 s.
func collectUntilQuiet(a *bottest.Agent) map[string]int {
	out := map[string]int{}
	for {
		line, ok := a.TryNextLine(2 * time.Second)
		if !ok {
			return out
		}
		r, err := bottest.ParseReply(line)
		if err != nil {
			continue
		}
		key := r.Verb
		if r.Verb == "ERROR" {
			key = r.Code()
		}
		out[key]++
	}
}

// 30 new registrations an hour network-wide, counted from the database.
func TestRegistrationPause(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{})
	// 29 registrations happened in the last hour (through the same store
	// call HELLO uses).
	for i := range 29 {
		if _, _, err := bot.Store().Hello(t.Context(), fmt.Sprintf("seed%d", i), "seed", pircan.Profile{}, 30); err != nil {
			t.Fatal(err)
		}
	}
	agents := bot.Agents(t, "late", 2)
	if r := agents[0].Ask(`PIRCAN/1 HELLO`); r.Fields["new"] != true {
		t.Fatalf("30th registration: %s", r.Raw)
	}
	if r := agents[1].Ask(`PIRCAN/1 HELLO {"id":"p"}`); r.Code() != "registration_paused" || r.Str("re") != "p" {
		t.Fatalf("31st registration: %s", r.Raw)
	}
	// An existing agent can still update its profile.
	if r := agents[0].Ask(`PIRCAN/1 HELLO {"name":"still fine"}`); r.Verb != "HELLO" || r.Fields["new"] != false {
		t.Fatalf("update while paused: %s", r.Raw)
	}
	// Registrations older than an hour no longer count.
	if _, err := bot.Store().Pool().Exec(t.Context(), "UPDATE agents SET created_at = now() - interval '61 minutes'"); err != nil {
		t.Fatal(err)
	}
	if r := agents[1].Ask(`PIRCAN/1 HELLO`); r.Fields["new"] != true {
		t.Fatalf("after the hour: %s", r.Raw)
	}
}

// A long list to one agent never delays another's reply: output is paced
// per recipient and shared round-robin.
func TestPacingIsFair(t *testing.T) {
	t.Parallel()
	limits := pircan.DefaultLimits
	limits.PerCaller = 100
	bot := bottest.Start(t, bottest.Options{Limits: limits})
	agents := bot.Agents(t, "pace", 2)
	greedy, other := agents[0], agents[1]
	greedy.Hello("")
	// 16 replies for greedy: 5 at once, then 2 a second.
	for range 4 {
		greedy.Send(`PIRCAN/1 HELP {"verb":"FIND"}`)
		greedy.Send(`PIRCAN/1 ECHO {"text":"filler"}`)
		greedy.Send(`PIRCAN/1 ECHO {"text":"filler"}`)
		greedy.Send(`PIRCAN/1 ECHO {"text":"filler"}`)
	}
	// Once the server has read greedy's 16 requests, it relays them to the
	// bot before other's.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	must(t, greedy.Sync(ctx))
	other.Send(`PIRCAN/1 ECHO {"id":"quick"}`)
	if r := other.Next(); r.Str("re") != "quick" {
		t.Fatalf("other: %s", r.Raw)
	}
	otherDone := time.Now()
	// Greedy's 16 replies: 5 at once, then 2 a second, so most of them
	// arrive after other's reply.
	var last time.Time
	for range 16 {
		greedy.Next()
		last = time.Now()
	}
	if !last.After(otherDone) {
		t.Fatalf("greedy's list was finished before the other agent's single reply")
	}
}
