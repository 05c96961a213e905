package transport

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ergochat/irc-go/ircmsg"
	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/ircscript"
)

func testConfig(addr string) Config {
	return Config{Server: addr, Nick: ircscript.Nick, SASLAccount: ircscript.Account, SASLPassword: ircscript.Password,
		BackoffMin: 20 * time.Millisecond, BackoffMax: 50 * time.Millisecond,
		StageTimeout: 2 * time.Second, RegisterTimeout: 5 * time.Second, ReclaimTimeout: 3 * time.Second}
}

// run starts the bot; it is stopped (and awaited) when the test ends.
func run(t *testing.T, cfg Config) (*Conn, *ircscript.Logs) {
	t.Helper()
	lg := ircscript.NewLogs()
	c := New(cfg, zerolog.New(zerolog.MultiLevelWriter(lg, zerolog.NewTestWriter(t))))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, "bye") }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after cancel")
		}
	})
	return c, lg
}

// serving waits for the Connected event.
func serving(t *testing.T, c *Conn) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case e := <-c.Events():
			if e.Kind == Connected {
				if !c.Online() {
					t.Fatal("Connected but not serving")
				}
				return
			}
		case <-timeout:
			t.Fatal("never served")
		}
	}
}

func TestServesWithOwnNickAccountAndAccountTag(t *testing.T) {
	f := ircscript.Start(t, ircscript.Script{})
	c, _ := run(t, testConfig(f.Addr))
	p := f.Next(t)
	if first := p.Expect(t, ""); first != "CAP LS 302" {
		t.Fatalf("first line %q, want CAP LS 302 before NICK/USER", first)
	}
	p.Expect(t, "AUTHENTICATE PLAIN")
	p.Expect(t, "CAP END")
	serving(t, c)
	p.Expect(t, "MODE "+ircscript.Nick+" +B")
}

func TestSASLSettingsRequired(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no account":  {SASLPassword: ircscript.Password},
		"no password": {SASLAccount: ircscript.Account},
	} {
		t.Run(name, func(t *testing.T) {
			f := ircscript.Start(t, ircscript.Script{})
			cfg.Server, cfg.Nick = f.Addr, ircscript.Nick
			err := New(cfg, zerolog.Nop()).Run(context.Background(), "bye")
			want := map[string]string{"no account": "PIRCAN_SASL_ACCOUNT", "no password": "PIRCAN_SASL_PASSWORD"}[name]
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("Run: %v, want an error naming %s", err, want)
			}
			if n := f.Connections(); n != 0 {
				t.Fatalf("%d connections made without SASL settings", n)
			}
		})
	}
}

// Each way SASL can fail: that connection never sends CAP END (so it
// never registers), the log says why, and PIRCAN tries again.
func TestSASLFailureNeverRegisters(t *testing.T) {
	cases := []struct {
		name string
		sc   ircscript.Script
		log  string
	}{
		{"904", ircscript.Script{SASL: "fail"}, "904"},
		{"907 already", ircscript.Script{SASL: "already"}, "907"},
		{"903 without 900", ircscript.Script{SASL: "no900"}, "without 900"},
		{"no answer", ircscript.Script{SASL: "silent"}, "stage SASL"},
		{"no sasl offered", ircscript.Script{Caps: "account-tag message-tags server-time"}, "does not offer SASL"},
		{"no PLAIN offered", ircscript.Script{Caps: "account-tag sasl=EXTERNAL"}, "not PLAIN"},
		{"no account-tag", ircscript.Script{Caps: "message-tags sasl"}, "account-tag"},
		{"CAP LS unanswered", ircscript.Script{LSSilent: true}, "stage CAP LS"},
		{"CAP REQ unanswered", ircscript.Script{ReqSilent: true}, "stage CAP REQ"},
		{"no CAP at all", ircscript.Script{NoCAP: true}, "without SASL and account-tag"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := ircscript.Start(t, tc.sc)
			cfg := testConfig(f.Addr)
			cfg.StageTimeout = 300 * time.Millisecond
			c, lg := run(t, cfg)
			p := f.Next(t)
			for _, line := range p.Rest(t) {
				if line == "CAP END" {
					t.Fatal("CAP END sent: the connection would register")
				}
			}
			lg.Wait(t, tc.log)
			f.Next(t) // tried again
			if c.Online() {
				t.Fatal("serving")
			}
		})
	}
}

