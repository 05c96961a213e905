package bot_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ergochat/irc-go/ircmsg"
	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/ircnet"
	"github.com/creatimus/pircan/internal/ircscript"
	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	pircanbot "github.com/creatimus/pircan/pircan/bot"
	"github.com/creatimus/pircan/pircan/irc/transport"
)

// Another client holds PIRCAN's nick when it comes up (as after a crash):
// PIRCAN reclaims it through NickServ and serves under it. On Anope,
// RECOVER renames the other client; on Ergo, GHOST
// (PIRCAN_NICK_RECLAIM=ghost) disconnects it.
func TestReclaimsItsNick(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testReclaimsItsNick)
}

func testReclaimsItsNick(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	o := bottest.Options{Kind: kind}
	if kind == ircnet.Ergo {
		// Ergo's NickServ GHOST exists only with nick reservation on, which
		// the shared test network turns off. "optional" enforces nothing (as
		// Anope's network without killprotect), so a client without the
		// account can still sit on the nick; without
		// force-nick-equals-account, the bot registers under another nick
		// from which it can send the GHOST.
		n, err := ircnet.StartWith(t.TempDir(), ircnet.Options{Kind: kind, WatchPID: os.Getpid(), Env: []string{
			"ERGO__ACCOUNTS__NICK_RESERVATION__ENABLED=true",
			"ERGO__ACCOUNTS__NICK_RESERVATION__METHOD=optional",
			"ERGO__ACCOUNTS__NICK_RESERVATION__FORCE_NICK_EQUALS_ACCOUNT=false",
		}})
		must(t, err)
		t.Cleanup(func() { _ = n.Stop() })
		o.Net = n
		o.Transport = func(c *transport.Config) { c.NickReclaim = transport.ReclaimGhost }
	}
	var squatter *ircnet.Client
	o.BeforeStart = func(nick string) {
		n := o.Net
		if n == nil {
			n = bottest.NetworkOf(t, kind)
		}
		c, err := n.Dial(ctx, nick)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		squatter = c
	}
	bot := bottest.Start(t, o)
	// Serving means under its own nick (the transport refuses any other).
	a := bot.Agents(t, "reclaim", 1)[0]
	if r := a.Ask(`PIRCAN/1 ECHO {"id":"x"}`); r.Str("re") != "x" {
		t.Fatalf("ECHO: %s", r.Raw)
	}
	// Services moved the other client off the nick, or (GHOST) off the network.
	moved := func(m ircmsg.Message) bool {
		return m.Command == "NICK" && len(m.Params) > 0 && pircan.RFC1459.Fold(m.Params[0]) != pircan.RFC1459.Fold(bot.Nick)
	}
	if kind == ircnet.Ergo {
		moved = func(m ircmsg.Message) bool {
			return m.Command == "ERROR" && len(m.Params) > 0 && strings.Contains(m.Params[0], "GHOSTed")
		}
	}
	if _, err := squatter.Expect(ctx, moved); err != nil {
		t.Fatalf("the other client kept the nick: %v", err)
	}
	if kind != ircnet.Ergo && strings.EqualFold(squatter.Nick(), bot.Nick) {
		t.Fatalf("the other client is still %s", squatter.Nick())
	}
}

// A frozen IRC server (SIGSTOP): PIRCAN's own PING goes unanswered, /readyz
// turns not ready and says why; once the server runs again PIRCAN is back.
func TestFrozenIRCServerIsNotReady(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testFrozenIRCServerIsNotReady)
}

