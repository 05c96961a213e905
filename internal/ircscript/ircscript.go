// Package ircscript is a scripted IRC server for tests: a TCP listener
// that speaks just enough IRC (CAP 302, SASL PLAIN, welcome, NickServ
// reclaim, OPER, PING), with the misbehaviours PIRCAN must survive switched
// on per test. Every line the client sends is recorded per connection.
package ircscript

import (
	"bufio"
	"encoding/base64"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The client the server expects: its nick, services account and password.
const (
	Nick     = "PIRCAN"
	Account  = "pircanacct"
	Password = "s3cret-pw"
	AllCaps  = "account-tag message-tags server-time extended-join account-notify cap-notify sasl=PLAIN,EXTERNAL"
)

type Script struct {
	Caps         string // CAP LS offer ("" = AllCaps)
	LSSilent     bool   // never answer CAP LS
	NoCAP        bool   // a server without CAP: registers at NICK+USER
	ReqSilent    bool   // never answer CAP REQ
	SASL         string // "" ok (900+903), "fail" 904, "already" 907, "silent", "no900" (903 alone)
	WelcomeAs    string // 001 under this nick (Ergo's force-nick-equals-account)
	NickHeld     bool   // another client holds Nick
	Reclaim      string // NickServ command that frees it ("RECOVER", "REGAIN", "GHOST"); "" none does
	Oper         string // "" no answer, "ok" 381, "no" 491
	PingSilently bool   // never answer PING (a frozen server)
}

// Server is a running scripted server.
type Server struct {
	Addr  string // host:port, plain TCP
	sc    Script
	conns chan *Peer
	count atomic.Int32
}

// Connections counts the connections accepted so far.
func (f *Server) Connections() int32 { return f.count.Load() }

// Peer is one connection from the bot, as the server sees it.
type Peer struct {
	Conn   net.Conn
	lines  chan string // closed when the connection ends
	mu     sync.Mutex
	nick   string
	frozen atomic.Bool
}

// Freeze makes the server stop answering on this connection, as a
// SIGSTOPped one would (it still reads).
func (p *Peer) Freeze() { p.frozen.Store(true) }

// Send writes one line to the client (nothing once frozen).
func (p *Peer) Send(line string) {
	if !p.frozen.Load() {
		_, _ = p.Conn.Write([]byte(line + "\r\n"))
	}
}

// Lines is every line the client sends, in order, as the server reads it
// (closed when the connection ends): for a benchmark that counts replies
// without Expect's timer per line.
func (p *Peer) Lines() <-chan string { return p.lines }

// Nick is the client's nick as the server sees it.
func (p *Peer) Nick() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.nick
}