func TestWrongPasswordSaysWhy(t *testing.T) {
	f := ircscript.Start(t, ircscript.Script{})
	cfg := testConfig(f.Addr)
	cfg.SASLPassword = "wrong"
	_, lg := run(t, cfg)
	line := lg.Wait(t, "PIRCAN_SASL_PASSWORD", "904")
	if strings.Contains(line, "wrong") {
		t.Fatalf("the password is in the log: %s", line)
	}
	p := f.Next(t)
	p.Expect(t, "QUIT :PIRCAN cannot serve")
}

// What PIRCAN must hold while it serves: losing any of it ends serving at
// once, QUITs with the reason, and reconnects.
func TestIdentityLostWhileServing(t *testing.T) {
	cases := []struct {
		name, line, reason string
	}{
		{"CAP DEL account-tag", ":srv CAP " + ircscript.Nick + " DEL :account-tag", "account-tag"},
		{"ACCOUNT *", ":" + ircscript.Nick + "!pircan@127.0.0.1 ACCOUNT *", "logged out"},
		{"901 logged out", ":srv 901 " + ircscript.Nick + " " + ircscript.Nick + "!pircan@127.0.0.1 :You are now logged out", "logged out"},
		{"another account", ":" + ircscript.Nick + "!pircan@127.0.0.1 ACCOUNT someoneelse", "someoneelse"},
		{"renamed", ":" + ircscript.Nick + "!pircan@127.0.0.1 NICK :Guest123", "Guest123"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := ircscript.Start(t, ircscript.Script{})
			c, lg := run(t, testConfig(f.Addr))
			p := f.Next(t)
			serving(t, c)
			p.Send(tc.line)
			quit := p.Expect(t, "QUIT ")
			if !strings.Contains(quit, tc.reason) {
				t.Fatalf("QUIT %q does not say %q", quit, tc.reason)
			}
			if c.Online() {
				t.Fatal("still serving after the QUIT")
			}
			lg.Wait(t, "does not serve", tc.reason)
			f.Next(t)
		})
	}
}

func TestCAPNewIsRequested(t *testing.T) {
	f := ircscript.Start(t, ircscript.Script{Caps: "account-tag message-tags cap-notify sasl"})
	c, _ := run(t, testConfig(f.Addr))
	p := f.Next(t)
	p.Expect(t, "CAP END")
	serving(t, c)
	p.Send(":srv CAP " + ircscript.Nick + " NEW :extended-join batch")
	if got := p.Expect(t, "CAP REQ"); got != "CAP REQ extended-join" {
		t.Fatalf("got %q", got)
	}
}

// account-tag withdrawn and offered anew (a module reloaded): PIRCAN asks
// for it again, and, since it was without it meanwhile, still leaves that
// connection and serves on the next.
func TestCAPNewAccountTagIsRequested(t *testing.T) {
	f := ircscript.Start(t, ircscript.Script{})
	c, _ := run(t, testConfig(f.Addr))
	p := f.Next(t)
	serving(t, c)
	p.Send(":srv CAP " + ircscript.Nick + " DEL :account-tag\r\n:srv CAP " + ircscript.Nick + " NEW :account-tag")
	var req, quit bool
	for _, line := range p.Rest(t) {
		req = req || line == "CAP REQ account-tag"
		quit = quit || strings.HasPrefix(line, "QUIT :PIRCAN cannot serve")
	}
	if !req || !quit {
		t.Fatalf("CAP REQ account-tag sent: %v; QUIT for the withdrawal: %v", req, quit)
	}
	f.Next(t)
	serving(t, c)
}

