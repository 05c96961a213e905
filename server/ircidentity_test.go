package server_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ergochat/irc-go/ircmsg"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/ircnet"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/ircconn"
)

// Another client holds PIRCAN's nick when it comes up (as after a crash):
// PIRCAN reclaims it through NickServ (Anope RECOVER) and serves under it.
func TestReclaimsItsNick(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var squatter *ircnet.Client
	bot := bottest.Start(t, bottest.Options{BeforeStart: func(nick string) {
		c, err := bottest.Network(t).Dial(ctx, nick)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		squatter = c
	}})
	// Serving means under its own nick (the transport refuses any other).
	a := bot.Agents(t, "reclaim", 1)[0]
	if r := a.Ask(`PIRCAN/1 ECHO {"id":"x"}`); r.Str("re") != "x" {
		t.Fatalf("ECHO: %s", r.Raw)
	}
	// Services moved the other client off the nick.
	if _, err := squatter.Expect(ctx, func(m ircmsg.Message) bool {
		return m.Command == "NICK" && len(m.Params) > 0 && pircan.FoldNick(m.Params[0]) != pircan.FoldNick(bot.Nick)
	}); err != nil {
		t.Fatalf("the other client kept the nick: %v", err)
	}
	if strings.EqualFold(squatter.Nick(), bot.Nick) {
		t.Fatalf("the other client is still %s", squatter.Nick())
	}
}

// A frozen IRC server (SIGSTOP): PIRCAN's own PING goes unanswered, /readyz
// turns not ready and says why; once the server runs again PIRCAN is back.
func TestFrozenIRCServerIsNotReady(t *testing.T) {
	t.Parallel()
	n := bottest.PrivateNetwork(t)
	bot := bottest.Start(t, bottest.Options{Net: n, HTTPAddr: "127.0.0.1:0", Transport: func(c *ircconn.Config) {
		c.PingIdle, c.PingTimeout = time.Second, 2*time.Second
	}})
	waitReady(t, bot, 200)
	if err := syscall.Kill(n.InspircdPID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(n.InspircdPID, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)
	r := waitReady(t, bot, http.StatusServiceUnavailable)
	if r.IRC || !strings.Contains(r.IRCReason, "PING") {
		t.Fatalf("readyz while the server is frozen: %+v", r)
	}
	resume()
	if r := waitReady(t, bot, 200); !r.IRC {
		t.Fatalf("readyz after the server resumed: %+v", r)
	}
}

// OPER refused: no fake-lag exemption, so the ordinary-client output cap
// stays in force (and the metrics say so).
func TestOperRefusedKeepsOrdinaryCap(t *testing.T) {
	t.Parallel()
	logs := &logLines{added: make(chan struct{}, 1)}
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0", Log: logs, Transport: func(c *ircconn.Config) {
		c.OperPassword = "not-the-password"
	}})
	logs.wait(t, "OPER refused")
	families := scrape(t, bot)
	if v := gaugeValue(t, families, "pircan_output_cap_lines_per_second"); v != ircconn.OrdinaryOutput.PerSecond {
		t.Fatalf("pircan_output_cap_lines_per_second = %v, want %v", v, ircconn.OrdinaryOutput.PerSecond)
	}
	if v := gaugeValue(t, families, "pircan_output_cap_burst"); v != float64(ircconn.OrdinaryOutput.Burst) {
		t.Fatalf("pircan_output_cap_burst = %v, want %v", v, ircconn.OrdinaryOutput.Burst)
	}
	// Still serving, within the cap.
	a := bot.Agents(t, "nooper", 1)[0]
	if r := a.Ask(`PIRCAN/1 ECHO {"id":"y"}`); r.Str("re") != "y" {
		t.Fatalf("ECHO: %s", r.Raw)
	}
}

// logLines collects a bot's log lines for waiting on one.
type logLines struct {
	mu    sync.Mutex
	lines []string
	added chan struct{}
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.lines = append(l.lines, string(p))
	l.mu.Unlock()
	select {
	case l.added <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (l *logLines) wait(t *testing.T, sub string) string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		l.mu.Lock()
		for _, line := range l.lines {
			if strings.Contains(line, sub) {
				l.mu.Unlock()
				return line
			}
		}
		l.mu.Unlock()
		select {
		case <-l.added:
		case <-timeout:
			t.Fatalf("no log line with %q", sub)
		}
	}
}
