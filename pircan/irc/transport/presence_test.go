package transport

import (
	"testing"
	"time"
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