// Ergo's force-nick-equals-account welcomes the bot under its account
// name: PIRCAN does not serve there and says which setting to change.
func TestRenamedAtWelcome(t *testing.T) {
	f := ircscript.Start(t, ircscript.Script{WelcomeAs: ircscript.Account})
	c, lg := run(t, testConfig(f.Addr))
	line := lg.Wait(t, "does not serve", `\"`+ircscript.Account+`\"`, `\"`+ircscript.Nick+`\"`, "force-nick-equals-account")
	if !strings.Contains(line, "PIRCAN_NICK") {
		t.Fatalf("no hint: %s", line)
	}
	p := f.Next(t)
	p.Expect(t, "QUIT :PIRCAN cannot serve")
	if c.Online() {
		t.Fatal("serving")
	}
	f.Next(t)
}

func TestNickReclaim(t *testing.T) {
	for _, method := range []string{ReclaimRecover, ReclaimRegain, ReclaimGhost} {
		t.Run(method, func(t *testing.T) {
			f := ircscript.Start(t, ircscript.Script{NickHeld: true, Reclaim: strings.ToUpper(method)})
			cfg := testConfig(f.Addr)
			cfg.NickReclaim = method
			c, _ := run(t, cfg)
			p := f.Next(t)
			p.Expect(t, "PRIVMSG NickServ :"+strings.ToUpper(method)+" "+ircscript.Nick)
			serving(t, c)
			if got := p.Nick(); got != ircscript.Nick {
				t.Fatalf("serving as %q", got)
			}
		})
	}
}

func TestNickNotReclaimed(t *testing.T) {
	f := ircscript.Start(t, ircscript.Script{NickHeld: true})
	c, lg := run(t, testConfig(f.Addr))
	p := f.Next(t)
	p.Expect(t, "PRIVMSG NickServ :RECOVER "+ircscript.Nick)
	p.Expect(t, "NICK "+ircscript.Nick) // tried again by itself
	quit := p.Expect(t, "QUIT ")
	if !strings.Contains(quit, "not reclaimed") {
		t.Fatalf("QUIT %q", quit)
	}
	lg.Wait(t, "does not serve", "held by another client")
	if c.Online() {
		t.Fatal("served under another nick")
	}
	f.Next(t)
}

// A frozen server: PIRCAN's own PING goes unanswered, serving ends at the
// deadline, and PIRCAN connects again.
func TestSilentServerDetected(t *testing.T) {
	f := ircscript.Start(t, ircscript.Script{PingSilently: true})
	cfg := testConfig(f.Addr)
	cfg.PingIdle, cfg.PingTimeout = 200*time.Millisecond, 300*time.Millisecond
	c, lg := run(t, cfg)
	p := f.Next(t)
	serving(t, c)
	p.Freeze()
	p.Expect(t, "PING ")
	lg.Wait(t, "did not answer PIRCAN's PING")
	if c.Online() {
		t.Fatal("still serving")
	}
	f.Next(t)
}

// A server that answers PING keeps PIRCAN serving through silence.
func TestAnsweredPingKeepsServing(t *testing.T) {
	f := ircscript.Start(t, ircscript.Script{})
	cfg := testConfig(f.Addr)
	cfg.PingIdle, cfg.PingTimeout = 100*time.Millisecond, 300*time.Millisecond
	c, _ := run(t, cfg)
	p := f.Next(t)
	serving(t, c)
	for range 5 {
		p.Expect(t, "PING ")
	}
	if !c.Online() || f.Connections() != 1 {
		t.Fatalf("serving %v after %d connections", c.Online(), f.Connections())
	}
}

// Shutdown while the server holds registration: PIRCAN QUITs at once
// with the shutdown message, far inside the registration bound.
func TestShutdownWhileRegistering(t *testing.T) {
	f := ircscript.Start(t, ircscript.Script{LSSilent: true})
	cfg := testConfig(f.Addr)
	cfg.StageTimeout, cfg.RegisterTimeout = time.Minute, time.Minute
	c := New(cfg, zerolog.New(zerolog.NewTestWriter(t)))
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, "bye") }()
	p := f.Next(t)
	p.Expect(t, "CAP LS")
	cancel(QuitMessage("PIRCAN is shutting down"))
	if got := p.Expect(t, "QUIT"); got != "QUIT :PIRCAN is shutting down" {
		t.Fatalf("got %q", got)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return while registering")
	}
}