func testFrozenIRCServerIsNotReady(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	n := bottest.PrivateNetworkOf(t, kind)
	bot := bottest.Start(t, bottest.Options{Net: n, HTTPAddr: "127.0.0.1:0", Transport: func(c *transport.Config) {
		c.PingIdle, c.PingTimeout = time.Second, 2*time.Second
	}})
	waitReady(t, bot, 200)
	if err := syscall.Kill(n.IRCdPID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(n.IRCdPID, syscall.SIGCONT)
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
	bottest.EachNetwork(t, testOperRefusedKeepsOrdinaryCap)
}

func testOperRefusedKeepsOrdinaryCap(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	logs := ircscript.NewLogs()
	bot := bottest.Start(t, bottest.Options{Kind: kind, HTTPAddr: "127.0.0.1:0", Log: logs, Transport: func(c *transport.Config) {
		c.OperPassword = "not-the-password"
	}})
	logs.Wait(t, "output capped like an ordinary client's") // the warning at start
	logs.Wait(t, "OPER refused")
	families := scrape(t, bot)
	if v := gaugeValue(t, families, "pircan_output_cap_lines_per_second"); v != transport.OrdinaryOutput.PerSecond {
		t.Fatalf("pircan_output_cap_lines_per_second = %v, want %v", v, transport.OrdinaryOutput.PerSecond)
	}
	if v := gaugeValue(t, families, "pircan_output_exempt"); v != 0 {
		t.Fatalf("pircan_output_exempt = %v", v)
	}
	if v := gaugeValue(t, families, "pircan_output_queue_delay_seconds"); v < 0 {
		t.Fatalf("pircan_output_queue_delay_seconds = %v", v)
	}
	if _, r := readyz(t, bot); !r.OutputCapped {
		t.Fatalf("readyz does not say the output is capped: %+v", r)
	}
	if v := gaugeValue(t, families, "pircan_output_cap_burst"); v != float64(transport.OrdinaryOutput.Burst) {
		t.Fatalf("pircan_output_cap_burst = %v, want %v", v, transport.OrdinaryOutput.Burst)
	}
	// Still serving, within the cap.
	a := bot.Agents(t, "nooper", 1)[0]
	if r := a.Ask(`PIRCAN/1 ECHO {"id":"y"}`); r.Str("re") != "y" {
		t.Fatalf("ECHO: %s", r.Raw)
	}
	// On the same connection: both servers answer a wrong oper password
	// with 491 alone, and PIRCAN does not leave over it.
	if n := bot.Conn().Reconnects(); n != 0 {
		t.Fatalf("%d reconnects after the refused OPER", n)
	}
}

// An exemption the operator states (PIRCAN_OUTPUT_EXEMPT): the configured
// cap is in force though OPER is refused, with no warning at start.
func TestStatedOutputExemption(t *testing.T) {
	t.Parallel()
	logs := ircscript.NewLogs()
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0", Log: logs, Transport: func(c *transport.Config) {
		c.OperPassword = "not-the-password"
		c.OutputExempt = true
	}})
	// The start-up log names every face's URL.
	for _, path := range []string{"/owner", "/mcp", "/a2a/<agent_id>/", "/parley/"} {
		if !logs.Has(`"http://` + bot.HTTPAddr() + path + `"`) {
			t.Errorf("the start-up log does not name %s", path)
		}
	}
	logs.Wait(t, "OPER refused; the output exemption is stated")
	families := scrape(t, bot)
	if v := gaugeValue(t, families, "pircan_output_cap_lines_per_second"); v != transport.DefaultPacing.GlobalRate {
		t.Fatalf("pircan_output_cap_lines_per_second = %v, want %v", v, transport.DefaultPacing.GlobalRate)
	}
	if v := gaugeValue(t, families, "pircan_output_exempt"); v != 1 {
		t.Fatalf("pircan_output_exempt = %v", v)
	}
	if _, r := readyz(t, bot); r.OutputCapped {
		t.Fatalf("readyz says capped: %+v", r)
	}
	if logs.Has("output capped like an ordinary client's") {
		t.Fatal("the cap warning with an exemption stated")
	}
}

// scriptedBot runs a bot against a scripted IRC server, with its HTTP face.
// It reconnects a second after losing the connection: the scripted server
// registers it again at once, so a shorter wait could make it ready again
// before a test has read /readyz after the QUIT.
func scriptedBot(t *testing.T, sc ircscript.Script) (*pircanbot.Bot, *ircscript.Server, string) {
	t.Helper()
	f := ircscript.Start(t, sc)
	cfg := pircanbot.Config{DatabaseURL: pgtest.Database(t), IRC: transport.Config{
		Server: f.Addr, Nick: ircscript.Nick, SASLAccount: ircscript.Account, SASLPassword: ircscript.Password,
		Lobby: bottest.Unique("#lobby"), BackoffMin: time.Second, BackoffMax: time.Second,
	}}
	ctx, cancel := context.WithCancel(context.Background())
	bot, err := pircanbot.New(ctx, cfg, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.InfoLevel))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { done <- bot.Run(ctx) }()
	go func() { done <- bot.ServeHTTP(ctx, "127.0.0.1:0") }()
	t.Cleanup(func() {
		cancel()
		for range 2 {
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Error("the bot did not stop")
			}
		}
	})
	waitFor(t, "the HTTP listener", func() bool { return bot.HTTPAddr() != "" })
	return bot, f, cfg.IRC.Lobby
}

