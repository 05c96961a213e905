package server_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/pgtest"
)

// The database goes away mid-run: requests get internal_error with a ref,
// the bot stays up, and it serves again by itself when the database is back.
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
	bot := bottest.Start(t, bottest.Options{DSN: dsn})
	a := bot.Agents(t, "pgfault", 1)[0]
	id := a.Hello("")

	pg.Stop()
	r := a.Ask(`PIRCAN/1 WHOAMI {"id":"down"}`)
	if r.Code() != "internal_error" || len(r.Str("ref")) < 6 || r.Str("re") != "down" {
		t.Fatalf("while the database is down: %s", r.Raw)
	}
	// ECHO needs no database: the bot itself is still serving.
	if r := a.Ask(`PIRCAN/1 ECHO`); r.Verb != "ECHO" {
		t.Fatalf("ECHO while the database is down: %s", r.Raw)
	}
	pg.Start()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := a.Ask(`PIRCAN/1 WHOAMI`)
		if r.Verb == "WHOAMI" {
			if r.Str("agent_id") != id {
				t.Fatalf("after the restart: %s", r.Raw)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery: %s", r.Raw)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !bot.Conn().Registered() {
		t.Fatal("the bot left IRC during the outage")
	}
}

// The IRC server dies and comes back: PIRCAN reconnects with backoff,
// identifies again, rejoins its channels and serves.
func TestIRCServerRestart(t *testing.T) {
	t.Parallel()
	n := bottest.PrivateNetwork(t)
	var logs syncBuffer
	bot := bottest.Start(t, bottest.Options{Net: n, Log: &logs})
	a := bot.Agents(t, "ircfault", 1)[0]
	id := a.Hello("")
	waitInChannel(t, bot, bot.Lobby, true)

	if err := n.RestartIRCd(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for bot.Conn().Reconnects() == 0 || !bot.Conn().Registered() {
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
	primary := bottest.Start(t, bottest.Options{})
	standby := bottest.StartStandby(t, primary, bottest.Options{})
	a, b, _, bID := pair(t, primary, "standby")
	joinLobby(t, primary, b)
	time.Sleep(2 * time.Second) // the standby has had time to try the lock
	if standby.Conn().Registered() || !standby.Standby() || primary.Standby() {
		t.Fatalf("standby registered=%v standby=%v; primary standby=%v",
			standby.Conn().Registered(), standby.Standby(), primary.Standby())
	}
	if r := a.Ask(`PIRCAN/1 WHOAMI`); r.Verb != "WHOAMI" {
		t.Fatalf("primary serving: %s", r.Raw)
	}

	primary.Stop() // it dies; its lock goes with its database session
	must(t, standby.Store().NotifyAgent(context.Background(), bID, "agreement_update"))
	deadline := time.Now().Add(20 * time.Second)
	for !standby.Conn().Registered() {
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