func TestJoinOncePerConnection(t *testing.T) {
	f := ircscript.Start(t, ircscript.Script{})
	c, _ := run(t, testConfig(f.Addr))
	p := f.Next(t)
	serving(t, c)
	c.Join("#lobby")
	c.Join("#Lobby", "#lobby")
	c.SetModes("#sentinel", "+n")
	if got := p.Expect(t, "JOIN"); got != "JOIN #lobby" {
		t.Fatalf("got %q", got)
	}
	for {
		line := p.Expect(t, "")
		if strings.HasPrefix(line, "JOIN") {
			t.Fatalf("joined twice: %q", line)
		}
		if strings.HasPrefix(line, "MODE #sentinel") {
			break
		}
	}
	// After a PART it may be joined again.
	c.Part("#lobby")
	c.Join("#lobby")
	p.Expect(t, "PART #lobby")
	p.Expect(t, "JOIN #lobby")
}

func TestOutputCapFollowsTheServer(t *testing.T) {
	configured := OutputCap{Burst: 200, PerSecond: 200}
	pacing := DefaultPacing
	pacing.GlobalBurst, pacing.GlobalRate = configured.Burst, configured.PerSecond

	t.Run("no OPER configured", func(t *testing.T) {
		f := ircscript.Start(t, ircscript.Script{Oper: "ok"})
		cfg := testConfig(f.Addr)
		cfg.Pacing = pacing
		c, _ := run(t, cfg)
		f.Next(t)
		serving(t, c)
		if got := c.OutputCap(); got != OrdinaryOutput {
			t.Fatalf("cap %+v, want %+v", got, OrdinaryOutput)
		}
	})
	t.Run("OPER refused", func(t *testing.T) {
		f := ircscript.Start(t, ircscript.Script{Oper: "no"})
		cfg := testConfig(f.Addr)
		cfg.Pacing, cfg.OperName, cfg.OperPassword = pacing, "bot", "pw"
		c, lg := run(t, cfg)
		f.Next(t)
		lg.Wait(t, "OPER refused")
		if got := c.OutputCap(); got != OrdinaryOutput {
			t.Fatalf("cap %+v, want %+v", got, OrdinaryOutput)
		}
	})
	t.Run("OPER granted, then a flood kill", func(t *testing.T) {
		f := ircscript.Start(t, ircscript.Script{Oper: "ok"})
		cfg := testConfig(f.Addr)
		cfg.Pacing, cfg.OperName, cfg.OperPassword = pacing, "bot", "pw"
		c, lg := run(t, cfg)
		p := f.Next(t)
		lg.Wait(t, "OPER granted")
		if got := c.OutputCap(); got != configured {
			t.Fatalf("cap %+v, want %+v", got, configured)
		}
		p.Send("ERROR :Closing link: (pircan@127.0.0.1) [RecvQ exceeded]")
		p.Conn.Close()
		lg.Wait(t, "output cap lowered")
		f.Next(t)
		lg.Wait(t, "OPER granted")
		if got, want := c.OutputCap(), (OutputCap{Burst: 100, PerSecond: 100}); got != want {
			t.Fatalf("cap after the flood kill %+v, want %+v", got, want)
		}
	})
}

