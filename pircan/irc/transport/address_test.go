package transport

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ergochat/irc-go/ircmsg"
	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"

	"github.com/creatimus/pircan/pircan/irc"
)

// addressed is a Conn without a network, fed events as its read goroutine
// would be, whose writes are recorded.
type addressed struct {
	t       *testing.T
	c       *Conn
	numeric map[string]func(ircmsg.Message)
	whos    [][2]string // WHOs sent and not yet answered: nick, token
}

func newAddressed(t *testing.T, isupport map[string]string) *addressed {
	a := &addressed{t: t, c: New(Config{}, zerolog.Nop()), numeric: map[string]func(ircmsg.Message){}}
	a.c.setCasemap(isupport)
	a.c.monitorCallbacks(func(code string, f func(ircmsg.Message)) { a.numeric[code] = f })
	a.numeric["354"], a.numeric["315"] = a.c.whoReply, a.c.whoEnd
	a.c.sendWho = func(nick, token string) error {
		a.whos = append(a.whos, [2]string{nick, token})
		return nil
	}
	return a
}

func (a *addressed) event(kind EventKind, account, nick, text string) {
	e := Event{Kind: kind, Sender: irc.Sender{Account: account, Nick: nick}, Text: text}
	a.c.track(&e)
}

// who plays the server's answer to the oldest WHO not yet answered:
// account on its nick ("0": none), or, with account "", no such nick.
func (a *addressed) who(account string) {
	a.t.Helper()
	if len(a.whos) == 0 {
		a.t.Fatal("no WHO was sent")
	}
	w := a.whos[0]
	a.whos = a.whos[1:]
	if account != "" {
		a.server("354", w[1], w[0], account)
	}
	a.server("315", w[0], "End of /WHO list.")
}

func (a *addressed) server(code string, params ...string) {
	a.numeric[code](ircmsg.Message{Command: code, Params: append([]string{"PIRCAN"}, params...)})
}

// write says where a line for to would go now ("" and the error if nowhere).
func (a *addressed) write(to irc.Sender, held bool) (string, error) {
	got := ""
	err := a.c.writeTo(a.c.presence.Key(to), held, []string{"x"}, func(nick string, _ []string) error {
		got = nick
		return nil
	})
	return got, err
}

func (a *addressed) want(to irc.Sender, held bool, nick string, wantErr error) {
	a.t.Helper()
	got, err := a.write(to, held)
	if got != nick || !errors.Is(err, wantErr) {
		a.t.Errorf("line for %+v (held %v) went to %q (%v); want %q (%v)", to, held, got, err, nick, wantErr)
	}
}

var ascii = map[string]string{"CASEMAPPING": "ascii"}

func TestRepliesGoToTheAccountsNick(t *testing.T) {
	a := newAddressed(t, ascii)
	alice := irc.Sender{Account: "alice", Nick: "alice"}
	a.want(alice, false, "", ErrGone) // never seen
	a.event(Request, "alice", "alice", "")
	a.want(alice, false, "alice", nil)

	// A nick change with the account follows the account.
	a.event(NickChanged, "alice", "alice", "alice_away")
	a.want(alice, false, "alice_away", nil)
	// Someone unidentified takes the old nick: nothing goes there.
	a.event(Request, "", "alice", "")
	a.want(alice, false, "alice_away", nil)
	a.want(irc.Sender{Nick: "alice"}, false, "alice", nil) // the newcomer's own replies

	// Logout, and QUIT: the lines are dropped, never sent to the nick.
	a.event(AccountChanged, "", "alice_away", "")
	a.want(alice, false, "", ErrGone)
	a.event(Request, "alice", "alice2", "")
	a.want(alice, false, "alice2", nil)
	a.event(Quit, "", "alice2", "")
	a.want(alice, false, "", ErrGone)

	// A NOTIFY (no asking nick) goes where the account was seen last.
	a.event(Spoke, "alice", "alice3", "")
	a.want(irc.Sender{Account: "alice"}, false, "alice3", nil)
}

