package expiring

import (
	"testing"
	"time"
)

func TestExpiringCapAndOrder(t *testing.T) {
	c := newLimitsClock()
	e := New[int](time.Minute, 3)
	for i := range 3 {
		if _, ok := e.Put(fmt.Sprint(i), i, c.now()); !ok {
			t.Fatalf("put %d refused below the cap", i)
		}
		c.advance(10 * time.Second)
	}
	if _, ok := e.Put("x", 9, c.now()); ok {
		t.Fatal("put beyond the cap accepted")
	}
	if e.Len() != 3 {
		t.Fatalf("len %d, want 3", e.Len())
	}
	if v, ok := e.Get("1", c.now()); !ok || *v != 1 {
		t.Fatalf("get 1 = %v %v", v, ok)
	}
	// t0+60s: "0" (put at t0) has expired; "1" and "2" have not.
	c.advance(30 * time.Second)
	if _, ok := e.Get("0", c.now()); ok {
		t.Error("an entry outlived its ttl")
	}
	if _, ok := e.Put("x", 9, c.now()); !ok {
		t.Error("put refused though an entry had expired")
	}
	if _, ok := e.Get("1", c.now()); !ok {
		t.Error(`"1" dropped before its ttl`)
	}
	if _, ok := e.Put("y", 9, c.now()); ok {
		t.Error("put beyond the cap accepted once full again")
	}
}

// A table of many expired entries is emptied a few entries per call, and
// an expired entry the front has not reached yet is never returned.
func TestExpiringExpiresInO1PerCall(t *testing.T) {
	c := newLimitsClock()
	const n = 10000
	e := New[int](time.Minute, n)
	for i := range n {
		e.Put(fmt.Sprint(i), i, c.now())
	}
	c.advance(time.Minute)
	if _, ok := e.Get(fmt.Sprint(n-1), c.now()); ok {
		t.Fatal("the newest expired entry was returned")
	}
	if got := e.Len(); got < n-expirePerCall-1 {
		t.Fatalf("one call dropped %d entries, want at most %d", n-got, expirePerCall+1)
	}
	calls := 0
	for e.Len() > 0 {
		e.Get("absent", c.now())
		calls++
		if calls > n {
			t.Fatal("expired entries never all dropped")
		}
	}
	if want := (n - expirePerCall - 1) / expirePerCall; calls < want {
		t.Errorf("emptied in %d calls, want at least %d (at most %d per call)", calls, want, expirePerCall)
	}
}

// A full table of nick windows does not open a way around the limits: a
// nick without a window of its own is held to the shared window.
func TestLimiterFullTableUsesSharedLimit(t *testing.T) {
	c := newLimitsClock()
	limits := pircan.DefaultLimits
	limits.Unidentified = 10
	l := newRequestLimiter(limits, c.now)
	l.nicks.max = 2
	l.accounts.max = 1
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

func TestWelcomeOncePerNickPerHour(t *testing.T) {
	c := newLimitsClock()
	t0 := c.now()
	g := newWelcomeGate(c.now)
	expect := func(nick, origin string, want WelcomeOutcome) {
		t.Helper()
		if got := g.admit(Sender{Nick: nick, Casemap: pircan.RFC1459}.NickKey(), origin, true); got != want {
			t.Fatalf("%s at %v: %v, want %v", nick, c.now().Sub(t0), got, want)
		}
	}
	expect("Bob[1]", "b@h1", WelcomeSent)
	expect("bob{1}", "b@h2", WelcomeRepeat) // IRC case-folding
	expect("carol", "c@h", WelcomeSent)
	c.t = t0.Add(time.Hour - time.Nanosecond)
	expect("bob[1]", "b@h3", WelcomeRepeat)
	c.t = t0.Add(time.Hour)
	expect("bob[1]", "b@h4", WelcomeSent)
	c.t = t0.Add(90 * time.Minute)
	expect("bob[1]", "b@h5", WelcomeRepeat) // the period restarts from the last welcome
}

// One connection rotating nicks is welcomed a few times, then not.
func TestWelcomePerOrigin(t *testing.T) {
	c := newLimitsClock()
	g := newWelcomeGate(c.now)
	got := map[WelcomeOutcome]int{}
	for i := range 100 {
		got[g.admit(fmt.Sprintf("rot%d", i), "~flood@10.0.0.1", true)]++
	}
	if got[WelcomeSent] != welcomeOriginMax || got[WelcomeRefused] != 100-welcomeOriginMax {
		t.Errorf("outcomes %v, want %d sent", got, welcomeOriginMax)
	}
	if g.admit("other", "~agent@10.0.0.2", true) != WelcomeSent {
		t.Error("another connection was refused")
	}
	c.advance(welcomeOriginWindow)
	if g.admit("rot-again", "~flood@10.0.0.1", true) != WelcomeSent {
		t.Error("the connection was not welcomed again after its window")
	}
}

// Unidentified joiners from many connections share a network-wide bucket;
// identified joiners do not spend it.
func TestWelcomeNetworkBucket(t *testing.T) {
	c := newLimitsClock()
	g := newWelcomeGate(c.now)
	sent := 0
	for i := range 1000 {
		if g.admit(fmt.Sprintf("guest%d", i), fmt.Sprintf("g@host%d", i), false) == WelcomeSent {
			sent++
		}
	}
	if sent != welcomeNetworkBurst {
		t.Errorf("%d of 1000 distinct guests welcomed at once, want the burst of %d", sent, welcomeNetworkBurst)
	}
	if g.admit("agent", "a@hostA", true) != WelcomeSent {
		t.Error("an identified joiner was refused by the guests' bucket")
	}
	c.advance(10 * time.Second)
	sent = 0
	for i := range 100 {
		if g.admit(fmt.Sprintf("later%d", i), fmt.Sprintf("l@host%d", i), false) == WelcomeSent {
			sent++
		}
	}
	if want := 10 * welcomeNetworkRate; sent != want {
		t.Errorf("%d guests welcomed 10 s later, want %d", sent, want)
	}
}

func TestWelcomeTableBounded(t *testing.T) {
	c := newLimitsClock()
	g := newWelcomeGate(c.now)
	g.nicks.max = 5
	for i := range 5 {
		if g.admit(fmt.Sprintf("n%d", i), "", true) != WelcomeSent {
			t.Fatalf("n%d refused below the cap", i)
		}
	}
	if g.admit("n5", "", true) != WelcomeRefused {
		t.Error("a nick welcomed beyond the table's cap")
	}
	if g.admit("n1", "", true) != WelcomeRepeat {
		t.Error("a remembered nick forgotten")
	}
	c.advance(WelcomePeriod)
	if g.admit("n5", "", true) != WelcomeSent {
		t.Error("refused after the remembered nicks' period ended")
	}
}