// Expect waits for the next line the client sends that starts with prefix,
// returning it; other lines are skipped.
func (p *Peer) Expect(t testing.TB, prefix string) string {
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

// Rest returns every line the bot sends until the connection ends.
func (p *Peer) Rest(t testing.TB) []string {
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

// Start listens on a free loopback port; it stops when the test ends.
func Start(t testing.TB, sc Script) *Server {
	t.Helper()
	if sc.Caps == "" {
		sc.Caps = AllCaps
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	f := &Server{Addr: l.Addr().String(), sc: sc, conns: make(chan *Peer, 100)}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			f.count.Add(1)
			p := &Peer{Conn: c, lines: make(chan string, 10000), nick: "*"}
			t.Cleanup(func() { c.Close() })
			f.conns <- p
			go f.serve(p)
		}
	}()
	return f
}

// Next waits for the bot's next connection.
func (f *Server) Next(t testing.TB) *Peer {
	t.Helper()
	select {
	case p := <-f.conns:
		return p
	case <-time.After(30 * time.Second):
		t.Fatal("the bot did not connect (again)")
		return nil
	}
}

func (f *Server) serve(p *Peer) {
	defer close(p.lines)
	defer p.Conn.Close()
	sc := f.sc
	var gotUser, capEnded, welcomed bool
	held := sc.NickHeld
	offered := map[string]bool{}
	for _, tok := range strings.Fields(sc.Caps) {
		name, _, _ := strings.Cut(tok, "=")
		offered[name] = true
	}
	welcome := func() {
		if welcomed || !gotUser || !(capEnded || sc.NoCAP) || p.Nick() == "*" {
			return
		}
		welcomed = true
		if sc.WelcomeAs != "" {
			p.mu.Lock()
			p.nick = sc.WelcomeAs
			p.mu.Unlock()
		}
		p.Send(":srv 001 " + p.Nick() + " :Welcome")
		p.Send(":srv 422 " + p.Nick() + " :No MOTD")
	}
	prefix := func() string { return ":" + p.Nick() + "!pircan@127.0.0.1" }
	r := bufio.NewScanner(p.Conn)
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
			if sc.NoCAP {
				continue
			}
			switch arg(1) {
			case "LS":
				if !sc.LSSilent {
					p.Send(":srv CAP * LS :" + sc.Caps)
				}
			case "REQ":
				if sc.ReqSilent {
					continue
				}
				name := arg(2)
				if offered[name] {
					p.Send(":srv CAP * ACK :" + name)
				} else {
					p.Send(":srv CAP * NAK :" + name)
				}
			case "END":
				capEnded = true
				welcome()
			}
		case "AUTHENTICATE":
			if arg(1) == "PLAIN" {
				if sc.SASL != "silent" {
					p.Send("AUTHENTICATE +")
				}
				continue
			}
			raw, _ := base64.StdEncoding.DecodeString(arg(1))
			creds := strings.Split(string(raw), "\x00")
			ok := len(creds) == 3 && creds[1] == Account && creds[2] == Password
			switch {
			case !ok || sc.SASL == "fail":
				p.Send(":srv 904 * :SASL authentication failed")
			case sc.SASL == "already":
				p.Send(":srv 907 * :You have already authenticated using SASL")
			case sc.SASL == "no900":
				p.Send(":srv 903 * :SASL authentication successful")
			default:
				p.Send(":srv 900 * *!pircan@127.0.0.1 " + Account + " :You are now logged in as " + Account)
				p.Send(":srv 903 * :SASL authentication successful")
			}
		case "USER":
			gotUser = true
			welcome()
		case "NICK":
			want := arg(1)
			if strings.EqualFold(want, Nick) && held {
				p.Send(":srv 433 " + p.Nick() + " " + want + " :Nickname is already in use")
				continue
			}
			from := prefix()
			p.mu.Lock()
			p.nick = want
			p.mu.Unlock()
			if welcomed {
				p.Send(from + " NICK :" + want)
			}
			welcome()
		case "PRIVMSG":
			if strings.EqualFold(arg(1), "NickServ") && sc.Reclaim != "" && strings.EqualFold(arg(2), sc.Reclaim) &&
				strings.EqualFold(arg(3), Nick) {
				held = false
				// Anope moves the caller onto the nick. The nick is the
				// client's once the line is out, so it is recorded first:
				// a test that sees the bot serve reads the new nick.
				from := prefix()
				p.mu.Lock()
				p.nick = Nick
				p.mu.Unlock()
				p.Send(from + " NICK :" + Nick)
			}
		case "OPER":
			switch sc.Oper {
			case "ok":
				p.Send(":srv 381 " + p.Nick() + " :You are now an IRC operator")
			case "no":
				p.Send(":srv 491 " + p.Nick() + " :Invalid oper credentials")
			}
		case "JOIN":
			p.Send(prefix() + " JOIN " + arg(1))
		case "PING":
			if !sc.PingSilently {
				p.Send(":srv PONG srv :" + arg(1))
			}
		case "QUIT":
			p.Send("ERROR :Closing link")
			return
		}
	}
}

// Logs collects a client's log lines (an io.Writer) for waiting on one.
type Logs struct {
	mu     sync.Mutex
	lines  []string
	cursor int // wait looks after the last line it returned
	added  chan struct{}
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.lines = append(l.lines, string(p))
	l.mu.Unlock()
	select {
	case l.added <- struct{}{}:
	default:
	}
	return len(p), nil
}

// NewLogs returns an empty collector.
func NewLogs() *Logs { return &Logs{added: make(chan struct{}, 1)} }

// Wait returns the next log line (after the one it returned last) that
// contains every one of subs.
func (l *Logs) Wait(t testing.TB, subs ...string) string {
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

// Has says whether any line so far contains s.
func (l *Logs) Has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}
