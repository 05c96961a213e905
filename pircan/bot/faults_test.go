package bot_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ergochat/irc-go/ircmsg"
	"github.com/jackc/pgx/v5"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/ircnet"
	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
)

// load keeps agents asking WHOAMI (each waiting for its reply, tolerating
// silence) until stop is closed, counting the replies by verb or error
// code; a test waits on the counts (until) rather than for a while.
func load(agents []*bottest.Agent, stop <-chan struct{}) *loadRun {
	l := &loadRun{counts: map[string]int{}, changed: make(chan struct{})}
	for _, a := range agents {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := a.Privmsg(a.BotNick(), `PIRCAN/1 WHOAMI`); err != nil {
					return // its connection is gone (the IRC server restarts): this loader is done
				}
				line, ok := a.TryNextLine(2 * time.Second)
				if !ok {
					continue
				}
				r, err := bottest.ParseReply(line)
				key := r.Verb
				if err == nil && r.Verb == "ERROR" {
					key = r.Code()
				}
				l.count(key)
			}
		}()
	}
	return l
}

// loadRun is a running load and its replies so far.
type loadRun struct {
	wg      sync.WaitGroup
	mu      sync.Mutex
	counts  map[string]int
	changed chan struct{} // closed, and replaced, at every reply
}

func (l *loadRun) count(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts[key]++
	close(l.changed)
	l.changed = make(chan struct{})
}

// until waits for the replies counted under key to reach n.
func (l *loadRun) until(t *testing.T, key string, n int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		l.mu.Lock()
		got, changed := l.counts[key], l.changed
		l.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("the load got %d %s replies, want %d", got, key, n)
		}
	}
}

// now is how many replies were counted under key so far.
func (l *loadRun) now(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts[key]
}

// done waits for the load to stop (close its stop first) and returns the counts.
func (l *loadRun) done() map[string]int {
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts
}

// The database goes away mid-run, under load: requests get internal_error
// with a ref, the bot stays up, and it serves again by itself when the
// database is back.
func TestPostgresRestart(t *testing.T) {
	t.Parallel()
	pg := pgtest.StartCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn, cleanup, err := pgtest.NewDatabase(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	limits := pircan.DefaultLimits
	limits.PerCaller = 100000 // a steady load from few agents
	bot := bottest.Start(t, bottest.Options{DSN: dsn, Limits: limits, Pacing: bottest.FastPacing})
	a := bot.Agents(t, "pgfault", 1)[0]
	id := a.Hello("")
	loaders := bot.Agents(t, "pgload", 3)
	for _, l := range loaders {
		l.Hello("")
	}
	stop := make(chan struct{})
	run := load(loaders, stop)
	run.until(t, "WHOAMI", 10) // served under load

	pg.Stop()
	run.until(t, "internal_error", 1) // the load meets the outage
	r := a.Ask(`PIRCAN/1 WHOAMI {"id":"down"}`)
	if r.Code() != "internal_error" || len(r.Str("ref")) < 6 || r.Str("re") != "down" {
		t.Fatalf("while the database is down: %s", r.Raw)
	}
	// ECHO needs no database: the bot itself is still serving.
	if r := a.Ask(`PIRCAN/1 ECHO`); r.Verb != "ECHO" {
		t.Fatalf("ECHO while the database is down: %s", r.Raw)
	}
	served := run.now("WHOAMI")
	pg.Start()
	run.until(t, "WHOAMI", served+10) // the bot recovered by itself: the load is served again
	if r := a.Ask(`PIRCAN/1 WHOAMI`); r.Verb != "WHOAMI" || r.Str("agent_id") != id {
		t.Fatalf("after the restart: %s", r.Raw)
	}
	close(stop)
	c := run.done()
	t.Logf("replies under load: %v", c)
	if c["WHOAMI"] < 10 || c["internal_error"] == 0 {
		t.Fatalf("load saw no service or no outage: %v", c)
	}
	if !bot.Conn().Online() || bot.Conn().Reconnects() != 0 {
		t.Fatal("the bot left IRC during the outage")
	}
}

// The IRC server dies under load and comes back: PIRCAN reconnects with
// backoff, identifies again, rejoins its channels, serves, and delivers the
// notifications queued meanwhile.
func TestIRCServerRestart(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testIRCServerRestart)
}

