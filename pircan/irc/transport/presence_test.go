package transport

import (
	"fmt"
	"testing"
	"time"

	"github.com/creatimus/pircan/pircan/irc"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestPresenceFollowsAccounts(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	p := NewPresence(clock.now)
	if !p.Seen("Alice", "alice") {
		t.Fatal("first sighting is news")
	}
	if p.Seen("alice", "ALICE") {
		t.Fatal("same account, same nick (case-folded) is not news")
	}
	if nick, ok := p.Nick("ALICE"); !ok || nick != "ALICE" {
		t.Fatalf("Nick = %q %v", nick, ok)
	}
	// A nick change with the account tag keeps the account.
	if acct, fresh := p.NickChanged("alice", "alice_", "alice"); acct != "alice" || !fresh {
		t.Fatalf("NickChanged = %q %v", acct, fresh)
	}
	if nick, _ := p.Nick("alice"); nick != "alice_" {
		t.Fatalf("after NICK: %q", nick)
	}
	// Someone else is seen on alice's old nick: no effect on alice.
	p.Seen("mallory", "alice")
	if nick, ok := p.Nick("alice"); !ok || nick != "alice_" {
		t.Fatalf("alice after mallory took her old nick: %q %v", nick, ok)
	}
	// Mallory takes alice's current nick under her own account: alice is
	// no longer there.
	p.Seen("mallory", "alice_")
	if _, ok := p.Nick("alice"); ok {
		t.Fatal("a nick that changed hands still points to alice")
	}
	// QUIT forgets; so does a logout, and 24 hours.
	p.Seen("bob", "bob")
	p.Gone("BOB")
	if _, ok := p.Nick("bob"); ok {
		t.Fatal("QUIT kept bob")
	}
	p.Seen("carol", "carol")
	clock.t = clock.t.Add(PresenceTTL + time.Second)
	if _, ok := p.Nick("carol"); ok {
		t.Fatal("a sighting older than 24 h still counts")
	}
	if !p.Seen("carol", "carol") {
		t.Fatal("seen again after 24 h is news")
	}
	p.Forget("carol", "carol")
	if _, ok := p.Nick("carol"); ok {
		t.Fatal("Forget kept carol")
	}
	// A WHO about an old nick comes back after the account renamed and
	// spoke: the newer sighting stands (its replies still go there).
	p.Seen("erin", "erin")
	p.Seen("erin", "erin_renamed")
	p.Forget("erin", "erin")
	if nick, ok := p.Nick("erin"); !ok || nick != "erin_renamed" {
		t.Fatalf("after Forget of the old nick: %q %v, want erin_renamed", nick, ok)
	}
}

func TestPresenceNickChangeWithoutTag(t *testing.T) {
	p := NewPresence(nil)
	p.Seen("dave", "dave")
	// No account tag on the NICK line: the known account moves with it.
	if acct, _ := p.NickChanged("dave", "dave2", ""); acct != "dave" {
		t.Fatalf("account %q", acct)
	}
	// An unknown nick changing is nobody.
	if acct, fresh := p.NickChanged("stranger", "stranger2", ""); acct != "" || fresh {
		t.Fatalf("stranger: %q %v", acct, fresh)
	}
	p.Clear()
	if _, ok := p.Nick("dave"); ok {
		t.Fatal("Clear kept dave")
	}
}

// A client rotating through nicks the bot never hears it leave (it shares
// no channel) leaves a sighting per nick: the table stays within its bound,
// forgetting the oldest. A forgotten account's nick, taken by someone
// else, never receives the account's lines.
func TestPresenceBounded(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	p := NewPresence(clock.now)
	p.max = 100
	p.Seen("alice", "alice")
	key := p.Key(irc.Sender{Account: "alice", Nick: "alice"})
	for i := range 10 * p.max {
		clock.t = clock.t.Add(time.Millisecond)
		p.Seen("", fmt.Sprint("guest", i))
		if n := p.Len(); n > p.max {
			t.Fatalf("after %d guest nicks the table holds %d, over its bound %d", i+1, n, p.max)
		}
	}
	if _, ok := p.Nick("alice"); ok {
		t.Fatal("the oldest sighting (alice) was kept past the bound")
	}
	if _, ok := p.guest(p.fold(fmt.Sprint("guest", 10*p.max-1))); !ok {
		t.Fatal("the newest guest was forgotten")
	}
	p.Seen("", "alice") // someone unidentified takes alice's nick
	p.mu.Lock()
	nick, ok := p.resolve(key)
	p.mu.Unlock()
	if ok {
		t.Fatalf("alice's lines resolve to %q, now held by a guest", nick)
	}
}

// Sightings past PresenceTTL go a few per call, never in one sweep of the
// whole table, and none is used once expired.
func TestPresenceExpiresInO1PerCall(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	p := NewPresence(clock.now)
	const n = 1000
	for i := range n {
		p.Seen(fmt.Sprint("acct", i), fmt.Sprint("nick", i))
	}
	clock.t = clock.t.Add(PresenceTTL + time.Second)
	if _, ok := p.Nick("acct0"); ok {
		t.Fatal("an expired sighting still counts")
	}
	p.Seen("", "fresh")
	if got := p.Len(); got < n+1-expirePerCall {
		t.Fatalf("one call forgot %d sightings, want at most %d", n+1-got, expirePerCall)
	}
	calls := 1
	for p.Len() > 1 {
		p.Seen("", "fresh")
		if calls++; calls > n {
			t.Fatal("expired sightings never all forgotten")
		}
	}
	p.mu.Lock()
	left := len(p.byAccount)
	p.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d accounts still point at forgotten nicks", left)
	}
}
