package ircconn

import (
	"bufio"
	"context"
	"encoding/base64"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// A scripted IRC server: a TCP listener in the test that speaks just
// enough IRC, with the misbehaviours PIRCAN must survive switched on per
// test. Every line the bot sends is recorded per connection.

const (
	testNick     = "PIRCAN"
	testAccount  = "pircanacct"
	testPassword = "s3cret-pw"
	allCaps      = "account-tag message-tags server-time extended-join account-notify cap-notify sasl=PLAIN,EXTERNAL"
)

type script struct {
	caps         string // CAP LS offer ("" = allCaps)
	lsSilent     bool   // never answer CAP LS
	noCAP        bool   // a server without CAP: registers at NICK+USER
	reqSilent    bool   // never answer CAP REQ
	sasl         string // "" ok (900+903), "fail" 904, "already" 907, "silent", "no900" (903 alone)
	welcomeAs    string // 001 under this nick (Ergo's force-nick-equals-account)
	nickHeld     bool   // another client holds testNick
	reclaim      string // NickServ command that frees it ("RECOVER", "REGAIN"); "" none does
	oper         string // "" no answer, "ok" 381, "no" 491
	pingSilently bool   // never answer PING (a frozen server)
}

type fakeIRC struct {
	t     *testing.T
	addr  string
	sc    script
	conns chan *peer
	count atomic.Int32
}

// peer is one connection from the bot, as the server sees it.
type peer struct {
	conn   net.Conn
	lines  chan string // closed when the connection ends
	mu     sync.Mutex
	nick   string
	frozen atomic.Bool
}

func (p *peer) send(line string) {
	if !p.frozen.Load() {
		_, _ = p.conn.Write([]byte(line + "\r\n"))
	}
}

func (p *peer) currentNick() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.nick
}

// expect waits for the next line the bot sends that starts with prefix,
// returning it; other lines are skipped.
func (p *peer) expect(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("connection ended before the bot sent %q", prefix)
			}
			if strings.HasPrefix(line, prefix) {
				return line
			}
		case <-timeout:
			t.Fatalf("the bot never sent %q", prefix)
		}
	}
}

// rest returns every line the bot sends until the connection ends.
func (p *peer) rest(t *testing.T) []string {
	t.Helper()
	var out []string
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return out
			}
			out = append(out, line)
		case <-timeout:
			t.Fatalf("the connection did not end; lines so far: %q", out)
		}
	}
}

func newFakeIRC(t *testing.T, sc script) *fakeIRC {
	t.Helper()
	if sc.caps == "" {
		sc.caps = allCaps
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	f := &fakeIRC{t: t, addr: l.Addr().String(), sc: sc, conns: make(chan *peer, 100)}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			f.count.Add(1)
			p := &peer{conn: c, lines: make(chan string, 10000), nick: "*"}
			t.Cleanup(func() { c.Close() })
			f.conns <- p
			go f.serve(p)
		}
	}()
	return f
}

// next waits for the bot's next connection.
func (f *fakeIRC) next(t *testing.T) *peer {
	t.Helper()
	select {
	case p := <-f.conns:
		return p
	case <-time.After(30 * time.Second):
		t.Fatal("the bot did not connect (again)")
		return nil
	}
}