func testIRCServerRestart(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	n := bottest.PrivateNetworkOf(t, kind)
	var logs syncBuffer
	limits := pircan.DefaultLimits
	limits.PerCaller = 100000 // a steady load from few agents
	bot := bottest.Start(t, bottest.Options{Net: n, Log: &logs, Limits: limits, Pacing: bottest.FastPacing})
	a := bot.Agents(t, "ircfault", 1)[0]
	id := a.Hello("")
	waitInChannel(t, bot, bot.Lobby, true)
	loaders := bot.Agents(t, "ircload", 3)
	stop := make(chan struct{})
	run := load(loaders, stop)
	run.until(t, "not_registered", 10) // the loaders are answered before the restart

	if err := n.RestartIRCd(); err != nil {
		t.Fatal(err)
	}
	// Queued while the bot is away (its reconnect waits for the backoff).
	must(t, bot.Store().NotifyAgent(context.Background(), id, "agreement_update"))
	close(stop)
	if c := run.done(); c["not_registered"] < 10 {
		t.Fatalf("no load before the restart: %v", c)
	}
	deadline := time.Now().Add(30 * time.Second)
	for bot.Conn().Reconnects() == 0 || !bot.Conn().Online() {
		if time.Now().After(deadline) {
			t.Fatalf("no reconnect (reconnects=%d)", bot.Conn().Reconnects())
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitInChannel(t, bot, bot.Lobby, true)
	b := bot.Agents(t, "ircback", 1)[0]
	if r := b.Ask(`PIRCAN/1 ECHO`); r.Str("account") != b.Account {
		t.Fatalf("after the restart, account tags still reach PIRCAN: %s", r.Raw)
	}
	if _, end := b.AskList(`PIRCAN/1 FIND`); end.Code() != "not_registered" {
		t.Fatalf("b is not registered: %s", end.Raw)
	}
	b.Hello("")
	items, _ := b.AskList(`PIRCAN/1 FIND`)
	if len(items) != 2 {
		t.Fatalf("directory survived the IRC restart: %v (want %s and b)", items, id)
	}
	// a was cut off with everyone else; back in the lobby, it is told.
	a2 := reconnect(t, bot, a.Account, "ircfault")
	joinLobby(t, bot, a2)
	if got := notices(t, a2, 4*time.Second); got["agreement_update"].Verb != "NOTIFY" {
		t.Fatalf("the notification queued during the outage: %v", got)
	}
	// Two SASL logins and an OPER happened, all logged at debug level: no
	// secret may appear in the logs.
	out := logs.String()
	if !strings.Contains(out, "connected to IRC") {
		t.Fatalf("logs were not captured:\n%s", out)
	}
	for _, secret := range []string{bot.SASLPassword(), n.BotOperPass, bot.DSN} {
		if strings.Contains(out, secret) {
			t.Errorf("a secret is in the logs: %q", secret)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the bot's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Two processes on one database: exactly one holds the nick and serves;
// when it dies the other takes over within seconds and delivers the
// notifications that waited meanwhile.
func TestHotStandby(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testHotStandby)
}

func testHotStandby(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	primary := bottest.Start(t, bottest.Options{Kind: kind})
	standby := bottest.StartStandby(t, primary, bottest.Options{Kind: kind})
	a, b, _, bID := pair(t, primary, "standby")
	joinLobby(t, primary, b)
	waitFor(t, "the second process to stand by", standby.Standby)
	if standby.Conn().Online() || primary.Standby() {
		t.Fatalf("standby registered=%v standby=%v; primary standby=%v",
			standby.Conn().Online(), standby.Standby(), primary.Standby())
	}
	if r := a.Ask(`PIRCAN/1 WHOAMI`); r.Verb != "WHOAMI" {
		t.Fatalf("primary serving: %s", r.Raw)
	}

	primary.Stop() // it dies; its lock goes with its database session
	must(t, standby.Store().NotifyAgent(context.Background(), bID, "agreement_update"))
	deadline := time.Now().Add(20 * time.Second)
	for !standby.Conn().Online() {
		if time.Now().After(deadline) {
			t.Fatal("the standby did not take over within 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("took over %v after the primary stopped", time.Since(deadline.Add(-20*time.Second)))
	if r := a.Ask(`PIRCAN/1 WHOAMI`); r.Verb != "WHOAMI" {
		t.Fatalf("after the takeover: %s", r.Raw)
	}
	if n := b.NextNotify(); n.Str("type") != "agreement_update" {
		t.Fatalf("waiting NOTIFY after the takeover: %s", n.Raw)
	}
}

// Another process takes the leader lock while this one serves (its lock's
// database session was cut): it leaves IRC saying so, and stands by.
func TestHandoverQuitSaysSo(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testHandoverQuitSaysSo)
}

func testHandoverQuitSaysSo(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Kind: kind})
	watcher := bot.Agents(t, "handover", 1)[0]
	joinLobby(t, bot, watcher)
	// The other process: cut the session that holds the lock and wait for
	// the lock on it, as a standby would (a waiter is granted the lock as
	// it is released, before the bot's next try).
	other, err := pgx.Connect(t.Context(), bot.DSN)
	must(t, err)
	t.Cleanup(func() { other.Close(context.Background()) })
	var key int64
	must(t, other.QueryRow(t.Context(), `SELECT (classid::bigint << 32) | objid::bigint FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&key))
	_, err = other.Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)
	must(t, err)
	_, err = other.Exec(t.Context(), "SELECT pg_advisory_lock($1)", key)
	must(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	m, err := watcher.Expect(ctx, func(m ircmsg.Message) bool {
		return m.Command == "QUIT" && strings.EqualFold(m.Nick(), bot.Nick)
	})
	if err != nil {
		t.Fatalf("no QUIT from the bot after another process took the lock: %v", err)
	}
	if len(m.Params) == 0 || !strings.Contains(m.Params[0], "hands over to another of its processes") {
		t.Fatalf("QUIT %q does not say it hands over", m.Params)
	}
	for !bot.Standby() {
		select {
		case <-ctx.Done():
			t.Fatal("the bot did not stand by after handing over")
		case <-time.After(20 * time.Millisecond):
		}
	}
}
