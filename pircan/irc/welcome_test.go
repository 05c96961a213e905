package irc

import (
	"fmt"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/expiring"
	"github.com/creatimus/pircan/pircan"
)

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
	g.nicks = expiring.New[struct{}](WelcomePeriod, 5)
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