func TestOutputPolicy(t *testing.T) {
	o := newOutputPolicy(PacerConfig{GlobalBurst: 200, GlobalRate: 200}, false)
	if got := o.set(false); got != OrdinaryOutput || o.Exempt() {
		t.Fatalf("without exemption %+v", got)
	}
	if got := o.flooded(); got != (OutputCap{Burst: 2, PerSecond: 0.5}) {
		t.Fatalf("halved %+v", got)
	}
	for range 10 {
		o.flooded()
	}
	if got := o.set(true); got != minOutput {
		t.Fatalf("floor %+v, want %+v", got, minOutput)
	}
	small := newOutputPolicy(PacerConfig{GlobalBurst: 2, GlobalRate: 0.5}, false)
	if got := small.set(false); got != (OutputCap{Burst: 2, PerSecond: 0.5}) {
		t.Fatalf("a configured cap below the ordinary one: %+v", got)
	}
	// An exemption the operator states: the configured cap without OPER,
	// on every connection, and still halved by a flood disconnect.
	stated := newOutputPolicy(PacerConfig{GlobalBurst: 200, GlobalRate: 200}, true)
	if got := stated.set(false); got != (OutputCap{Burst: 200, PerSecond: 200}) || !stated.Exempt() {
		t.Fatalf("stated exemption %+v", got)
	}
	if got := stated.flooded(); got != (OutputCap{Burst: 100, PerSecond: 100}) {
		t.Fatalf("stated exemption after a flood kill %+v", got)
	}
	if got := stated.set(false); got != (OutputCap{Burst: 100, PerSecond: 100}) {
		t.Fatalf("stated exemption on the next connection %+v", got)
	}
	for _, text := range []string{"Closing link: (x@y) [Excess Flood]", "RecvQ exceeded", "SendQ exceeded"} {
		if !floodKill(text) {
			t.Errorf("%q not taken for a flood kill", text)
		}
	}
	if floodKill("Closing link: (x@y) [Quit: bye]") {
		t.Error("a plain close taken for a flood kill")
	}
}

// The default bounds keep the promises docs/protocol-notes.md ("Worst
// cases") makes from them: a registration stage, the whole registration
// and the nick reclaim each end within 30 s of a server that stops
// answering, and a silent connection is found within 30 s (its own PING
// after PingIdle, unanswered for PingTimeout, each seen at most one check
// late).
func TestDefaultBoundsMeetTheSpec(t *testing.T) {
	const spec = 30 * time.Second
	cfg := New(Config{}, zerolog.Nop()).cfg
	for name, d := range map[string]time.Duration{
		"stage": cfg.StageTimeout, "registration": cfg.RegisterTimeout, "reclaim": cfg.ReclaimTimeout,
	} {
		if d <= 0 || d > spec {
			t.Errorf("%s bound %v, want within %v", name, d, spec)
		}
	}
	if cfg.StageTimeout > cfg.RegisterTimeout {
		t.Errorf("stage bound %v beyond the registration's %v", cfg.StageTimeout, cfg.RegisterTimeout)
	}
	if silent := cfg.PingIdle + cfg.PingTimeout + 2*livenessCheck(cfg.PingIdle, cfg.PingTimeout); silent > spec {
		t.Errorf("a silent connection is found after up to %v, want within %v", silent, spec)
	}
	if QuitWait >= 5*time.Second {
		t.Errorf("QuitWait %v leaves nothing of the 5 s drain for replies", QuitWait)
	}
}

// TestNoticeLineAsIRCGo holds sendNotices's own line building to what
// irc-go's MakeMessage + LineBytesStrict(true, 512) make and refuse.
func TestNoticeLineAsIRCGo(t *testing.T) {
	long := strings.Repeat("x", 510-len("NOTICE nick :")-1)
	for _, target := range []string{"nick", "a:b", "", "two words", ":colon", "n\x00", "n\rick"} {
		for _, text := range []string{"PIRCAN/1 WHOAMI {}", "oneword", "", ":starts", "nul\x00", "cr\r", "lf\n",
			long + " ", long + "  ", long + "xy", "ünï cödé"} {
			m := ircmsg.MakeMessage(nil, "", "NOTICE", target, text)
			want, wantErr := m.LineBytesStrict(true, 512)
			err := noticeRefused(target, text)
			if (err != nil) != (wantErr != nil) {
				t.Errorf("%q %q: refused %v, irc-go %v", target, text, err, wantErr)
				continue
			}
			if err != nil {
				continue
			}
			var b strings.Builder
			b.WriteString("NOTICE " + target + " ")
			if trailing(text) {
				b.WriteByte(':')
			}
			b.WriteString(text)
			if got := b.String() + "\r\n"; got != string(want) || noticeLen(target, text) != len(want)-2 {
				t.Errorf("%q %q: %q (len %d), irc-go %q", target, text, got, noticeLen(target, text), want)
			}
		}
	}
}
