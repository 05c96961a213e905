package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ergochat/irc-go/ircmsg"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/ircnet"
	"github.com/creatimus/pircan/internal/pgtest"
)

func TestMain(m *testing.M) { bottest.Main(m) }

var built struct {
	once sync.Once
	path string
	err  error
}

// binary builds `pircan` once per test run.
func binary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "pircan-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "pircan")
		out, err := exec.Command("go", "build", "-race", "-o", built.path, ".").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// process is `pircan serve` running as its own process.
type process struct {
	cmd    *exec.Cmd
	logs   *lockedBuffer
	exited chan error
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// botEnv is the configuration of a bot process on the test network.
type botEnv struct {
	net      *ircnet.Network
	nick     string
	password string
	dsn      string
	lobby    string
}

func newBotEnv(t *testing.T, kind ircnet.Kind) botEnv {
	t.Helper()
	n := bottest.NetworkOf(t, kind)
	e := botEnv{net: n, nick: bottest.Unique("PIRCANP"), password: "pw-" + bottest.Unique("x"),
		dsn: pgtest.Database(t), lobby: bottest.Unique("#agentsp")}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ircnet.RegisterAccount(ctx, n, e.nick, e.password); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e botEnv) start(t *testing.T) *process { return e.startWith(t) }

// startWith starts the bot with extra environment (later values win).
func (e botEnv) startWith(t *testing.T, env ...string) *process {
	t.Helper()
	cmd := exec.Command(binary(t), "serve")
	cmd.Env = append(os.Environ(),
		"PIRCAN_DATABASE_URL="+e.dsn, "PIRCAN_IRC_SERVER="+e.net.TLSAddr(), "PIRCAN_IRC_CA_FILE="+e.net.CertFile,
		"PIRCAN_NICK="+e.nick, "PIRCAN_SASL_ACCOUNT="+e.nick, "PIRCAN_SASL_PASSWORD="+e.password,
		"PIRCAN_OPER_NAME="+e.net.BotOperName, "PIRCAN_OPER_PASSWORD="+e.net.BotOperPass,
		"PIRCAN_LOBBY="+e.lobby, "PIRCAN_HTTP_ADDR=127.0.0.1:0", "PIRCAN_RATE_PER_CALLER=100000",
		"PIRCAN_REPLY_BURST=1000", "PIRCAN_REPLY_RATE=1000", "PIRCAN_MESSAGES_PER_HOUR=100000")
	cmd.Env = append(cmd.Env, env...)
	p := &process{cmd: cmd, logs: &lockedBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = p.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("bot logs:\n%s", p.logs.String())
		}
	})
	return p
}

// agents connects clients that talk to the process's nick.
func (e botEnv) agents(t *testing.T, base string, n int) []*bottest.Agent {
	return (&bottest.Bot{Net: e.net, Nick: e.nick}).Agents(t, base, n)
}

