// Package bottest runs a real PIRCAN bot for tests and benchmarks: on a
// real loopback IRC network (InspIRCd + Anope NickServ, or Ergo; each
// started once per test binary) and a fresh PostgreSQL database per bot.
package bottest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ergochat/irc-go/ircmsg"
	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/ircnet"
	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	pircanbot "github.com/creatimus/pircan/pircan/bot"
	"github.com/creatimus/pircan/pircan/irc"
	"github.com/creatimus/pircan/pircan/irc/transport"
)

// sharedNet is the test binary's network of one kind, started on first use.
type sharedNet struct {
	once sync.Once
	net  *ircnet.Network
	dir  string
	err  error
}

var shared = map[ircnet.Kind]*sharedNet{ircnet.InspIRCd: {}, ircnet.Ergo: {}}

// Network returns the test binary's InspIRCd network, starting it on first use.
func Network(t testing.TB) *ircnet.Network { return NetworkOf(t, ircnet.InspIRCd) }

// NetworkOf returns the test binary's network of kind, starting it on first
// use (an Ergo network skips the test when there is no Ergo binary).
func NetworkOf(t testing.TB, kind ircnet.Kind) *ircnet.Network {
	t.Helper()
	if kind == "" {
		kind = ircnet.InspIRCd
	}
	RequireKind(t, kind)
	s := shared[kind]
	s.once.Do(func() {
		s.dir, s.err = os.MkdirTemp("", "pircan-"+string(kind)+"-")
		if s.err == nil {
			s.net, s.err = ircnet.StartWith(s.dir, ircnet.Options{Kind: kind, WatchPID: os.Getpid()})
		}
	})
	if s.err != nil {
		t.Fatalf("IRC network (%s): %v", kind, s.err)
	}
	return s.net
}

// RequireKind skips the test, saying why, when kind's server cannot run
// here (Ergo without its binary).
func RequireKind(t testing.TB, kind ircnet.Kind) {
	t.Helper()
	if kind != ircnet.Ergo {
		return
	}
	if _, err := ircnet.ErgoBinary(); err != nil {
		t.Skipf("Ergo network skipped: %v (put the ergo binary at ../shared/ergonet/ergo beside the repository, or set PIRCAN_TEST_ERGO)", err)
	}
}

// Kinds is every server software the integration tests run on.
var Kinds = []ircnet.Kind{ircnet.InspIRCd, ircnet.Ergo}

// EachNetwork runs f as one subtest per IRC server (named after its kind):
// InspIRCd + Anope, and Ergo, which is skipped, saying why, when its binary
// is missing. f starts its bots with Options{Kind: kind} (or
// PrivateNetworkOf(t, kind)), so the same assertions hold on both.
func EachNetwork(t *testing.T, f func(t *testing.T, kind ircnet.Kind)) {
	t.Helper()
	for _, k := range Kinds {
		t.Run(string(k), func(t *testing.T) {
			RequireKind(t, k)
			f(t, k)
		})
	}
}

// Main is TestMain for packages that use the networks: it stops them at the end.
func Main(m *testing.M) {
	code := m.Run()
	for _, s := range shared {
		if s.net != nil {
			_ = s.net.Stop()
			_ = os.RemoveAll(s.dir)
		}
	}
	os.Exit(code)
}

var seq atomic.Int64

// Unique returns base with a number no other call in this process returns.
func Unique(base string) string { return fmt.Sprintf("%s%d", base, seq.Add(1)) }

// Bot is a running PIRCAN under test.
type Bot struct {
	*pircanbot.Bot
	Net      *ircnet.Network
	Nick     string
	Lobby    string
	DSN      string
	password string
	stop     context.CancelFunc
	done     chan error
	// HTTPURL is the base URL of ServeHTTP ("" unless Options.HTTPAddr).
	HTTPURL  string
	httpDone chan error
	// MetricsURL is the base URL of ServeMetrics ("" unless Options.MetricsAddr).
	MetricsURL  string
	metricsDone chan error
}

// FastPacing lifts per-recipient pacing for tests of long exchanges
// (pacing fairness has its own test with the spec's figures).
var FastPacing = transport.PacerConfig{Burst: 1000, PerSecond: 1000, GlobalBurst: 1000, GlobalRate: 1000, MaxQueued: 1000}