func (f *fakeIRC) serve(p *peer) {
	defer close(p.lines)
	defer p.conn.Close()
	sc := f.sc
	var gotUser, capEnded, welcomed bool
	held := sc.nickHeld
	offered := map[string]bool{}
	for _, tok := range strings.Fields(sc.caps) {
		name, _, _ := strings.Cut(tok, "=")
		offered[name] = true
	}
	welcome := func() {
		if welcomed || !gotUser || !(capEnded || sc.noCAP) || p.currentNick() == "*" {
			return
		}
		welcomed = true
		if sc.welcomeAs != "" {
			p.mu.Lock()
			p.nick = sc.welcomeAs
			p.mu.Unlock()
		}
		p.send(":srv 001 " + p.currentNick() + " :Welcome")
		p.send(":srv 422 " + p.currentNick() + " :No MOTD")
	}
	prefix := func() string { return ":" + p.currentNick() + "!pircan@127.0.0.1" }
	r := bufio.NewScanner(p.conn)
	for r.Scan() {
		line := r.Text()
		p.lines <- line
		if p.frozen.Load() {
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		arg := func(i int) string {
			if i < len(f) {
				return strings.TrimPrefix(f[i], ":")
			}
			return ""
		}
		switch f[0] {
		case "CAP":
			if sc.noCAP {
				continue
			}
			switch arg(1) {
			case "LS":
				if !sc.lsSilent {
					p.send(":srv CAP * LS :" + sc.caps)
				}
			case "REQ":
				if sc.reqSilent {
					continue
				}
				name := arg(2)
				if offered[name] {
					p.send(":srv CAP * ACK :" + name)
				} else {
					p.send(":srv CAP * NAK :" + name)
				}
			case "END":
				capEnded = true
				welcome()
			}
		case "AUTHENTICATE":
			if arg(1) == "PLAIN" {
				if sc.sasl != "silent" {
					p.send("AUTHENTICATE +")
				}
				continue
			}
			raw, _ := base64.StdEncoding.DecodeString(arg(1))
			creds := strings.Split(string(raw), "\x00")
			ok := len(creds) == 3 && creds[1] == testAccount && creds[2] == testPassword
			switch {
			case !ok || sc.sasl == "fail":
				p.send(":srv 904 * :SASL authentication failed")
			case sc.sasl == "already":
				p.send(":srv 907 * :You have already authenticated using SASL")
			case sc.sasl == "no900":
				p.send(":srv 903 * :SASL authentication successful")
			default:
				p.send(":srv 900 * *!pircan@127.0.0.1 " + testAccount + " :You are now logged in as " + testAccount)
				p.send(":srv 903 * :SASL authentication successful")
			}
		case "USER":
			gotUser = true
			welcome()
		case "NICK":
			want := arg(1)
			if strings.EqualFold(want, testNick) && held {
				p.send(":srv 433 " + p.currentNick() + " " + want + " :Nickname is already in use")
				continue
			}
			if welcomed {
				p.send(prefix() + " NICK :" + want)
			}
			p.mu.Lock()
			p.nick = want
			p.mu.Unlock()
			welcome()
		case "PRIVMSG":
			if strings.EqualFold(arg(1), "NickServ") && sc.reclaim != "" && strings.EqualFold(arg(2), sc.reclaim) &&
				strings.EqualFold(arg(3), testNick) {
				held = false
				p.send(prefix() + " NICK :" + testNick) // Anope moves the caller onto the nick
				p.mu.Lock()
				p.nick = testNick
				p.mu.Unlock()
			}
		case "OPER":
			switch sc.oper {
			case "ok":
				p.send(":srv 381 " + p.currentNick() + " :You are now an IRC operator")
			case "no":
				p.send(":srv 491 " + p.currentNick() + " :Invalid oper credentials")
			}
		case "JOIN":
			p.send(prefix() + " JOIN " + arg(1))
		case "PING":
			if !sc.pingSilently {
				p.send(":srv PONG srv :" + arg(1))
			}
		case "QUIT":
			p.send("ERROR :Closing link")
			return
		}
	}
}

// logs collects the bot's log lines for waiting on one.
type logs struct {
	mu     sync.Mutex
	lines  []string
	cursor int // wait looks after the last line it returned
	added  chan struct{}
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.lines = append(l.lines, string(p))
	l.mu.Unlock()
	select {
	case l.added <- struct{}{}:
	default:
	}
	return len(p), nil
}

// wait returns the next log line containing every one of subs.
func (l *logs) wait(t *testing.T, subs ...string) string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		l.mu.Lock()
	next:
		for ; l.cursor < len(l.lines); l.cursor++ {
			for _, s := range subs {
				if !strings.Contains(l.lines[l.cursor], s) {
					continue next
				}
			}
			l.cursor++
			line := l.lines[l.cursor-1]
			l.mu.Unlock()
			return line
		}
		l.mu.Unlock()
		select {
		case <-l.added:
		case <-timeout:
			t.Fatalf("no log line with %q", subs)
		}
	}
}

func testConfig(addr string) Config {
	return Config{Server: addr, Nick: testNick, SASLAccount: testAccount, SASLPassword: testPassword,
		BackoffMin: 20 * time.Millisecond, BackoffMax: 50 * time.Millisecond,
		StageTimeout: 2 * time.Second, RegisterTimeout: 5 * time.Second, ReclaimTimeout: 3 * time.Second}
}