// An unidentified sender is its nick: a new nick, a login on it, or
// someone else seen on it ends where its lines may go.
func TestUnidentifiedRepliesAreForThatNickOnly(t *testing.T) {
	a := newAddressed(t, ascii)
	guest := irc.Sender{Nick: "guest"}
	a.event(Request, "", "guest", "")
	a.want(guest, false, "guest", nil)
	a.event(NickChanged, "", "guest", "guest2")
	a.want(guest, false, "", ErrGone)
	a.want(irc.Sender{Nick: "guest2"}, false, "", ErrGone) // never asked anything

	a.event(Request, "", "guest", "")
	a.event(Joined, "mallory", "guest", "")
	a.want(guest, false, "", ErrGone)
	// The account's key space is its own: "mallory" the nick is not mallory the account.
	a.want(irc.Sender{Nick: "mallory"}, false, "", ErrGone)
	a.want(irc.Sender{Account: "mallory", Nick: "guest"}, false, "guest", nil)
}

// Two connections of one account: each gets the replies to what it asked.
func TestAccountOnTwoNicks(t *testing.T) {
	a := newAddressed(t, ascii)
	a.event(Request, "bob", "bob", "")
	a.event(Request, "bob", "bob_twin", "")
	a.want(irc.Sender{Account: "bob", Nick: "bob"}, false, "bob", nil)
	a.want(irc.Sender{Account: "bob", Nick: "bob_twin"}, false, "bob_twin", nil)
	a.event(Quit, "", "bob", "")
	a.want(irc.Sender{Account: "bob", Nick: "bob"}, false, "bob_twin", nil) // follows the account
	a.want(irc.Sender{Account: "bob", Nick: "bob_twin"}, false, "bob_twin", nil)
}

// The server's CASEMAPPING decides which nicks are one: under ascii
// `vic[1` and `vic{1` are two, `VIC[1` and `vic[1` one; under rfc1459 all
// four are one.
func TestAddressingUsesTheServersCasemapping(t *testing.T) {
	a := newAddressed(t, ascii)
	if a.c.Casemap() != pircan.ASCII {
		t.Fatalf("casemap %s", a.c.Casemap())
	}
	victim := irc.Sender{Account: "vic[1", Nick: "vic[1"}
	a.event(Request, "vic[1", "vic[1", "")
	a.event(Request, "", "vic{1", "") // someone else, unidentified
	a.want(victim, false, "vic[1", nil)
	a.want(irc.Sender{Account: "VIC[1", Nick: "VIC[1"}, false, "vic[1", nil)
	if a.c.presence.Key(victim) != a.c.presence.Key(irc.Sender{Account: "VIC[1", Nick: "Vic[1"}) {
		t.Error("VIC[1 and vic[1 are one nick under ascii")
	}

	r := newAddressed(t, map[string]string{}) // no CASEMAPPING: rfc1459
	if r.c.Casemap() != pircan.RFC1459 {
		t.Fatalf("casemap without the token: %s", r.c.Casemap())
	}
	r.event(Request, "vic[1", "vic[1", "")
	r.event(Request, "", "VIC{1", "") // the same nick, now unidentified: the account left it
	r.want(victim, false, "", ErrGone)
}

// Lines that waited go only to a nick on the MONITOR list that the server
// has confirmed online; its offline (a quit or nick change the bot would
// not otherwise see) drops them.
func TestHeldLinesNeedMonitor(t *testing.T) {
	a := newAddressed(t, map[string]string{"CASEMAPPING": "ascii", "MONITOR": "2"})
	vic := irc.Sender{Account: "vic", Nick: "vic"}
	a.event(Request, "vic", "vic", "")
	a.want(vic, false, "vic", nil)   // the first burst goes at once
	a.want(vic, true, "", ErrNotYet) // watched now, not confirmed
	a.server("730", "vic!u@h")       // RPL_MONONLINE
	a.want(vic, true, "", ErrNotYet) // online, but by which account?
	a.who("vic")
	a.want(vic, true, "vic", nil)  // confirmed
	a.server("731", "vic")         // RPL_MONOFFLINE: quit or renamed, unseen
	a.want(vic, true, "", ErrGone) // never to whoever holds vic next
	a.c.presence.mu.Lock()
	watched := len(a.c.presence.watches)
	a.c.presence.mu.Unlock()
	connOutput{a.c}.Release(a.c.presence.Key(vic))
	a.c.presence.mu.Lock()
	left := len(a.c.presence.watches)
	a.c.presence.mu.Unlock()
	if watched != 1 || left != 0 {
		t.Errorf("watches %d before Release, %d after; want 1, 0", watched, left)
	}

	// A full list: lines wait (ErrNotYet) rather than go unwatched.
	for _, n := range []string{"a", "b", "c"} {
		a.event(Request, n, n, "")
		connOutput{a.c}.Hold(a.c.presence.Key(irc.Sender{Account: n, Nick: n}))
	}
	a.want(irc.Sender{Account: "c", Nick: "c"}, true, "", ErrNoRoom)

	// Without MONITOR on the server, held lines are not held back.
	n := newAddressed(t, ascii)
	n.event(Request, "vic", "vic", "")
	n.want(vic, true, "vic", nil)
}