func scriptedReady(t *testing.T, bot *pircanbot.Bot, want int) pircanbot.Readiness {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := get(t, "http://"+bot.HTTPAddr()+"/readyz")
		var r pircanbot.Readiness
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("readyz body %q: %v", body, err)
		}
		if code == want {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz: %d %+v, want %d", code, r, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// CAP DEL account-tag or a logout while serving: /readyz is not ready at
// once (the QUIT follows it) and says why; the lobby is joined once per
// connection, on the next one too, where PIRCAN serves again.
func TestIdentityLossTurnsNotReady(t *testing.T) {
	t.Parallel()
	for name, line := range map[string]string{
		"CAP DEL account-tag": ":srv CAP " + ircscript.Nick + " DEL :account-tag",
		"logged out":          ":" + ircscript.Nick + "!pircan@127.0.0.1 ACCOUNT *",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bot, f, lobby := scriptedBot(t, ircscript.Script{})
			joinedOnce := func(p *ircscript.Peer) {
				t.Helper()
				p.Expect(t, "CAP END")
				if got := p.Expect(t, "JOIN"); got != "JOIN "+lobby {
					t.Fatalf("first JOIN %q", got)
				}
				// The bot asks who is there after its JOINs: no second JOIN before.
				for l := p.Expect(t, ""); !strings.HasPrefix(l, "WHO "+lobby); l = p.Expect(t, "") {
					if strings.HasPrefix(l, "JOIN") {
						t.Fatalf("joined again: %q", l)
					}
				}
			}
			p := f.Next(t)
			joinedOnce(p)
			scriptedReady(t, bot, 200)
			p.Send(line)
			quit := p.Expect(t, "QUIT")
			code, body := get(t, "http://"+bot.HTTPAddr()+"/readyz")
			if code != http.StatusServiceUnavailable || !strings.Contains(body, `"irc":false`) || !strings.Contains(body, "irc_reason") {
				t.Fatalf("readyz after %s (QUIT %q): %d %s", name, quit, code, body)
			}
			joinedOnce(f.Next(t)) // it connects again, and joins the lobby again, once
			scriptedReady(t, bot, 200)
		})
	}
}

// A wrong SASL password on the real network: services refuse (904),
// PIRCAN never registers, says why, and tries again.
func TestWrongSASLPasswordNeverServes(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testWrongSASLPasswordNeverServes)
}

func testWrongSASLPasswordNeverServes(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	n := bottest.NetworkOf(t, kind)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nick := bottest.Unique("PIRCANW")
	if err := ircnet.RegisterAccount(ctx, n, nick, "right-password"); err != nil {
		t.Fatal(err)
	}
	bot, logs := runLogged(t, n, nick, nick, "wrong-password")
	first := logs.Wait(t, "does not serve", "904")
	if strings.Contains(first, "wrong-password") {
		t.Fatalf("the password is in the log: %s", first)
	}
	logs.Wait(t, "does not serve", "904") // again, after the backoff
	if bot.Conn().Online() {
		t.Fatal("serving without a login")
	}
}

// runLogged runs a bot on n as nick, logging in as account with password,
// retrying fast, its log kept; it stops when the test ends.
func runLogged(t *testing.T, n *ircnet.Network, nick, account, password string) (*pircanbot.Bot, *ircscript.Logs) {
	t.Helper()
	logs := ircscript.NewLogs()
	cfg := pircanbot.Config{DatabaseURL: pgtest.Database(t), IRC: transport.Config{
		Server: n.TLSAddr(), TLS: true, CAFile: n.CertFile, Nick: nick, SASLAccount: account, SASLPassword: password,
		Lobby: bottest.Unique("#lobby"), BackoffMin: 100 * time.Millisecond, BackoffMax: 200 * time.Millisecond,
	}}
	runCtx, stop := context.WithCancel(context.Background())
	bot, err := pircanbot.New(runCtx, cfg, zerolog.New(zerolog.MultiLevelWriter(logs, zerolog.NewTestWriter(t))))
	must(t, err)
	done := make(chan error, 1)
	go func() { done <- bot.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		<-done
	})
	return bot, logs
}

// Ergo with its default nick reservation (force-nick-equals-account) and
// PIRCAN_NICK other than the account: the server welcomes the bot under
// its account name. PIRCAN does not serve there; it says both nicks and
// what to set (log and /readyz's reason), and tries again.
func TestErgoNickMustBeTheAccount(t *testing.T) {
	t.Parallel()
	bottest.RequireKind(t, ircnet.Ergo)
	n, err := ircnet.StartWith(t.TempDir(), ircnet.Options{Kind: ircnet.Ergo, WatchPID: os.Getpid(), Env: []string{
		"ERGO__ACCOUNTS__NICK_RESERVATION__ENABLED=true", // the template's strict, force-nick-equals-account
	}})
	must(t, err)
	t.Cleanup(func() { _ = n.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	account, nick := bottest.Unique("pircanacct"), bottest.Unique("PIRCANF")
	must(t, ircnet.RegisterAccount(ctx, n, account, "pw-force"))
	bot, logs := runLogged(t, n, nick, account, "pw-force")
	both := []string{"does not serve", `\"` + account + `\"`, `\"` + nick + `\"`, "force-nick-equals-account", "PIRCAN_NICK"}
	logs.Wait(t, both...)
	if reason := bot.Conn().NotServing(); !strings.Contains(reason, account) || !strings.Contains(reason, nick) ||
		!strings.Contains(reason, "force-nick-equals-account") {
		t.Fatalf("/readyz's reason %q names neither both nicks nor the Ergo setting", reason)
	}
	logs.Wait(t, both...) // again, after the backoff: no loop of "nick in use"
	if bot.Conn().Online() {
		t.Fatal("serving under the account name instead of PIRCAN_NICK")
	}
}