// run starts the bot; it is stopped (and awaited) when the test ends.
func run(t *testing.T, cfg Config) (*Conn, *logs) {
	t.Helper()
	lg := &logs{added: make(chan struct{}, 1)}
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
				if !c.Registered() {
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
	f := newFakeIRC(t, script{})
	c, _ := run(t, testConfig(f.addr))
	p := f.next(t)
	if first := p.expect(t, ""); first != "CAP LS 302" {
		t.Fatalf("first line %q, want CAP LS 302 before NICK/USER", first)
	}
	p.expect(t, "AUTHENTICATE PLAIN")
	p.expect(t, "CAP END")
	serving(t, c)
	p.expect(t, "MODE "+testNick+" +B")
}

func TestSASLSettingsRequired(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no account":  {SASLPassword: testPassword},
		"no password": {SASLAccount: testAccount},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFakeIRC(t, script{})
			cfg.Server, cfg.Nick = f.addr, testNick
			err := New(cfg, zerolog.Nop()).Run(context.Background(), "bye")
			want := map[string]string{"no account": "PIRCAN_SASL_ACCOUNT", "no password": "PIRCAN_SASL_PASSWORD"}[name]
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("Run: %v, want an error naming %s", err, want)
			}
			if n := f.count.Load(); n != 0 {
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
		sc   script
		log  string
	}{
		{"904", script{sasl: "fail"}, "904"},
		{"907 already", script{sasl: "already"}, "907"},
		{"903 without 900", script{sasl: "no900"}, "without 900"},
		{"no answer", script{sasl: "silent"}, "stage SASL"},
		{"no sasl offered", script{caps: "account-tag message-tags server-time"}, "does not offer SASL"},
		{"no PLAIN offered", script{caps: "account-tag sasl=EXTERNAL"}, "not PLAIN"},
		{"no account-tag", script{caps: "message-tags sasl"}, "account-tag"},
		{"CAP LS unanswered", script{lsSilent: true}, "stage CAP LS"},
		{"CAP REQ unanswered", script{reqSilent: true}, "stage CAP REQ"},
		{"no CAP at all", script{noCAP: true}, "without SASL and account-tag"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeIRC(t, tc.sc)
			cfg := testConfig(f.addr)
			cfg.StageTimeout = 300 * time.Millisecond
			c, lg := run(t, cfg)
			p := f.next(t)
			for _, line := range p.rest(t) {
				if line == "CAP END" {
					t.Fatal("CAP END sent: the connection would register")
				}
			}
			lg.wait(t, tc.log)
			f.next(t) // tried again
			if c.Registered() {
				t.Fatal("serving")
			}
		})
	}
}

func TestWrongPasswordSaysWhy(t *testing.T) {
	f := newFakeIRC(t, script{})
	cfg := testConfig(f.addr)
	cfg.SASLPassword = "wrong"
	_, lg := run(t, cfg)
	line := lg.wait(t, "PIRCAN_SASL_PASSWORD", "904")
	if strings.Contains(line, "wrong") {
		t.Fatalf("the password is in the log: %s", line)
	}
	p := f.next(t)
	p.expect(t, "QUIT :PIRCAN cannot serve")
}

// What PIRCAN must hold while it serves: losing any of it ends serving at
// once, QUITs with the reason, and reconnects.
func TestIdentityLostWhileServing(t *testing.T) {
	cases := []struct {
		name, line, reason string
	}{
		{"CAP DEL account-tag", ":srv CAP " + testNick + " DEL :account-tag", "account-tag"},
		{"ACCOUNT *", ":" + testNick + "!pircan@127.0.0.1 ACCOUNT *", "logged out"},
		{"901 logged out", ":srv 901 " + testNick + " " + testNick + "!pircan@127.0.0.1 :You are now logged out", "logged out"},
		{"another account", ":" + testNick + "!pircan@127.0.0.1 ACCOUNT someoneelse", "someoneelse"},
		{"renamed", ":" + testNick + "!pircan@127.0.0.1 NICK :Guest123", "Guest123"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeIRC(t, script{})
			c, lg := run(t, testConfig(f.addr))
			p := f.next(t)
			serving(t, c)
			p.send(tc.line)
			quit := p.expect(t, "QUIT ")
			if !strings.Contains(quit, tc.reason) {
				t.Fatalf("QUIT %q does not say %q", quit, tc.reason)
			}
			if c.Registered() {
				t.Fatal("still serving after the QUIT")
			}
			lg.wait(t, "does not serve", tc.reason)
			f.next(t)
		})
	}
}