// Options adjust a test bot.
type Options struct {
	Limits pircan.Limits // zero: the spec's defaults
	Pacing transport.PacerConfig
	DSN    string // empty: a fresh database
	// PoolConns is the bot's pool size (zero: TestPoolConns). The suite
	// runs dozens of bots at once against one server's max_connections;
	// a benchmark of throughput asks for store.DefaultPoolConns.
	PoolConns int
	Lobby     string          // empty: a lobby of its own, so bots under test never meet
	Net       *ircnet.Network // nil: the shared network of Kind
	Kind      ircnet.Kind     // zero: InspIRCd
	// Log, when set, also receives every log line of the bot, at debug level.
	Log io.Writer
	// HTTPAddr, when set (127.0.0.1:0 for a free port), serves the bot's
	// health, readiness and metrics there; Bot.HTTPURL is its base URL.
	HTTPAddr string
	// MetricsAddr, when set, serves /metrics there alone (Config.MetricsAddr);
	// Bot.MetricsURL is its base URL.
	MetricsAddr string
	// BeforeStart, when set, runs once the bot's account exists and before
	// the bot connects (a test in which another client holds its nick).
	BeforeStart func(nick string)
	// Transport, when set, adjusts the bot's IRC settings before it starts.
	Transport func(*transport.Config)
	// WebhookAllowHosts are the hosts webhooks may reach though internal
	// (tests: 127.0.0.1, where their receivers listen).
	WebhookAllowHosts []string
	// NoIRC: an HTTP-only replica (StartReplica sets it).
	NoIRC bool
}

// PrivateNetwork starts an InspIRCd network for one test (one that
// restarts or kills the IRC server); it is stopped when the test ends.
func PrivateNetwork(t testing.TB) *ircnet.Network { return PrivateNetworkOf(t, ircnet.InspIRCd) }

// PrivateNetworkOf is PrivateNetwork for a network of kind.
func PrivateNetworkOf(t testing.TB, kind ircnet.Kind) *ircnet.Network {
	t.Helper()
	if kind == "" {
		kind = ircnet.InspIRCd
	}
	RequireKind(t, kind)
	n, err := ircnet.StartWith(t.TempDir(), ircnet.Options{Kind: kind, WatchPID: os.Getpid()})
	if err != nil {
		t.Fatalf("IRC network (%s): %v", kind, err)
	}
	t.Cleanup(func() { _ = n.Stop() })
	return n
}

// Start runs a bot with its own nick, account, database and lobby; it is
// stopped when the test ends.
func Start(t testing.TB, o Options) *Bot {
	t.Helper()
	n := o.Net
	if n == nil {
		n = NetworkOf(t, o.Kind)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nick := Unique("PIRCAN")
	password := randomHex()
	if err := ircnet.RegisterAccount(ctx, n, nick, password); err != nil {
		t.Fatalf("bot account: %v", err)
	}
	if o.BeforeStart != nil {
		o.BeforeStart(nick)
	}
	return StartAccount(t, o, nick, password)
}

// StartAccount is Start for a services account made beforehand (as an
// operator would): the bot's nick is the account name, which is what Ergo's
// force-nick-equals-account asks for.
func StartAccount(t testing.TB, o Options, account, password string) *Bot {
	t.Helper()
	n := o.Net
	if n == nil {
		n = NetworkOf(t, o.Kind)
	}
	b := launch(t, n, account, password, o)
	b.WaitServing(t)
	return b
}

// StartStandby runs a second process of the same bot (same nick, account,
// database and lobby) beside primary: it stands by until primary dies.
func StartStandby(t testing.TB, primary *Bot, o Options) *Bot {
	t.Helper()
	o.DSN, o.Lobby, o.Net = primary.DSN, primary.Lobby, primary.Net
	return launch(t, primary.Net, primary.Nick, primary.password, o)
}

// StartReplica runs an HTTP-only process (--no-irc) on primary's database:
// its faces serve at HTTPURL (o.HTTPAddr, default 127.0.0.1:0); what it
// causes reaches IRC through primary.
func StartReplica(t testing.TB, primary *Bot, o Options) *Bot {
	t.Helper()
	o.DSN, o.Lobby, o.Net, o.NoIRC = primary.DSN, primary.Lobby, primary.Net, true
	if o.HTTPAddr == "" {
		o.HTTPAddr = "127.0.0.1:0"
	}
	return launch(t, primary.Net, Unique("replica"), "", o)
}

// TestPoolConns is a test bot's pool size: pgxpool's own default on two
// cores, which the suite ran with before pools defaulted to
// store.DefaultPoolConns (its peak was then ~90 connections).
const TestPoolConns = 4

// withPoolConns is dsn with its pool size set (Bot.DSN stays the plain URL,
// which pgx.Connect and pgbench take).
func withPoolConns(t testing.TB, dsn string, n int) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("database URL: %v", err)
	}
	q := u.Query()
	q.Set("pool_max_conns", strconv.Itoa(n))
	u.RawQuery = q.Encode()
	return u.String()
}

