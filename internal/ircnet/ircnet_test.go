package ircnet

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ergochat/irc-go/ircmsg"
)

// One network per kind for the package's tests; TestRestartIRCd starts its
// own. The Ergo one only when the ergo binary is there (ergoSkip says why not).
var (
	shared   *Network
	skipMsg  string
	ergo     *Network
	ergoSkip string
)

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	flag.Parse()                     // for testing.Verbose
	bin := os.Getenv("INSPIRCD_BIN") // start.sh's override
	if bin == "" {
		bin = "/usr/sbin/inspircd"
	}
	if _, err := os.Stat(bin); err != nil {
		// On a developer machine without the packages, skip; CI must have
		// them (its .ci/run installs them), so there it is a failure.
		if os.Getenv("CI") != "" {
			fmt.Fprintf(os.Stderr, "ircnet: %s is missing (CI is set): run dev/ircnet/install.sh\n", bin)
			return 1
		}
		skipMsg = bin + " not installed: run dev/ircnet/install.sh (as root) to run these tests"
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "ircnet-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	t0 := time.Now()
	n, err := Start(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer n.Stop()
	if testing.Verbose() {
		fmt.Printf("ircnet: network up in %v (TLS %s)\n", time.Since(t0).Round(time.Millisecond), n.TLSAddr())
	}
	shared = n
	if _, err := ErgoBinary(); err != nil {
		ergoSkip = fmt.Sprintf("Ergo network skipped: %v", err)
		return m.Run()
	}
	edir, err := os.MkdirTemp("", "ergonet-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(edir)
	if ergo, err = StartWith(edir, Options{Kind: Ergo, WatchPID: os.Getpid()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer ergo.Stop()
	return m.Run()
}

func network(t *testing.T) *Network {
	t.Helper()
	if skipMsg != "" {
		t.Skip(skipMsg)
	}
	return shared
}

// eachKind runs f as a subtest on the shared network of each kind.
func eachKind(t *testing.T, f func(t *testing.T, n *Network)) {
	t.Run(string(InspIRCd), func(t *testing.T) { f(t, network(t)) })
	t.Run(string(Ergo), func(t *testing.T) {
		if ergoSkip != "" {
			t.Skip(ergoSkip)
		}
		f(t, ergo)
	})
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var nickSeq atomic.Int64

// nick makes a nick no other test uses.
func nick(base string) string { return fmt.Sprintf("%s%d", base, nickSeq.Add(1)) }

// who describes a client for dialAll: an agent (registered NickServ account
// named after the nick) when password is set, else an unidentified client.
type who struct{ nick, password string }

// dialAll connects all clients in parallel: InspIRCd registers clients only
// on its one-second tick, so a batch costs about as much as one client.
func dialAll(t *testing.T, n *Network, ctx context.Context, ws ...who) []*Client {
	t.Helper()
	cs := make([]*Client, len(ws))
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if w.password != "" {
				cs[i], errs[i] = n.DialAgent(ctx, w.nick, w.password)
			} else {
				cs[i], errs[i] = n.Dial(ctx, w.nick)
			}
		}()
	}
	wg.Wait()
	for i, c := range cs {
		if c != nil {
			t.Cleanup(func() { c.Close() })
		}
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
	}
	return cs
}

// privmsg matches a PRIVMSG from nick with exactly text.
func privmsg(from, text string) func(ircmsg.Message) bool {
	return func(m ircmsg.Message) bool {
		return m.Command == "PRIVMSG" && strings.EqualFold(m.Nick(), from) &&
			len(m.Params) == 2 && m.Params[1] == text
	}
}

func TestAccountTag(t *testing.T) {
	t.Parallel()
	eachKind(t, testAccountTag)
}

func testAccountTag(t *testing.T, n *Network) {
	t.Parallel()
	ctx := testCtx(t)
	cs := dialAll(t, n, ctx, who{nick("alice"), "pw-alice"}, who{nick("bob"), "pw-bob"}, who{nick("mallory"), ""})
	alice, bob, mallory := cs[0], cs[1], cs[2]
	if got := bob.Account(); got != bob.Nick() {
		t.Fatalf("bob's account after REGISTER = %q, want %q", got, bob.Nick())
	}
	for _, cp := range WantedCaps {
		if !bob.HasCap(cp) {
			t.Errorf("capability %s not acknowledged", cp)
		}
	}

	if err := alice.Privmsg(bob.Nick(), "hello from alice"); err != nil {
		t.Fatal(err)
	}
	m, err := bob.Expect(ctx, privmsg(alice.Nick(), "hello from alice"))
	if err != nil {
		t.Fatal(err)
	}
	if ok, acct := m.GetTag("account"); !ok || acct != alice.Nick() {
		t.Errorf("account tag = %q (present %v), want %q", acct, ok, alice.Nick())
	}
	if !m.HasTag("time") {
		t.Error("no server-time tag")
	}

	if err := mallory.Privmsg(bob.Nick(), "hello from mallory"); err != nil {
		t.Fatal(err)
	}
	m, err = bob.Expect(ctx, privmsg(mallory.Nick(), "hello from mallory"))
	if err != nil {
		t.Fatal(err)
	}
	if ok, acct := m.GetTag("account"); ok {
		t.Errorf("unidentified sender has account tag %q", acct)
	}
}

func TestIdentify(t *testing.T) {
	t.Parallel()
	eachKind(t, testIdentify)
}

func testIdentify(t *testing.T, n *Network) {
	t.Parallel()
	ctx := testCtx(t)
	acct, pw := nick("carol"), "pw-carol"
	errc := make(chan error, 1)
	go func() { errc <- RegisterAccount(ctx, n, acct, pw) }() // overlaps the dials' tick
	cs := dialAll(t, n, ctx, who{nick("carolclient"), ""}, who{nick("dave"), ""})
	c, dave := cs[0], cs[1]
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if err := RegisterAccount(ctx, n, acct, pw); err != nil {
		t.Fatalf("RegisterAccount of an existing account with its password: %v", err)
	}

	if err := c.Identify(ctx, acct, "wrong"); err == nil {
		t.Fatal("IDENTIFY with a wrong password succeeded")
	}
	if err := c.Identify(ctx, acct, pw); err != nil {
		t.Fatal(err)
	}
	if c.Account() != acct {
		t.Fatalf("Account() = %q, want %q", c.Account(), acct)
	}
	if err := c.Privmsg(dave.Nick(), "identified"); err != nil {
		t.Fatal(err)
	}
	m, err := dave.Expect(ctx, privmsg(c.Nick(), "identified"))
	if err != nil {
		t.Fatal(err)
	}
	if _, got := m.GetTag("account"); got != acct {
		t.Errorf("account tag = %q, want %q (the account, not the nick %q)", got, acct, c.Nick())
	}
}

func TestSetNick(t *testing.T) {
	t.Parallel()
	eachKind(t, testSetNick)
}

func testSetNick(t *testing.T, n *Network) {
	t.Parallel()
	ctx := testCtx(t)
	cs := dialAll(t, n, ctx, who{nick("erin"), ""}, who{nick("frank"), ""})
	erin, frank := cs[0], cs[1]

	renamed := nick("erin_new")
	if err := erin.SetNick(ctx, renamed); err != nil {
		t.Fatal(err)
	}
	if erin.Nick() != renamed {
		t.Fatalf("Nick() = %q, want %q", erin.Nick(), renamed)
	}
	if err := erin.SetNick(ctx, frank.Nick()); err == nil {
		t.Fatal("taking another client's nick succeeded")
	}
	if c, err := n.Dial(ctx, frank.Nick()); err == nil {
		c.Close()
		t.Fatal("Dial with a nick in use succeeded")
	}
	if err := erin.Privmsg(frank.Nick(), "new name"); err != nil {
		t.Fatal(err)
	}
	if _, err := frank.Expect(ctx, privmsg(renamed, "new name")); err != nil {
		t.Fatal(err)
	}
}

func TestJoin(t *testing.T) {
	t.Parallel()
	eachKind(t, testJoin)
}

func testJoin(t *testing.T, n *Network) {
	t.Parallel()
	ctx := testCtx(t)
	cs := dialAll(t, n, ctx, who{nick("grace"), ""}, who{nick("heidi"), "pw-heidi"})
	grace, heidi := cs[0], cs[1]
	channel := "#" + nick("room")

	if err := grace.Join(ctx, channel); err != nil {
		t.Fatal(err)
	}
	if err := heidi.Join(ctx, channel); err != nil {
		t.Fatal(err)
	}
	// extended-join: JOIN <channel> <account> :<realname>
	m, err := grace.Expect(ctx, func(m ircmsg.Message) bool {
		return m.Command == "JOIN" && strings.EqualFold(m.Nick(), heidi.Nick())
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Params) < 2 || m.Params[1] != heidi.Nick() {
		t.Errorf("extended JOIN params %q, want account %q", m.Params, heidi.Nick())
	}
	if err := heidi.Privmsg(channel, "hi all"); err != nil {
		t.Fatal(err)
	}
	if _, err := grace.Expect(ctx, func(m ircmsg.Message) bool {
		return privmsg(heidi.Nick(), "hi all")(m) && strings.EqualFold(m.Params[0], channel)
	}); err != nil {
		t.Fatal(err)
	}
	if err := grace.Join(ctx, "no-channel-prefix"); err == nil {
		t.Error("JOIN of an invalid channel name succeeded")
	}
}

func TestExpectKeepsUnmatched(t *testing.T) {
	t.Parallel()
	n, ctx := network(t), testCtx(t)
	cs := dialAll(t, n, ctx, who{nick("ivan"), ""}, who{nick("judy"), ""})
	ivan, judy := cs[0], cs[1]
	// Dial leaves nothing of the welcome burst behind.
	if err := judy.ExpectNone(200*time.Millisecond, func(ircmsg.Message) bool { return true }); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"one", "two", "three"} {
		if err := ivan.Privmsg(judy.Nick(), s); err != nil {
			t.Fatal(err)
		}
	}
	// Take the last one first; the others must still be there, in order.
	for _, s := range []string{"three", "one", "two"} {
		if _, err := judy.Expect(ctx, privmsg(ivan.Nick(), s)); err != nil {
			t.Fatalf("Expect(%q): %v", s, err)
		}
	}
	// Consumed: not seen again.
	if err := judy.ExpectNone(200*time.Millisecond, privmsg(ivan.Nick(), "one")); err != nil {
		t.Fatal(err)
	}
	// ExpectNone sees what arrives while it waits, and leaves it buffered.
	if err := ivan.Privmsg(judy.Nick(), "four"); err != nil {
		t.Fatal(err)
	}
	if err := judy.ExpectNone(2*time.Second, privmsg(ivan.Nick(), "four")); err == nil {
		t.Fatal("ExpectNone missed a matching message")
	}
	if _, err := judy.Expect(ctx, privmsg(ivan.Nick(), "four")); err != nil {
		t.Fatal(err)
	}

	// A timed-out Expect says what it had instead.
	if err := ivan.Privmsg(judy.Nick(), "unrelated"); err != nil {
		t.Fatal(err)
	}
	if _, err := judy.Expect(ctx, privmsg(ivan.Nick(), "unrelated")); err != nil {
		t.Fatal(err)
	}
	if err := ivan.Privmsg(judy.Nick(), "leftover"); err != nil {
		t.Fatal(err)
	}
	if err := judy.ExpectNone(2*time.Second, privmsg(ivan.Nick(), "leftover")); err == nil {
		t.Fatal("ExpectNone missed a matching message")
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err := judy.Expect(short, privmsg(ivan.Nick(), "never sent"))
	if !errors.Is(short.Err(), context.DeadlineExceeded) || err == nil || !strings.Contains(err.Error(), "leftover") {
		t.Fatalf("Expect on timeout: %v", err)
	}
	if got := judy.Drain(); len(got) != 1 || got[0].Params[1] != "leftover" {
		t.Fatalf("Drain() = %v, want just the leftover message", got)
	}
}

func TestRestartIRCd(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, shared *Network) { testRestartIRCd(t, shared.Kind) })
}

func testRestartIRCd(t *testing.T, kind Kind) {
	t.Parallel()
	ctx := testCtx(t)
	n, err := StartWith(filepath.Join(t.TempDir(), "net"), Options{Kind: kind, WatchPID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Stop(); err != nil {
			t.Error(err)
		}
	})
	acct, pw := nick("kate"), "pw-kate"
	old := dialAll(t, n, ctx, who{acct, pw})[0]
	oldPID, tlsPort := n.IRCdPID, n.TLSPort

	t0 := time.Now()
	if err := n.RestartIRCd(); err != nil {
		t.Fatal(err)
	}
	t.Logf("RestartIRCd took %v", time.Since(t0).Round(time.Millisecond))
	if n.IRCdPID == oldPID || n.TLSPort != tlsPort {
		t.Fatalf("after restart: pid %d (was %d), TLS port %d (was %d)", n.IRCdPID, oldPID, n.TLSPort, tlsPort)
	}
	if _, err := old.Expect(ctx, func(ircmsg.Message) bool { return false }); err == nil ||
		!strings.Contains(err.Error(), "connection closed") {
		t.Fatalf("old client after restart: %v, want connection closed", err)
	}

	// NickServ is back (Anope re-linked, or Ergo's own): the account made
	// before the restart still works, and new accounts can be registered.
	cs := dialAll(t, n, ctx, who{nick("kateclient"), ""}, who{nick("leo"), "pw-leo"})
	c, leo := cs[0], cs[1]
	if err := c.Identify(ctx, acct, pw); err != nil {
		t.Fatal(err)
	}
	if err := c.Privmsg(leo.Nick(), "after restart"); err != nil {
		t.Fatal(err)
	}
	m, err := leo.Expect(ctx, privmsg(c.Nick(), "after restart"))
	if err != nil {
		t.Fatal(err)
	}
	if _, got := m.GetTag("account"); got != acct {
		t.Errorf("account tag after restart = %q, want %q", got, acct)
	}

	// KillIRCd alone: the network is down until the next RestartIRCd.
	if err := n.KillIRCd(); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Dial(ctx, nick("nobody")); err == nil {
		t.Fatal("Dial succeeded with the ircd killed")
	}
	if err := n.RestartIRCd(); err != nil {
		t.Fatal(err)
	}
	mia, err := n.DialAgent(ctx, nick("mia"), "pw-mia")
	if err != nil {
		t.Fatal(err)
	}
	mia.Close()
}