// A logout, or a hand-over of the nick, that the server handled before it
// read PIRCAN's MONITOR is not reported by the MONITOR list (its online
// reply names no account): the WHO that follows the MONITOR is, and the
// held lines are dropped, never written to the nick.
func TestWatchHearsWhatCameBeforeIt(t *testing.T) {
	vic := irc.Sender{Account: "vic", Nick: "vic"}
	for _, tc := range []struct {
		name   string
		answer func(a *addressed)
	}{
		{"logged out", func(a *addressed) { a.who("0") }},
		{"another account", func(a *addressed) { a.who("mallory") }},
		{"no such nick", func(a *addressed) { a.who("") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAddressed(t, map[string]string{"CASEMAPPING": "ascii", "MONITOR": "10"})
			a.event(Request, "vic", "vic", "")
			a.want(vic, true, "", ErrNotYet) // watched now
			a.server("730", "vic!u@h")
			tc.answer(a)
			a.want(vic, true, "", ErrGone)
			a.want(vic, false, "", ErrGone) // nor unheld
		})
	}
}

// RPL_ENDOFWHO names the mask, not the token: each lookup takes as its own
// the end that follows the ends of the WHOs for the same nick sent before
// it, so an earlier lookup's end (no 354: offline, then) never answers a
// later one.
func TestLookupsKnowTheirOwnEnd(t *testing.T) {
	a := newAddressed(t, ascii)
	var got []string
	for _, name := range []string{"first", "second"} {
		if _, err := a.c.lookUp("Vic", func(account string, online bool) {
			got = append(got, fmt.Sprintf("%s:%s:%v", name, account, online))
		}); err != nil {
			t.Fatal(err)
		}
	}
	a.server("315", "vic", "End of /WHO list.") // the first's end: vic was not there
	if !slices.Equal(got, []string{"first::false"}) {
		t.Fatalf("after the first end: %v", got)
	}
	a.server("354", a.whos[1][1], "Vic", "vic")
	a.server("315", "Vic", "End of /WHO list.")
	if !slices.Equal(got, []string{"first::false", "second:vic:true"}) {
		t.Fatalf("after the second: %v", got)
	}
	a.c.whoMu.Lock()
	defer a.c.whoMu.Unlock()
	if len(a.c.whoWaits) != 0 || len(a.c.whoAhead) != 0 {
		t.Fatalf("left behind: %d lookups, %v", len(a.c.whoWaits), a.c.whoAhead)
	}
}

// An unidentified sender's held lines go once the WHO shows its nick with
// no account, and not once it shows an account on it.
func TestGuestWatchChecked(t *testing.T) {
	guest := irc.Sender{Nick: "g"}
	for _, tc := range []struct {
		account string
		nick    string
		err     error
	}{{"0", "g", nil}, {"mallory", "", ErrGone}, {"", "", ErrGone}} {
		a := newAddressed(t, map[string]string{"CASEMAPPING": "ascii", "MONITOR": "10"})
		a.event(Request, "", "g", "")
		a.want(guest, true, "", ErrNotYet)
		a.server("730", "g!u@h")
		a.who(tc.account)
		a.want(guest, true, tc.nick, tc.err)
	}
}