// launch builds and runs a bot; it is stopped when the test ends.
func launch(t testing.TB, n *ircnet.Network, nick, password string, o Options) *Bot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if o.DSN == "" {
		o.DSN = pgtest.Database(t)
	}
	if o.Lobby == "" {
		o.Lobby = Unique("#agents")
	}
	if o.Limits == (pircan.Limits{}) {
		o.Limits = pircan.DefaultLimits
	}
	if o.Pacing.Burst == 0 {
		o.Pacing = transport.DefaultPacing
	}
	if o.PoolConns == 0 {
		o.PoolConns = TestPoolConns
	}
	cfg := pircanbot.Config{
		DatabaseURL:       withPoolConns(t, o.DSN, o.PoolConns),
		MetricsAddr:       o.MetricsAddr,
		Limits:            o.Limits,
		NoIRC:             o.NoIRC,
		WebhookAllowHosts: o.WebhookAllowHosts,
		IRC: transport.Config{
			Server: n.TLSAddr(), TLS: true, CAFile: n.CertFile, Nick: nick,
			SASLAccount: nick, SASLPassword: password,
			OperName: n.BotOperName, OperPassword: n.BotOperPass,
			Lobby: o.Lobby, Pacing: o.Pacing,
			BackoffMin: 200 * time.Millisecond, BackoffMax: 2 * time.Second,
		},
	}
	if o.Transport != nil {
		o.Transport(&cfg.IRC)
	}
	level := zerolog.WarnLevel
	if testing.Verbose() {
		level = zerolog.DebugLevel
	}
	var w io.Writer = zerolog.LevelWriterAdapter{Writer: zerolog.NewTestWriter(t)}
	if o.Log != nil {
		w = zerolog.MultiLevelWriter(filterLevel{w, level}, o.Log)
		level = zerolog.DebugLevel
	}
	log := zerolog.New(w).Level(level).With().Timestamp().Logger()
	bot, err := pircanbot.New(ctx, cfg, log)
	if err != nil {
		t.Fatalf("bot: %v", err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	b := &Bot{Bot: bot, Net: n, Nick: nick, Lobby: o.Lobby, DSN: o.DSN, password: password, stop: stop, done: make(chan error, 1)}
	go func() { b.done <- bot.Run(runCtx) }()
	t.Cleanup(b.Stop)
	if o.HTTPAddr != "" {
		b.httpDone = make(chan error, 1)
		go func() { b.httpDone <- bot.ServeHTTP(runCtx, o.HTTPAddr) }()
		for bot.HTTPAddr() == "" {
			select {
			case err := <-b.httpDone:
				b.httpDone <- err // for Stop
				t.Fatalf("ServeHTTP: %v", err)
			case <-time.After(5 * time.Millisecond):
			}
		}
		b.HTTPURL = "http://" + bot.HTTPAddr()
	}
	if o.MetricsAddr != "" {
		b.metricsDone = make(chan error, 1)
		go func() { b.metricsDone <- bot.ServeMetrics(runCtx, o.MetricsAddr) }()
		for bot.MetricsAddr() == "" {
			select {
			case err := <-b.metricsDone:
				b.metricsDone <- err // for Stop
				t.Fatalf("ServeMetrics: %v", err)
			case <-time.After(5 * time.Millisecond):
			}
		}
		b.MetricsURL = "http://" + bot.MetricsAddr()
	}
	return b
}

// WaitServing waits until the bot is registered on IRC and in its lobby
// (the server echoed its JOIN), so that it sees who joins after.
func (b *Bot) WaitServing(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !b.Conn().Online() || !b.Conn().InChannel(b.Lobby) {
		if time.Now().After(deadline) {
			t.Fatalf("bot %s did not connect within 30 s", b.Nick)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop shuts the bot down and waits for it (idempotent).
func (b *Bot) Stop() {
	b.stop()
	select {
	case <-b.done:
		b.done <- nil
	case <-time.After(30 * time.Second):
	}
	for _, done := range []chan error{b.httpDone, b.metricsDone} {
		if done != nil {
			select {
			case err := <-done:
				done <- err
			case <-time.After(10 * time.Second):
			}
		}
	}
}

// filterLevel passes on lines at or above min only.
type filterLevel struct {
	w   io.Writer
	min zerolog.Level
}

func (f filterLevel) Write(p []byte) (int, error) { return f.w.Write(p) }

func (f filterLevel) WriteLevel(l zerolog.Level, p []byte) (int, error) {
	if l < f.min {
		return len(p), nil
	}
	return f.w.Write(p)
}

// SASLPassword is the bot's own services password (for log checks).
func (b *Bot) SASLPassword() string { return b.password }

func randomHex() string {
	var x [8]byte
	_, _ = rand.Read(x[:])
	return hex.EncodeToString(x[:])
}

// Agent is an IRC client talking to the bot under test.
type Agent struct {
	*ircnet.Client
	Account string // "" for an unidentified client
	bot     *Bot
	t       testing.TB
}

// Agents connects n NickServ-identified clients in parallel (InspIRCd
// registers clients on a one-second tick, so one by one would be slow).
func (b *Bot) Agents(t testing.TB, base string, n int) []*Agent {
	return b.dial(t, base, n, true)
}

// Guest connects one client without a NickServ account.
func (b *Bot) Guest(t testing.TB, base string) *Agent { return b.dial(t, base, 1, false)[0] }

func (b *Bot) dial(t testing.TB, base string, n int, identified bool) []*Agent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := make([]*Agent, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			nick := Unique(base)
			var c *ircnet.Client
			var err error
			account := ""
			if identified {
				c, err = b.Net.DialAgent(ctx, nick, "pw-"+nick)
				account = nick
			} else {
				c, err = b.Net.Dial(ctx, nick)
			}
			out[i], errs[i] = &Agent{Client: c, Account: account, bot: b, t: t}, err
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		t.Cleanup(func() { _ = out[i].Close() })
	}
	return out
}

// Adopt wraps a client the test connected itself (a second connection of
// an account, say) as an Agent of this bot.
func (b *Bot) Adopt(t testing.TB, c *ircnet.Client, account string) *Agent {
	return &Agent{Client: c, Account: account, bot: b, t: t}
}

// Reply is a parsed NOTICE from the bot.
type Reply struct {
	Raw    string
	Verb   string
	Fields map[string]any
}

// Str returns a string field ("" when absent or not a string).
func (r Reply) Str(key string) string { s, _ := r.Fields[key].(string); return s }

// Int returns a number field (-1 when absent).
func (r Reply) Int(key string) int {
	if f, ok := r.Fields[key].(float64); ok {
		return int(f)
	}
	return -1
}

// Code is the error code of an ERROR reply.
func (r Reply) Code() string { return r.Str("code") }

func (r Reply) String() string { return r.Raw }

// ParseReply reads a `PIRCAN/1 VERB {json}` line.
func ParseReply(text string) (Reply, error) {
	r := Reply{Raw: text}
	rest, ok := strings.CutPrefix(text, irc.Prefix+" ")
	if !ok {
		return r, fmt.Errorf("not a PIRCAN/1 reply: %q", text)
	}
	verb, js, _ := strings.Cut(rest, " ")
	r.Verb = verb
	if err := json.Unmarshal([]byte(js), &r.Fields); err != nil {
		return r, fmt.Errorf("reply JSON: %v in %q", err, text)
	}
	return r, nil
}

// FromBot returns a matcher for a NOTICE from the bot to this client's
// current nick. (It reads the nick now: a matcher runs under the client's
// lock and must not call back into it.)
func (a *Agent) FromBot() func(ircmsg.Message) bool {
	me, bot := pircan.RFC1459.Fold(a.Nick()), pircan.RFC1459.Fold(a.bot.Nick)
	return func(m ircmsg.Message) bool {
		return m.Command == "NOTICE" && pircan.RFC1459.Fold(m.Nick()) == bot &&
			len(m.Params) == 2 && pircan.RFC1459.Fold(m.Params[0]) == me
	}
}

// Next waits for the next reply from the bot. Unsolicited lines (lobby
// WELCOME, NOTIFY) are left waiting for NextUnsolicited.
func (a *Agent) Next() Reply {
	a.t.Helper()
	return a.next(func(verb string) bool { return verb != "WELCOME" && verb != "NOTIFY" })
}

// NextNotify waits for the next NOTIFY line.
func (a *Agent) NextNotify() Reply {
	a.t.Helper()
	return a.next(func(verb string) bool { return verb == "NOTIFY" })
}

func (a *Agent) next(want func(verb string) bool) Reply {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	fromBot := a.FromBot()
	m, err := a.Expect(ctx, func(m ircmsg.Message) bool {
		if !fromBot(m) {
			return false
		}
		verb, _, _ := strings.Cut(strings.TrimPrefix(m.Params[1], irc.Prefix+" "), " ")
		return want(verb)
	})
	if err != nil {
		a.t.Fatalf("%s: no reply from the bot: %v", a.Nick(), err)
	}
	r, err := ParseReply(m.Params[1])
	if err != nil {
		a.t.Fatal(err)
	}
	return r
}

// NoNotify asserts that no NOTIFY reaches this client within d.
func (a *Agent) NoNotify(d time.Duration) {
	a.t.Helper()
	fromBot := a.FromBot()
	if err := a.ExpectNone(d, func(m ircmsg.Message) bool {
		return fromBot(m) && strings.HasPrefix(m.Params[1], irc.Prefix+" NOTIFY ")
	}); err != nil {
		a.t.Fatalf("%s: expected no NOTIFY: %v", a.Nick(), err)
	}
}

// NextLine waits for the next NOTICE text from the bot, as sent.
func (a *Agent) NextLine() string {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	m, err := a.Expect(ctx, a.FromBot())
	if err != nil {
		a.t.Fatalf("%s: no reply from the bot: %v", a.Nick(), err)
	}
	return m.Params[1]
}

// BotNick is the nick of the bot this agent talks to.
func (a *Agent) BotNick() string { return a.bot.Nick }

// TryNextLine waits up to d for the next NOTICE text from the bot.
func (a *Agent) TryNextLine(d time.Duration) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	m, err := a.Expect(ctx, a.FromBot())
	if err != nil {
		return "", false
	}
	return m.Params[1], true
}

// Ask sends a request line and returns the one reply.
func (a *Agent) Ask(line string) Reply {
	a.t.Helper()
	a.Send(line)
	return a.Next()
}

// Send sends a request line to the bot.
func (a *Agent) Send(line string) {
	a.t.Helper()
	if err := a.Privmsg(a.bot.Nick, line); err != nil {
		a.t.Fatal(err)
	}
}

// AskList sends a list request and returns its items and its -END line
// (or the ERROR that came instead).
func (a *Agent) AskList(line string) (items []Reply, end Reply) {
	a.t.Helper()
	a.Send(line)
	for {
		r := a.Next()
		if r.Verb == "ERROR" || strings.HasSuffix(r.Verb, "-END") {
			return items, r
		}
		items = append(items, r)
	}
}

// JoinMessages folds MESSAGE-MORE lines into the MESSAGE they continue, so
// a test sees each message whole, as an agent would reassemble it.
func JoinMessages(items []Reply) []Reply {
	var out []Reply
	for _, it := range items {
		if it.Verb == "MESSAGE-MORE" && len(out) > 0 && out[len(out)-1].Str("message_id") == it.Str("message_id") {
			prev := &out[len(out)-1]
			prev.Fields["text"] = prev.Str("text") + it.Str("text")
			// A MESSAGE that continues says truncated too; whether the
			// whole message was cut is the last line's word.
			delete(prev.Fields, "continues")
			delete(prev.Fields, "truncated")
			if it.Fields["truncated"] == true {
				prev.Fields["truncated"] = true
			}
			continue
		}
		out = append(out, it)
	}
	return out
}

// Hello registers the agent with PIRCAN and returns its agent_id.
func (a *Agent) Hello(fields string) string {
	a.t.Helper()
	if fields == "" {
		fields = "{}"
	}
	r := a.Ask("PIRCAN/1 HELLO " + fields)
	if r.Verb != "HELLO" {
		a.t.Fatalf("HELLO: %s", r.Raw)
	}
	return r.Str("agent_id")
}

// Quiet asserts that the bot sends this client nothing for d.
func (a *Agent) Quiet(d time.Duration) {
	a.t.Helper()
	if err := a.ExpectNone(d, a.FromBot()); err != nil {
		a.t.Fatalf("%s: expected silence from the bot: %v", a.Nick(), err)
	}
}