// waitServing asks until the bot answers.
func waitServing(t *testing.T, a *bottest.Agent) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		a.Send(`PIRCAN/1 ECHO {"id":"up"}`)
		if line, ok := a.TryNextLine(time.Second); ok && strings.Contains(line, `"re":"up"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the bot process never answered")
		}
	}
}

// SIGTERM: requests already taken are answered, the bot QUITs with a
// message, and the process exits 0.
func TestSIGTERMFinishesAndQuits(t *testing.T) {
	bottest.EachNetwork(t, testSIGTERMFinishesAndQuits)
}

func testSIGTERMFinishesAndQuits(t *testing.T, kind ircnet.Kind) {
	e := newBotEnv(t, kind)
	p := e.start(t)
	agents := e.agents(t, "term", 2)
	a, marker := agents[0], agents[1]
	waitServing(t, a)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Join(ctx, e.lobby); err != nil {
		t.Fatal(err)
	}
	// 20 requests in one write; once the server has read them (Sync), it
	// has passed them on to the bot. A request from another agent after
	// that reaches the bot behind them, so once it is answered, the bot
	// has read all 20: it has taken them.
	var burst []string
	for i := range 20 {
		burst = append(burst, fmt.Sprintf(`PRIVMSG %s :PIRCAN/1 ECHO {"id":"t%d"}`, e.nick, i))
	}
	if err := a.Raw(strings.Join(burst, "\r\n")); err != nil {
		t.Fatal(err)
	}
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	marker.Send(`PIRCAN/1 ECHO {"id":"after"}`)
	if r := marker.Next(); r.Str("re") != "after" {
		t.Fatalf("the marker's reply: %s", r.Raw)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if r := a.Next(); r.Str("re") != fmt.Sprint("t", i) {
			t.Fatalf("reply %d after SIGTERM: %s", i, r.Raw)
		}
	}
	select {
	case err := <-p.exited:
		p.exited <- err
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the process did not exit within 20 s of SIGTERM")
	}
	// The agent shares the lobby with the bot: it sees the QUIT message.
	qctx, qcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer qcancel()
	if m, err := a.Expect(qctx, func(m ircmsg.Message) bool {
		return m.Command == "QUIT" && strings.EqualFold(m.Nick(), e.nick) && len(m.Params) > 0
	}); err != nil {
		t.Fatalf("no QUIT from the bot: %v", err)
	} else if !strings.Contains(m.Params[0], "PIRCAN stopping") || strings.Contains(m.Params[0], "restarting") {
		t.Fatalf("QUIT message %q: a plain shutdown says so, and no restart", m.Params[0])
	}
}

// SIGKILL in the middle of a stream of SENDs, then a restart: every SEND
// that got a reply is in the recipient's INBOX exactly once.
func TestSIGKILLLosesNothingAcknowledged(t *testing.T) {
	bottest.EachNetwork(t, testSIGKILLLosesNothingAcknowledged)
}

func testSIGKILLLosesNothingAcknowledged(t *testing.T, kind ircnet.Kind) {
	e := newBotEnv(t, kind)
	p := e.start(t)
	agents := e.agents(t, "kill", 2)
	a, b := agents[0], agents[1]
	waitServing(t, a)
	b.Hello("")
	bID := b.Ask(`PIRCAN/1 WHOAMI`).Str("agent_id")
	a.Hello("")
	b.Ask(`PIRCAN/1 POLICY {"policy":"auto-accept"}`)
	if r := a.Ask(`PIRCAN/1 CONTACT {"to":"` + bID + `","purpose":"load"}`); r.Str("status") != "accepted" {
		t.Fatalf("agreement: %s", r.Raw)
	}

	acked := map[string]bool{}
	stop := make(chan struct{})
	done := make(chan struct{})
	flowing := make(chan struct{}) // closed at the 10th acknowledgement: kill mid-stream
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			a.Send(fmt.Sprintf(`PIRCAN/1 SEND {"to":"%s","text":"m%d","id":"s%d"}`, bID, i, i))
			line, ok := a.TryNextLine(3 * time.Second)
			if !ok {
				return // the bot is gone: this SEND was not acknowledged
			}
			if strings.HasPrefix(line, "PIRCAN/1 SEND ") {
				r, err := bottest.ParseReply(line)
				if err == nil {
					acked[r.Str("message_id")] = true
					if len(acked) == 10 {
						close(flowing)
					}
				}
			}
		}
	}()
	select {
	case <-flowing:
	case <-done:
		t.Fatalf("the SENDs stopped after %d acknowledgements, before the kill", len(acked))
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	<-done

	e.start(t)
	waitServing(t, b)
	got := map[string]int{}
	for {
		items, _ := b.AskList(`PIRCAN/1 INBOX {"limit":10}`)
		items = bottest.JoinMessages(items)
		if len(items) == 0 {
			break
		}
		for _, it := range items {
			got[it.Str("message_id")]++
		}
	}
	for id := range acked {
		if got[id] != 1 {
			t.Errorf("acknowledged message %s read %d times", id, got[id])
		}
	}
	t.Logf("%d SENDs acknowledged before SIGKILL, %d messages in the INBOX", len(acked), len(got))
}

// silentIRC accepts connections and records what the client sends, but
// never answers: a server holding registration.
func silentIRC(t *testing.T) (addr string, lines <-chan string, conns *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	out := make(chan string, 1000)
	conns = &atomic.Int32{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			t.Cleanup(func() { c.Close() })
			go func() {
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					out <- sc.Text()
				}
			}()
		}
	}()
	return l.Addr().String(), out, conns
}

func serveProcess(t *testing.T, env ...string) *process {
	t.Helper()
	cmd := exec.Command(binary(t), "serve")
	cmd.Env = append(os.Environ(), env...)
	p := &process{cmd: cmd, logs: &lockedBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = p.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		err := <-p.exited
		p.exited <- err
		if t.Failed() {
			t.Logf("bot logs:\n%s", p.logs.String())
		}
	})
	return p
}

func (p *process) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.exited:
		p.exited <- err
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the process did not exit")
		return nil
	}
}

// Without both SASL settings `pircan serve` does not start: it exits
// non-zero naming the missing setting, and never connects.
func TestServeRefusesWithoutSASL(t *testing.T) {
	addr, _, conns := silentIRC(t)
	for _, tc := range []struct{ account, password, missing string }{
		{"", "", "PIRCAN_SASL_ACCOUNT"},
		{"pircanbot", "", "PIRCAN_SASL_PASSWORD"},
		{"", "pw", "PIRCAN_SASL_ACCOUNT"},
	} {
		p := serveProcess(t, "PIRCAN_IRC_SERVER="+addr, "PIRCAN_IRC_TLS=false", "PIRCAN_HTTP_ADDR=127.0.0.1:0",
			"PIRCAN_DATABASE_URL=postgres://postgres@127.0.0.1:1/none?sslmode=disable",
			"PIRCAN_SASL_ACCOUNT="+tc.account, "PIRCAN_SASL_PASSWORD="+tc.password)
		err := p.wait(t)
		if err == nil {
			t.Fatalf("%+v: exit 0", tc)
		}
		if logs := p.logs.String(); !strings.Contains(logs, tc.missing) {
			t.Fatalf("%+v: stderr does not name %s: %s", tc, tc.missing, logs)
		}
	}
	if n := conns.Load(); n != 0 {
		t.Fatalf("%d connections to the IRC server", n)
	}
}

// SIGTERM while the server holds registration: PIRCAN QUITs saying it
// shuts down and exits 0, without waiting out the registration bound.
func TestSIGTERMWhileRegistering(t *testing.T) {
	addr, lines, _ := silentIRC(t)
	p := serveProcess(t, "PIRCAN_IRC_SERVER="+addr, "PIRCAN_IRC_TLS=false", "PIRCAN_HTTP_ADDR=127.0.0.1:0",
		"PIRCAN_DATABASE_URL="+pgtest.Database(t), "PIRCAN_SASL_ACCOUNT=pircanbot", "PIRCAN_SASL_PASSWORD=pw")
	next := func() string {
		select {
		case l := <-lines:
			return l
		case <-time.After(20 * time.Second):
			t.Fatal("no line from the bot")
			return ""
		}
	}
	if l := next(); l != "CAP LS 302" {
		t.Fatalf("first line %q", l)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	l := next()
	for ; !strings.HasPrefix(l, "QUIT"); l = next() {
		if l == "CAP END" {
			t.Fatal("registration went on")
		}
	}
	if l != "QUIT :PIRCAN stopping" {
		t.Fatalf("got %q", l)
	}
	if err := p.wait(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}

// SIGKILL while an INBOX is being paced out: the messages whose lines were
// not written stay unread, and the next INBOX (after a restart) has them.
func TestSIGKILLMidInboxLosesNoMessage(t *testing.T) {
	bottest.EachNetwork(t, testSIGKILLMidInboxLosesNoMessage)
}

func testSIGKILLMidInboxLosesNoMessage(t *testing.T, kind ircnet.Kind) {
	e := newBotEnv(t, kind)
	// The spec's pacing, so that the INBOX is still going out at the kill.
	p := e.startWith(t, "PIRCAN_REPLY_BURST=5", "PIRCAN_REPLY_RATE=2")
	agents := e.agents(t, "kinbox", 2)
	a, b := agents[0], agents[1]
	waitServing(t, a)
	bID := b.Hello("")
	a.Hello("")
	b.Ask(`PIRCAN/1 POLICY {"policy":"auto-accept"}`)
	if r := a.Ask(`PIRCAN/1 CONTACT {"to":"` + bID + `","purpose":"load"}`); r.Str("status") != "accepted" {
		t.Fatalf("agreement: %s", r.Raw)
	}
	var sent []string
	for i := range 10 {
		r := a.Ask(fmt.Sprintf(`PIRCAN/1 SEND {"to":"%s","text":"m%d"}`, bID, i))
		if r.Verb != "SEND" {
			t.Fatalf("SEND: %s", r.Raw)
		}
		sent = append(sent, r.Str("message_id"))
	}

	b.Send(`PIRCAN/1 INBOX {"limit":10}`)
	received := map[string]bool{}
	for range 5 { // the burst; the rest waits for b's bucket (2 lines/s)
		r := b.Next()
		if r.Verb != "MESSAGE" {
			t.Fatalf("INBOX line: %s", r.Raw)
		}
		received[r.Str("message_id")] = true
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	p.exited <- nil               // for the cleanup
	for _, m := range b.Drain() { // lines that were on their way at the kill
		if r, err := bottest.ParseReply(m.Params[len(m.Params)-1]); err == nil && r.Verb == "MESSAGE" {
			received[r.Str("message_id")] = true
		}
	}

	e.start(t)
	waitServing(t, b)
	again := map[string]bool{}
	items, _ := b.AskList(`PIRCAN/1 INBOX {"limit":10}`)
	for _, it := range bottest.JoinMessages(items) {
		again[it.Str("message_id")] = true
	}
	for _, id := range sent {
		if !received[id] && !again[id] {
			t.Errorf("message %s was neither delivered before the kill nor returned after it", id)
		}
	}
	t.Logf("%d messages delivered before SIGKILL, %d returned after the restart", len(received), len(again))
}