// The pacer and presence together: an account's queued list follows its
// NICK, and what is left at its QUIT is dropped, never written.
func TestPacedListFollowsTheAccount(t *testing.T) {
	a := newAddressed(t, ascii)
	var got []sent
	out := funcOutput{write: func(key string, held bool, lines []string) error {
		return a.c.writeTo(key, false, lines, func(nick string, ls []string) error {
			for _, l := range ls {
				got = append(got, sent{nick, l})
			}
			return nil
		})
	}}
	clock := newPacerClock()
	p := NewPacer(testPacing, clock.now, out)
	p.SetOnline(true)
	run := func() { // what Run does, until nothing may be sent now
		for {
			r, lines, held, _ := p.takeUpTo(testPacing.Burst)
			if r == nil {
				return
			}
			texts := make([]string, len(lines))
			for i, l := range lines {
				texts[i] = l.Text
			}
			p.settle(r, lines, out.Write(r.key, held, texts))
		}
	}
	a.event(Request, "alice", "alice", "")
	p.Enqueue(a.c.presence.Key(irc.Sender{Account: "alice", Nick: "alice"}), numbered("l", 9)...)
	run()
	a.event(NickChanged, "alice", "alice", "alice2")
	clock.advance(time.Second) // two more tokens
	run()
	a.event(Quit, "", "alice2", "")
	clock.advance(time.Second)
	run()
	want := []sent{{"alice", "l0"}, {"alice", "l1"}, {"alice", "l2"}, {"alice", "l3"}, {"alice", "l4"},
		{"alice2", "l5"}, {"alice2", "l6"}}
	if !slices.Equal(got, want) {
		t.Fatalf("written %v, want %v", got, want)
	}
	if q, _ := p.Stats(); q != 0 || p.Departed() != 2 {
		t.Errorf("%d queued, %d departed; want 0, 2 (l7, l8)", q, p.Departed())
	}
}

// A line to a nick whose holder the server last showed over a second ago
// (a slow reply, a NOTIFY) needs the MONITOR list's confirmation too.
func TestStaleSightingNeedsMonitor(t *testing.T) {
	a := newAddressed(t, map[string]string{"CASEMAPPING": "ascii", "MONITOR": "10"})
	clock := newPacerClock()
	a.c.presence.now = clock.now
	vic := irc.Sender{Account: "vic", Nick: "vic"}
	a.event(Request, "vic", "vic", "")
	a.want(vic, false, "vic", nil)
	clock.advance(unwatchedFor + time.Millisecond)
	a.want(vic, false, "", ErrNotYet)
	a.server("730", "vic!u@h")
	a.want(vic, false, "", ErrNotYet) // online, but with which account?
	a.who("vic")
	a.want(vic, false, "vic", nil)
	a.event(Request, "vic", "vic", "") // seen again: fresh
	connOutput{a.c}.Release(a.c.presence.Key(vic))
	a.want(vic, false, "vic", nil)
}

// A NOTIFY (an account's line that answers no request) never goes out
// unwatched, not even just after the account was seen on the nick; and
// watched before the notifier's WHO, a hand-over after it is caught.
func TestNotifyAlwaysWaitsForMonitor(t *testing.T) {
	a := newAddressed(t, map[string]string{"CASEMAPPING": "ascii", "MONITOR": "10"})
	vic := irc.Sender{Account: "vic"} // no asking nick: a NOTIFY
	a.event(Request, "vic", "vic", "")
	a.want(vic, false, "", ErrNotYet) // seen this instant, still not unwatched
	a.server("730", "vic!u@h")
	a.who("vic")
	a.want(vic, false, "vic", nil)
	connOutput{a.c}.Release(a.c.presence.Key(vic))

	// The notifier's order: watch, (WHO says vic holds the account), then
	// the nick changes hands before the line is written.
	release := a.c.Watch(vic, "vic")
	a.server("730", "vic!u@h")
	a.who("vic")
	a.server("731", "vic") // vic quit; a newcomer takes the nick
	a.event(Request, "", "vic", "")
	a.want(vic, false, "", ErrGone)
	release()
	a.c.presence.mu.Lock()
	left := len(a.c.presence.watches)
	a.c.presence.mu.Unlock()
	if left != 0 {
		t.Errorf("%d MONITOR entries left after release", left)
	}
}