func TestCAPNewIsRequested(t *testing.T) {
	f := newFakeIRC(t, script{caps: "account-tag message-tags cap-notify sasl"})
	c, _ := run(t, testConfig(f.addr))
	p := f.next(t)
	p.expect(t, "CAP END")
	serving(t, c)
	p.send(":srv CAP " + testNick + " NEW :extended-join batch")
	if got := p.expect(t, "CAP REQ"); got != "CAP REQ extended-join" {
		t.Fatalf("got %q", got)
	}
}

// Ergo's force-nick-equals-account welcomes the bot under its account
// name: PIRCAN does not serve there and says which setting to change.
func TestRenamedAtWelcome(t *testing.T) {
	f := newFakeIRC(t, script{welcomeAs: testAccount})
	c, lg := run(t, testConfig(f.addr))
	line := lg.wait(t, "does not serve", `\"`+testAccount+`\"`, `\"`+testNick+`\"`, "force-nick-equals-account")
	if !strings.Contains(line, "PIRCAN_NICK") {
		t.Fatalf("no hint: %s", line)
	}
	p := f.next(t)
	p.expect(t, "QUIT :PIRCAN cannot serve")
	if c.Registered() {
		t.Fatal("serving")
	}
	f.next(t)
}

func TestNickReclaim(t *testing.T) {
	for _, method := range []string{ReclaimRecover, ReclaimRegain, ReclaimGhost} {
		t.Run(method, func(t *testing.T) {
			f := newFakeIRC(t, script{nickHeld: true, reclaim: strings.ToUpper(method)})
			cfg := testConfig(f.addr)
			cfg.NickReclaim = method
			c, _ := run(t, cfg)
			p := f.next(t)
			p.expect(t, "PRIVMSG NickServ :"+strings.ToUpper(method)+" "+testNick)
			serving(t, c)
			if got := p.currentNick(); got != testNick {
				t.Fatalf("serving as %q", got)
			}
		})
	}
}

func TestNickNotReclaimed(t *testing.T) {
	f := newFakeIRC(t, script{nickHeld: true})
	c, lg := run(t, testConfig(f.addr))
	p := f.next(t)
	p.expect(t, "PRIVMSG NickServ :RECOVER "+testNick)
	p.expect(t, "NICK "+testNick) // tried again by itself
	quit := p.expect(t, "QUIT ")
	if !strings.Contains(quit, "not reclaimed") {
		t.Fatalf("QUIT %q", quit)
	}
	lg.wait(t, "does not serve", "held by another client")
	if c.Registered() {
		t.Fatal("served under another nick")
	}
	f.next(t)
}

// A frozen server: PIRCAN's own PING goes unanswered, serving ends at the
// deadline, and PIRCAN connects again.
func TestSilentServerDetected(t *testing.T) {
	f := newFakeIRC(t, script{pingSilently: true})
	cfg := testConfig(f.addr)
	cfg.PingIdle, cfg.PingTimeout = 200*time.Millisecond, 300*time.Millisecond
	c, lg := run(t, cfg)
	p := f.next(t)
	serving(t, c)
	p.frozen.Store(true)
	p.expect(t, "PING ")
	lg.wait(t, "did not answer PIRCAN's PING")
	if c.Registered() {
		t.Fatal("still serving")
	}
	f.next(t)
}

// A server that answers PING keeps PIRCAN serving through silence.
func TestAnsweredPingKeepsServing(t *testing.T) {
	f := newFakeIRC(t, script{})
	cfg := testConfig(f.addr)
	cfg.PingIdle, cfg.PingTimeout = 100*time.Millisecond, 300*time.Millisecond
	c, _ := run(t, cfg)
	p := f.next(t)
	serving(t, c)
	for range 5 {
		p.expect(t, "PING ")
	}
	if !c.Registered() || f.count.Load() != 1 {
		t.Fatalf("serving %v after %d connections", c.Registered(), f.count.Load())
	}
}

