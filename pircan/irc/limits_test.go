package irc

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/expiring"
	"github.com/creatimus/pircan/pircan"
)

// limitsClock is a settable clock for the limiter tests.
type limitsClock struct {
	mu sync.Mutex
	t  time.Time
}

func newLimitsClock() *limitsClock {
	return &limitsClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *limitsClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *limitsClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func verdictName(v verdict) string {
	switch v {
	case allow:
		return "allow"
	case denyOnce:
		return "denyOnce"
	case denySilent:
		return "denySilent"
	}
	return fmt.Sprintf("verdict(%d)", int(v))
}

func expectVerdict(t *testing.T, l *requestLimiter, s Sender, want verdict, what string) time.Time {
	t.Helper()
	got, until := l.check(s)
	if got != want {
		t.Fatalf("%s: check(%+v) = %s, want %s", what, s, verdictName(got), verdictName(want))
	}
	return until
}

func TestDefaultLimitsAreTheSpecs(t *testing.T) {
	want := pircan.Limits{PerCaller: 20, Unidentified: 60, Window: time.Minute, RegistrationsHour: 30,
		ContactsHour: 10, PendingMax: 20, MessagesHour: 120, MaxHops: 8, ConversationHour: 40, ReportsHour: 5,
		LoginsHour: 10, SignInStartsHour: 10,
		HTTPPerMinute: 120, PortalPerMinute: 60, // DESIGN.md "Limits" (MCP); the portal's is PIRCAN's own
		// The resource library's are PIRCAN's own too (the spec sets none):
		// publications per hour per agent, content bytes per agent in all.
		ResourcesHour: 20, ResourceBytes: 2_000_000,
		TasksHour: 60, // tasks per hour per requester: PIRCAN's own
		// The forum's: 600 requests a minute is the Parley reference's; the
		// hourly and daily counts are PIRCAN's own, access applications
		// (network-wide and per address) and feature requests included.
		ForumPerMinute: 600, ForumThreadsHour: 30, ForumMessagesHour: 300, ForumBoardsDay: 5,
		ForumApplicationsHour: 30, ForumApplicationsAddressHour: 3, ForumFeaturesDay: 10}
	if pircan.DefaultLimits != want {
		t.Errorf("DefaultLimits = %+v, want spec §4's (and PIRCAN's own) %+v", pircan.DefaultLimits, want)
	}
}

func TestLimiterPerAccount(t *testing.T) {
	c := newLimitsClock()
	t0 := c.now()
	l := newRequestLimiter(pircan.DefaultLimits, c.now)
	alice := Sender{Account: "alice", Nick: "alice_bot"}

	for i := range 20 {
		until := expectVerdict(t, l, alice, allow, fmt.Sprintf("request %d", i+1))
		if !until.Equal(t0.Add(time.Minute)) {
			t.Fatalf("until = %v, want %v", until, t0.Add(time.Minute))
		}
		c.advance(time.Second)
	}
	// Over the limit: told once, then silence.
	until := expectVerdict(t, l, alice, denyOnce, "request 21")
	if !until.Equal(t0.Add(time.Minute)) {
		t.Errorf("denyOnce until = %v, want the window's end %v", until, t0.Add(time.Minute))
	}
	for i := 22; i <= 60; i++ {
		expectVerdict(t, l, alice, denySilent, fmt.Sprintf("request %d", i))
	}
	// Another nick of the same account changes nothing.
	expectVerdict(t, l, Sender{Account: "alice", Nick: "other"}, denySilent, "same account, other nick")
	// Another account is not affected.
	expectVerdict(t, l, Sender{Account: "bob", Nick: "alice_bot"}, allow, "another account")

	// Still silent just before the window ends.
	c.t = t0.Add(time.Minute - time.Nanosecond)
	expectVerdict(t, l, alice, denySilent, "1ns before the window ends")
	// A fresh window: 20 more, and the caller is told again once.
	c.t = t0.Add(time.Minute)
	for i := range 20 {
		until := expectVerdict(t, l, alice, allow, fmt.Sprintf("new window, request %d", i+1))
		if !until.Equal(t0.Add(2 * time.Minute)) {
			t.Fatalf("new window until = %v, want %v", until, t0.Add(2*time.Minute))
		}
	}
	expectVerdict(t, l, alice, denyOnce, "new window, request 21")
	expectVerdict(t, l, alice, denySilent, "new window, request 22")
}

// The window is fixed from the first request: 20 requests spread over the
// minute exhaust it as well as 20 at once.
func TestLimiterWindowStartsAtFirstRequest(t *testing.T) {
	c := newLimitsClock()
	t0 := c.now()
	l := newRequestLimiter(pircan.DefaultLimits, c.now)
	a := Sender{Account: "a"}
	c.advance(10 * time.Second) // the window starts at the first request, not at creation
	start := c.now()
	for range 20 {
		expectVerdict(t, l, a, allow, "spread request")
		c.advance(2 * time.Second) // last at start+38s
	}
	c.t = start.Add(59 * time.Second)
	until := expectVerdict(t, l, a, denyOnce, "21st in the window")
	if !until.Equal(start.Add(time.Minute)) {
		t.Errorf("until = %v, want %v (t0 %v)", until, start.Add(time.Minute), t0)
	}
	c.t = start.Add(time.Minute)
	expectVerdict(t, l, a, allow, "after the window")
}

func TestLimiterCustomLimits(t *testing.T) {
	c := newLimitsClock()
	l := newRequestLimiter(pircan.Limits{PerCaller: 2, Unidentified: 3, Window: 10 * time.Second}, c.now)
	a := Sender{Account: "a"}
	expectVerdict(t, l, a, allow, "1")
	expectVerdict(t, l, a, allow, "2")
	expectVerdict(t, l, a, denyOnce, "3")
	c.advance(10 * time.Second)
	expectVerdict(t, l, a, allow, "after a 10s window")
}

func TestLimiterUnidentifiedPerNick(t *testing.T) {
	c := newLimitsClock()
	l := newRequestLimiter(pircan.DefaultLimits, c.now)
	for i := range 20 {
		// Nicks compare with IRC case-folding.
		nick := []string{"Bob[1]", "bob{1}", "BOB[1]"}[i%3]
		expectVerdict(t, l, Sender{Nick: nick}, allow, fmt.Sprintf("request %d from %s", i+1, nick))
	}
	expectVerdict(t, l, Sender{Nick: "bob{1}"}, denyOnce, "request 21")
	expectVerdict(t, l, Sender{Nick: "Bob[1]"}, denySilent, "request 22")
	// An identified caller whose account equals the nick is another key.
	expectVerdict(t, l, Sender{Account: "bob{1}", Nick: "bob{1}"}, allow, "account named like the nick")
	// Another nick still has its own 20 (and the shared window has room).
	expectVerdict(t, l, Sender{Nick: "carol"}, allow, "another nick")
	c.advance(time.Minute)
	expectVerdict(t, l, Sender{Nick: "bob{1}"}, allow, "next window")
}

func TestLimiterUnidentifiedShared(t *testing.T) {
	c := newLimitsClock()
	t0 := c.now()
	l := newRequestLimiter(pircan.DefaultLimits, c.now)
	// Three nicks use up the shared 60.
	for n := range 3 {
		for i := range 20 {
			expectVerdict(t, l, Sender{Nick: fmt.Sprintf("guest%d", n)}, allow, fmt.Sprintf("guest%d request %d", n, i+1))
		}
	}
	// A nick change does not buy more: a fresh nick, under its own limit,
	// is refused by the shared window, told once.
	c.advance(30 * time.Second)
	until := expectVerdict(t, l, Sender{Nick: "guest3"}, denyOnce, "fresh nick over the shared limit")
	if !until.Equal(t0.Add(time.Minute)) {
		t.Errorf("until = %v, want the shared window's end %v", until, t0.Add(time.Minute))
	}
	expectVerdict(t, l, Sender{Nick: "guest3"}, denySilent, "fresh nick again")
	if v, _ := l.check(Sender{Nick: "guest4"}); v == allow {
		t.Errorf("another fresh nick was allowed past the shared limit")
	}
	// Identified callers do not share that window.
	expectVerdict(t, l, Sender{Account: "alice", Nick: "guest5"}, allow, "identified caller")
	// The shared window ends at t0+1m; guest3's own window (started at
	// t0+30s) still has room.
	c.t = t0.Add(time.Minute)
	expectVerdict(t, l, Sender{Nick: "guest3"}, allow, "after the shared window")
}

// Identified traffic must not use up the unidentified budget either.
func TestLimiterIdentifiedDoesNotCountAsUnidentified(t *testing.T) {
	c := newLimitsClock()
	l := newRequestLimiter(pircan.DefaultLimits, c.now)
	for n := range 10 {
		for range 20 {
			expectVerdict(t, l, Sender{Account: fmt.Sprintf("acct%d", n), Nick: "x"}, allow, "identified")
		}
	}
	expectVerdict(t, l, Sender{Nick: "x"}, allow, "unidentified after 200 identified requests")
}

// The shared budget is for requests unidentified callers may make. A nick
// that is already refused by its own limit must not keep using it up: else
// one unidentified nick sending 61 lines a minute silences every other
// unidentified caller, and they are never even told (the shared window's
// one rate_limited reply went to nobody).
func TestLimiterRefusedRequestsDoNotUseSharedBudget(t *testing.T) {
	c := newLimitsClock()
	l := newRequestLimiter(pircan.DefaultLimits, c.now)
	for range 100 {
		l.check(Sender{Nick: "flooder"})
	}
	v, _ := l.check(Sender{Nick: "newcomer"})
	if v != allow {
		t.Errorf("after one nick sent 100 requests (20 served), a new unidentified nick gets %v on its first request; "+
			"want allow (the shared 60 has 40 left)", verdictName(v))
	}
}

func TestLimiterConcurrent(t *testing.T) {
	c := newLimitsClock()
	l := newRequestLimiter(pircan.DefaultLimits, c.now)
	var mu sync.Mutex
	counts := map[verdict]int{}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			v, _ := l.check(Sender{Account: "alice"})
			mu.Lock()
			counts[v]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if counts[allow] != 20 || counts[denyOnce] != 1 || counts[denySilent] != 29 {
		t.Errorf("verdicts %v (allow, denyOnce, denySilent), want 20 allow, 1 denyOnce, 29 denySilent", counts)
	}
}

func TestLimiterForgetsFinishedWindows(t *testing.T) {
	c := newLimitsClock()
	l := newRequestLimiter(pircan.DefaultLimits, c.now)
	for i := range 100 {
		l.check(Sender{Account: fmt.Sprintf("a%d", i)})
		l.check(Sender{Nick: fmt.Sprintf("n%d", i)})
	}
	if l.accounts.Len() != 100 || l.nicks.Len() != 100 {
		t.Fatalf("%d account and %d nick windows, want 100 each", l.accounts.Len(), l.nicks.Len())
	}
	c.advance(time.Minute)
	// Each call drops a few finished windows (a lookup and a put, each up
	// to perCall), never the whole table.
	perCall := expiryPerCall(t)
	expectVerdict(t, l, Sender{Account: "a0"}, allow, "after every window ended")
	if n, least := l.accounts.Len(), 100-2*perCall; n < least || n > 100 {
		t.Errorf("one call left %d account windows, want %d..100 (O(1) expiry)", n, least)
	}
	for i := range 100 {
		expectVerdict(t, l, Sender{Account: fmt.Sprintf("b%d", i)}, allow, "new account")
	}
	// 101 calls dropped up to 101*2*perCall finished windows: only the live ones remain.
	if n := l.accounts.Len(); n != 101 {
		t.Errorf("%d account windows, want 101 live ones", n)
	}
}

// expiryPerCall is how many finished entries one call of an expiring table
// drops at most, measured on a table (the bound is internal/expiring's).
func expiryPerCall(t *testing.T) int {
	t.Helper()
	const n = 1000
	var t0 time.Time
	e := expiring.New[struct{}](time.Second, n)
	for i := range n {
		e.Put(fmt.Sprint(i), struct{}{}, t0)
	}
	e.Room(t0.Add(time.Second)) // one call, every entry finished
	perCall := n - e.Len()
	if perCall < 1 || perCall >= n/2 {
		t.Fatalf("one call dropped %d of %d finished entries: want a few (O(1) expiry)", perCall, n)
	}
	return perCall
}

// A full table of nick windows does not open a way around the limits: a
// nick without a window of its own is held to the shared window.
func TestLimiterFullTableUsesSharedLimit(t *testing.T) {
	c := newLimitsClock()
	limits := pircan.DefaultLimits
	limits.Unidentified = 10
	l := newRequestLimiter(limits, c.now)
	l.nicks = expiring.New[window](limits.Window, 2)
	l.accounts = expiring.New[window](limits.Window, 1)
	expectVerdict(t, l, Sender{Nick: "a"}, allow, "a")
	expectVerdict(t, l, Sender{Nick: "b"}, allow, "b")
	for i := range 8 {
		expectVerdict(t, l, Sender{Nick: fmt.Sprintf("fresh%d", i)}, allow, "a nick with no window, shared budget left")
	}
	if l.nicks.Len() != 2 {
		t.Fatalf("%d nick windows, want the cap of 2", l.nicks.Len())
	}
	// The shared 10 are spent; a windowless nick is refused, silently
	// (nothing remembers that it was told).
	expectVerdict(t, l, Sender{Nick: "fresh9"}, denySilent, "over the shared limit without a window")
	expectVerdict(t, l, Sender{Nick: "a"}, denyOnce, "over the shared limit with a window")
	// An account that finds its table full is limited as unidentified.
	expectVerdict(t, l, Sender{Account: "acct1"}, allow, "first account")
	expectVerdict(t, l, Sender{Account: "acct2"}, denySilent, "account with a full table, shared window spent")
	c.advance(time.Minute)
	expectVerdict(t, l, Sender{Account: "acct2"}, allow, "after the windows ended")
}

// Past the shared limit, a flood of fresh nicks is told rate_limited at
// most Unidentified times per window, not once per nick.
func TestLimiterRefusalRepliesBounded(t *testing.T) {
	c := newLimitsClock()
	l := newRequestLimiter(pircan.DefaultLimits, c.now)
	counts := map[verdict]int{}
	for i := range 5000 {
		v, _ := l.check(Sender{Nick: fmt.Sprintf("guest%d", i)})
		counts[v]++
	}
	if counts[allow] != 60 || counts[denyOnce] != 60 || counts[denySilent] != 5000-120 {
		t.Errorf("verdicts %v (allow, denyOnce, denySilent), want 60, 60, %d", counts, 5000-120)
	}
	c.advance(time.Minute)
	expectVerdict(t, l, Sender{Nick: "guest1"}, allow, "next window")
}