// Shutdown while the server holds registration: PIRCAN QUITs at once
// with the shutdown message, far inside the registration bound.
func TestShutdownWhileRegistering(t *testing.T) {
	f := newFakeIRC(t, script{lsSilent: true})
	cfg := testConfig(f.addr)
	cfg.StageTimeout, cfg.RegisterTimeout = time.Minute, time.Minute
	c := New(cfg, zerolog.New(zerolog.NewTestWriter(t)))
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, "bye") }()
	p := f.next(t)
	p.expect(t, "CAP LS")
	cancel(QuitMessage("PIRCAN is shutting down"))
	if got := p.expect(t, "QUIT"); got != "QUIT :PIRCAN is shutting down" {
		t.Fatalf("got %q", got)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return while registering")
	}
}

func TestJoinOncePerConnection(t *testing.T) {
	f := newFakeIRC(t, script{})
	c, _ := run(t, testConfig(f.addr))
	p := f.next(t)
	serving(t, c)
	c.Join("#lobby")
	c.Join("#Lobby", "#lobby")
	c.SetModes("#sentinel", "+n")
	if got := p.expect(t, "JOIN"); got != "JOIN #lobby" {
		t.Fatalf("got %q", got)
	}
	for {
		line := p.expect(t, "")
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
	p.expect(t, "PART #lobby")
	p.expect(t, "JOIN #lobby")
}

func TestOutputCapFollowsTheServer(t *testing.T) {
	configured := OutputCap{Burst: 200, PerSecond: 200}
	pacing := DefaultPacing
	pacing.GlobalBurst, pacing.GlobalRate = configured.Burst, configured.PerSecond

	t.Run("no OPER configured", func(t *testing.T) {
		f := newFakeIRC(t, script{oper: "ok"})
		cfg := testConfig(f.addr)
		cfg.Pacing = pacing
		c, _ := run(t, cfg)
		f.next(t)
		serving(t, c)
		if got := c.OutputCap(); got != OrdinaryOutput {
			t.Fatalf("cap %+v, want %+v", got, OrdinaryOutput)
		}
	})
	t.Run("OPER refused", func(t *testing.T) {
		f := newFakeIRC(t, script{oper: "no"})
		cfg := testConfig(f.addr)
		cfg.Pacing, cfg.OperName, cfg.OperPassword = pacing, "bot", "pw"
		c, lg := run(t, cfg)
		f.next(t)
		lg.wait(t, "OPER refused")
		if got := c.OutputCap(); got != OrdinaryOutput {
			t.Fatalf("cap %+v, want %+v", got, OrdinaryOutput)
		}
	})
	t.Run("OPER granted, then a flood kill", func(t *testing.T) {
		f := newFakeIRC(t, script{oper: "ok"})
		cfg := testConfig(f.addr)
		cfg.Pacing, cfg.OperName, cfg.OperPassword = pacing, "bot", "pw"
		c, lg := run(t, cfg)
		p := f.next(t)
		lg.wait(t, "OPER granted")
		if got := c.OutputCap(); got != configured {
			t.Fatalf("cap %+v, want %+v", got, configured)
		}
		p.send("ERROR :Closing link: (pircan@127.0.0.1) [RecvQ exceeded]")
		p.conn.Close()
		lg.wait(t, "output cap lowered")
		f.next(t)
		lg.wait(t, "OPER granted")
		if got, want := c.OutputCap(), (OutputCap{Burst: 100, PerSecond: 100}); got != want {
			t.Fatalf("cap after the flood kill %+v, want %+v", got, want)
		}
	})
}

func TestOutputPolicy(t *testing.T) {
	o := newOutputPolicy(PacerConfig{GlobalBurst: 200, GlobalRate: 200})
	if got := o.set(false); got != OrdinaryOutput {
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
	small := newOutputPolicy(PacerConfig{GlobalBurst: 2, GlobalRate: 0.5})
	if got := small.set(false); got != (OutputCap{Burst: 2, PerSecond: 0.5}) {
		t.Fatalf("a configured cap below the ordinary one: %+v", got)
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
