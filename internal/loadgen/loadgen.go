// Package loadgen is the load generator behind `pircan bench`: it connects
// many NickServ-identified agents to an IRC network where PIRCAN runs,
// registers them with PIRCAN, makes agreements between them, then sends a
// mix of requests at a fixed total rate (open loop: the schedule does not
// wait for replies) and measures every round trip, matched by the
// request's "id" and the reply's "re". Beside PIRCAN it measures two floors
// on the same network in the same run: an echo bot (internal/echobot: no
// work) and Anope NickServ's INFO.
//
// Agents take turns in a fixed order, so each sends exactly Rate/Agents
// requests per second, evenly spaced: PIRCAN's per-account limit (20 per
// minute by default) and its per-recipient output pacing (a burst of 5
// lines, then 2 per second) see a steady, realistic agent. The default rate
// is DefaultPerAgentPerMinute per agent, which leaves room in the first
// minute for the setup's own requests (HELLO, CONTACT, ACCEPT).
package loadgen

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/creatimus/pircan/pircan/irc/transport"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ergochat/irc-go/ircmsg"

	"github.com/creatimus/pircan/internal/echobot"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/irc"
)

// DefaultPerAgentPerMinute is the default request rate of one agent: under
// PIRCAN's default limit of 20 per account per minute, with room for the
// 3 setup requests (HELLO, CONTACT, ACCEPT) that fall in the same minute.
const DefaultPerAgentPerMinute = 15

// BenchCapability is the capability every bench agent declares (and FIND
// looks for).
const BenchCapability = "pircan-bench"

// Config describes a run.
type Config struct {
	Server  string // host:port of the IRC server (TLS)
	CAFile  string // PEM bundle to trust besides the system roots
	BotNick string // PIRCAN's nick

	Agents     int
	NickPrefix string // agents are <prefix>-1 … <prefix>-<Agents>; the nick is the NickServ account
	Password   string // every agent's NickServ password
	Email      string // appended to NickServ REGISTER if set
	Register   bool   // REGISTER the accounts first (existing ones are IDENTIFIed)

	Rate      float64       // requests/s to PIRCAN, all agents together (0: DefaultPerAgentPerMinute each)
	Duration  time.Duration // the measured phase
	Mix       Mix           // nil: DefaultMix
	FindLimit int           // FIND's limit (0: 5, PIRCAN's default)

	ConnectParallel int           // dials at once (0: 50)
	Timeout         time.Duration // a reply not here by then is lost (0: 15 s)
	Settle          time.Duration // pause between setup and the measured phase (0: 3 s; <0: none)
	FloorRate       float64       // probes/s of each floor (0: 5)

	Echo EchoConfig

	// Knee, if set, replaces the mix: the rates (requests/s) of the knee
	// (knee.go), each run for KneeStep against PIRCAN and then the echo bot.
	Knee     []float64
	KneeStep time.Duration // 0: 20 s

	// Progress receives a line per phase (nil: none).
	Progress io.Writer
	// Trace, if set, receives a CSV line per timed request as it ends:
	// start (Unix ms), row (verb or floor), agent nick, round trip in ms
	// (empty if lost), first line in ms (lists), outcome (ok, lost, or the
	// ERROR code), to line slow requests up with the bot's logs.
	Trace io.Writer
}

// EchoConfig says where the echo floor is. Without Nick there is no echo
// floor. With SASLAccount, Run starts the echo bot itself (internal/echobot)
// with that account (registered first when Config.Register is set), else
// it must be running already.
type EchoConfig struct {
	Nick                      string
	SASLAccount, SASLPassword string
	OperName, OperPassword    string // optional OPER for a fake-lag exemption
}

// Run runs the load and reports what it measured. It returns an error
// when it could not run (connect, identify or setup failed: no Result) or
// was interrupted (ctx: the Result so far); lost replies, disconnects and
// ERRORs are in the Result (see Failures).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	tlsConf, err := transport.TLSConfig(cfg.Server, cfg.CAFile, false)
	if err != nil {
		return nil, err
	}
	var id [4]byte
	_, _ = rand.Read(id[:])
	r := &run{cfg: cfg, tls: tlsConf, runID: hex.EncodeToString(id[:]),
		botFold: pircan.RFC1459.Fold(cfg.BotNick), pending: map[string]*request{}, lostIDs: map[string]bool{},
		stats: map[string]*collector{}}
	if cfg.Echo.Nick != "" {
		r.echoFold = pircan.RFC1459.Fold(cfg.Echo.Nick)
	}
	for _, v := range append(append([]string{}, Verbs...), "accept", floorEcho, floorInfo) {
		r.stats[v] = newCollector()
	}
	for i := range cfg.Knee { // filled before any reply can read the map
		r.stats[kneeStat(i, false)], r.stats[kneeStat(i, true)] = newCollector(), newCollector()
	}
	defer r.closeAll()

	reapCtx, stopReaper := context.WithCancel(context.Background())
	reaped := make(chan struct{})
	go func() { defer close(reaped); r.reaper(reapCtx) }()
	defer func() { stopReaper(); <-reaped }() // with closeAll: nothing writes to Trace once Run returns

	res := &Result{Server: cfg.Server, BotNick: cfg.BotNick, Agents: cfg.Agents, TargetRate: cfg.Rate,
		DurationSeconds: cfg.Duration.Seconds(), Mix: cfg.Mix.String(), FindLimit: cfg.FindLimit}

	t0 := time.Now()
	if err := r.connect(ctx); err != nil {
		return nil, err
	}
	res.ConnectSeconds = time.Since(t0).Seconds()
	r.progress("connected and identified %d agents in %.1fs", cfg.Agents, res.ConnectSeconds)

	t1 := time.Now()
	if err := r.setup(ctx); err != nil {
		return nil, err
	}
	res.SetupSeconds = time.Since(t1).Seconds()
	r.progress("setup (HELLO, %d agreements) in %.1fs", r.agreements, res.SetupSeconds)
	if cfg.Settle > 0 {
		select { // let PIRCAN's per-recipient pacing refill after the setup's replies and NOTIFYs
		case <-time.After(cfg.Settle):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}

	if len(cfg.Knee) > 0 {
		r.knee(ctx, res)
		r.report(res)
		return res, ctx.Err()
	}
	r.progress("measuring: %.1f req/s for %s", cfg.Rate, cfg.Duration)
	r.measure(ctx)
	r.drain(ctx)
	r.report(res)
	return res, ctx.Err() // interrupted: what was measured so far, and why it stopped
}

func (c *Config) fill() error {
	switch {
	case c.Server == "":
		return errors.New("no IRC server")
	case c.BotNick == "":
		return errors.New("no bot nick")
	case c.Agents < 2:
		return errors.New("at least 2 agents (agreements need pairs)")
	case c.Password == "":
		return errors.New("no NickServ password for the agents")
	case c.NickPrefix == "":
		return errors.New("no nick prefix")
	case c.Duration <= 0:
		return errors.New("no duration")
	case c.Rate < 0:
		return errors.New("negative rate")
	}
	if c.Rate == 0 {
		c.Rate = float64(c.Agents) * DefaultPerAgentPerMinute / 60
	}
	if len(c.Knee) > 0 {
		if c.Echo.Nick == "" {
			return errors.New("the knee needs the echo bot (its nick)")
		}
		for i, rate := range c.Knee {
			if rate <= 0 || (i > 0 && rate <= c.Knee[i-1]) {
				return errors.New("knee rates must be positive and rising")
			}
		}
		if c.KneeStep <= 0 {
			c.KneeStep = 20 * time.Second
		}
	}
	if c.Mix == nil {
		c.Mix, _ = ParseMix(DefaultMix)
	}
	if c.FindLimit == 0 {
		c.FindLimit = 5
	}
	if c.FindLimit < 1 || c.FindLimit > 10 {
		return errors.New("FIND limit is 1 to 10")
	}
	if c.ConnectParallel <= 0 {
		c.ConnectParallel = 50
	}
	if c.Timeout <= 0 {
		c.Timeout = 15 * time.Second
	}
	if c.Settle == 0 {
		c.Settle = 3 * time.Second
	}
	if c.FloorRate <= 0 {
		c.FloorRate = 5
	}
	return nil
}

const (
	floorEcho = "floor:echo"
	floorInfo = "floor:nickserv-info"
)

// agent is one connected, identified bench agent.
type agent struct {
	idx  int
	nick string
	c    *client
	id   string // PIRCAN agent_id

	mu       sync.Mutex
	partners []int    // agents it has a message agreement with
	sends    int      // SENDs so far (which partner is next)
	contacts int      // measured CONTACTs so far (which target is next)
	accepts  []string // incoming request_ids to ACCEPT in its next turn
	pick     *picker  // its own way through the mix (used by the scheduler only)
	infoID   string   // the NickServ INFO probe waiting for its first line
	infoAt   time.Time
}

// request is a line sent to PIRCAN (or a floor) waiting for its reply.
type request struct {
	id       string
	stat     string // collector key; "" for setup requests (not measured)
	a        *agent
	start    time.Time
	list     bool      // complete at the -END line
	first    time.Time // a list's first line
	inWindow bool
	items    []fields
	done     chan outcome // setup requests: the outcome, once
	after    func(fields) // measured requests: on a reply that is not an ERROR
}

type outcome struct {
	last  fields // the reply (a list's -END), or the ERROR
	verb  string
	items []fields
	lost  bool
}

// fields are the reply fields the load generator reads.
type fields struct {
	Re        string `json:"re"`
	ID        string `json:"id"` // an echoed request
	Code      string `json:"code"`
	AgentID   string `json:"agent_id"`
	RequestID string `json:"request_id"`
	Status    string `json:"status"`
	From      struct {
		AgentID string `json:"agent_id"`
	} `json:"from"`
}

type run struct {
	cfg      Config
	tls      *tls.Config
	runID    string
	botFold  string
	echoFold string
	agents   []*agent
	echo     *echobot.Bot
	stats    map[string]*collector // fixed keys: safe to read without a lock

	seq        atomic.Uint64
	notifies   atomic.Int64
	uncorr     atomic.Int64
	late       atomic.Int64
	skipped    atomic.Int64
	agreements int

	mu      sync.Mutex
	pending map[string]*request
	lostIDs map[string]bool

	traceMu sync.Mutex
}

func (r *run) progress(format string, args ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, "pircan bench: "+format+"\n", args...)
	}
}

// connect dials every agent (bounded), identifies it with NickServ and
// starts its reader; and starts the echo bot if it is ours to start.
func (r *run) connect(ctx context.Context) error {
	cfg := r.cfg
	r.agents = make([]*agent, cfg.Agents)
	errs := make([]error, cfg.Agents)
	sem := make(chan struct{}, cfg.ConnectParallel)
	var wg sync.WaitGroup
	echoErr := make(chan error, 1)
	go func() { echoErr <- r.startEcho(ctx) }()
	for i := range r.agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-sem }()
			nick := fmt.Sprintf("%s-%d", cfg.NickPrefix, i+1)
			dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			c, err := dial(dctx, cfg.Server, r.tls, nick)
			if err == nil {
				if err = c.nickServ(dctx, cfg.Register, nick, cfg.Password, cfg.Email); err != nil {
					c.close(false)
					err = fmt.Errorf("%s: %w", nick, err)
				}
			}
			if err != nil {
				errs[i] = err
				return
			}
			a := &agent{idx: i, nick: nick, c: c}
			c.start(func(m ircmsg.Message, at time.Time) { r.handle(a, m, at) })
			r.agents[i] = a
		}()
	}
	wg.Wait()
	err := <-echoErr
	for _, e := range errs {
		if e != nil {
			n := 0
			for _, e := range errs {
				if e != nil {
					n++
				}
			}
			return fmt.Errorf("%d of %d agents could not connect and identify; the first: %w", n, cfg.Agents, e)
		}
	}
	return err
}

func (r *run) startEcho(ctx context.Context) error {
	e := r.cfg.Echo
	if e.Nick == "" || e.SASLAccount == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if r.cfg.Register { // the account must exist before SASL: a throw-away connection registers it
		c, err := dial(ctx, r.cfg.Server, r.tls, e.SASLAccount)
		if err != nil {
			return fmt.Errorf("echo bot account: %w", err)
		}
		err = c.nickServ(ctx, true, e.SASLAccount, e.SASLPassword, r.cfg.Email)
		c.close(false)
		if err != nil {
			return fmt.Errorf("echo bot account: %w", err)
		}
	}
	b, err := echobot.Start(ctx, r.cfg.Server, r.cfg.CAFile, e.Nick, e.SASLAccount, e.SASLPassword, e.OperName, e.OperPassword)
	if err != nil {
		return err
	}
	r.echo = b // (echoFold is set from Echo.Nick before any reader runs)
	return nil
}

func (r *run) closeAll() {
	var wg sync.WaitGroup
	for _, a := range r.agents {
		if a != nil {
			wg.Add(1)
			go func() { defer wg.Done(); a.c.close(true) }()
		}
	}
	wg.Wait()
	if r.echo != nil {
		r.echo.Close()
	}
}

// handle sees every line an agent receives (on its reader goroutine).
func (r *run) handle(a *agent, m ircmsg.Message, at time.Time) {
	if m.Command != "NOTICE" || len(m.Params) < 2 {
		return
	}
	from := pircan.RFC1459.Fold(m.Nick())
	text := m.Params[len(m.Params)-1]
	switch {
	case from == r.botFold:
		r.botLine(text, at)
	case r.echoFold != "" && from == r.echoFold:
		r.echoLine(text, at)
	case from == "nickserv":
		r.infoLine(a, text, at)
	}
}

// parseLine splits `PIRCAN/1 VERB {json}`.
func parseLine(text string) (verb string, f fields, ok bool) {
	rest, ok := strings.CutPrefix(text, irc.Prefix+" ")
	if !ok {
		return "", f, false
	}
	verb, js, _ := strings.Cut(rest, " ")
	if js != "" && json.Unmarshal([]byte(js), &f) != nil {
		return verb, f, false
	}
	return verb, f, true
}

func (r *run) botLine(text string, at time.Time) {
	verb, f, ok := parseLine(text)
	if ok && (verb == "NOTIFY" || verb == "WELCOME") {
		r.notifies.Add(1)
		return
	}
	if !ok || f.Re == "" {
		r.uncorr.Add(1)
		return
	}
	r.mu.Lock()
	req := r.pending[f.Re]
	if req == nil {
		late := r.lostIDs[f.Re]
		r.mu.Unlock()
		if late {
			r.late.Add(1)
		} else {
			r.uncorr.Add(1)
		}
		return
	}
	if req.list && req.first.IsZero() {
		req.first = at
	}
	if req.list && verb != "ERROR" && !strings.HasSuffix(verb, "-END") {
		req.items = append(req.items, f)
		r.mu.Unlock()
		return
	}
	delete(r.pending, f.Re)
	r.mu.Unlock()
	r.complete(req, outcome{last: f, verb: verb, items: req.items}, at)
}

func (r *run) echoLine(text string, at time.Time) {
	_, f, ok := parseLine(text)
	if !ok || f.ID == "" {
		r.uncorr.Add(1)
		return
	}
	r.mu.Lock()
	req := r.pending[f.ID]
	delete(r.pending, f.ID)
	late := req == nil && r.lostIDs[f.ID]
	r.mu.Unlock()
	switch {
	case req != nil:
		r.complete(req, outcome{last: f, verb: "ECHO"}, at)
	case late:
		r.late.Add(1)
	}
}

// infoLine takes the first NickServ line after an INFO probe: Anope
// answers `INFO <account>` with "<account> is <realname>" and further lines.
func (r *run) infoLine(a *agent, text string, at time.Time) {
	text = strings.ToLower(stripFormatting(text))
	a.mu.Lock()
	id := a.infoID
	if id == "" || !(strings.HasPrefix(text, strings.ToLower(a.nick)+" ") || strings.Contains(text, "isn't registered")) {
		a.mu.Unlock()
		return
	}
	a.infoID = ""
	a.mu.Unlock()
	r.mu.Lock()
	req := r.pending[id]
	delete(r.pending, id)
	r.mu.Unlock()
	if req != nil {
		code := ""
		if strings.Contains(text, "isn't registered") {
			code = "not_registered"
		}
		r.complete(req, outcome{last: fields{Code: code}, verb: "INFO"}, at)
	}
}

func (r *run) complete(req *request, o outcome, at time.Time) {
	code := ""
	if o.verb == "ERROR" {
		code = o.last.Code
		if code == "" {
			code = "error"
		}
	} else if o.last.Code != "" && req.stat == floorInfo {
		code = o.last.Code
	}
	if req.stat != "" {
		var first time.Duration
		if req.list {
			first = req.first.Sub(req.start)
		}
		r.stats[req.stat].addReply(at.Sub(req.start), first, code, req.inWindow)
		r.trace(req, at.Sub(req.start), first, code)
	}
	if req.done != nil {
		req.done <- o
	}
	if req.after != nil && code == "" {
		req.after(o.last)
	}
}

// trace writes req's CSV line (d < 0: lost).
func (r *run) trace(req *request, d, first time.Duration, code string) {
	if r.cfg.Trace == nil {
		return
	}
	ms := func(d time.Duration) string {
		if d <= 0 {
			return ""
		}
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
	}
	if code == "" {
		code = "ok"
	}
	line := fmt.Sprintf("%d,%s,%s,%s,%s,%s\n", req.start.UnixMilli(), req.stat, req.a.nick, ms(d), ms(first), code)
	r.traceMu.Lock()
	defer r.traceMu.Unlock()
	_, _ = io.WriteString(r.cfg.Trace, line)
}

// reaper counts requests without a reply within the timeout as lost.
func (r *run) reaper(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			var lost []*request
			r.mu.Lock()
			for id, req := range r.pending {
				if now.Sub(req.start) > r.cfg.Timeout {
					delete(r.pending, id)
					r.lostIDs[id] = true
					lost = append(lost, req)
				}
			}
			r.mu.Unlock()
			for _, req := range lost {
				if req.stat != "" {
					r.stats[req.stat].addLost()
					r.trace(req, -1, 0, "lost")
				}
				if req.stat == floorInfo {
					req.a.mu.Lock()
					if req.a.infoID == req.id {
						req.a.infoID = ""
					}
					req.a.mu.Unlock()
				}
				if req.done != nil {
					req.done <- outcome{lost: true}
				}
			}
		}
	}
}

// send writes one request to target (PIRCAN, or a floor) and registers it
// for its reply.
func (r *run) send(req *request, target, text string) error {
	r.register(req)
	return r.write(req, target, text)
}

// register starts the request's clock and makes it wait for its reply.
func (r *run) register(req *request) {
	r.mu.Lock()
	req.start = time.Now()
	r.pending[req.id] = req
	r.mu.Unlock()
	if req.stat != "" {
		r.stats[req.stat].addSent()
	}
}

// write sends a registered request, restarting its clock (a goroutine
// may have waited to run); one that could not be sent is lost.
func (r *run) write(req *request, target, text string) error {
	r.mu.Lock()
	req.start = time.Now()
	r.mu.Unlock()
	if err := req.a.c.privmsg(target, text); err != nil {
		r.mu.Lock()
		_, still := r.pending[req.id]
		delete(r.pending, req.id)
		r.mu.Unlock()
		if still && req.stat != "" {
			r.stats[req.stat].addLost()
		}
		return err
	}
	return nil
}

func (r *run) newID(prefix string) string { return prefix + strconv.FormatUint(r.seq.Add(1), 36) }

// requestLine is `PIRCAN/1 VERB {body + "id"}`.
func requestLine(verb, body, id string) string {
	idField := `"id":"` + id + `"`
	switch {
	case body == "" || body == "{}":
		body = "{" + idField + "}"
	default:
		body = strings.TrimSuffix(body, "}") + "," + idField + "}"
	}
	return irc.Prefix + " " + verb + " " + body
}

// ask sends a setup request and waits for its reply.
func (r *run) ask(ctx context.Context, a *agent, verb, body string, list bool) (outcome, error) {
	req := &request{id: r.newID("s"), a: a, list: list, done: make(chan outcome, 1)}
	if err := r.send(req, r.cfg.BotNick, requestLine(verb, body, req.id)); err != nil {
		return outcome{}, fmt.Errorf("%s: %s: %w", a.nick, verb, err)
	}
	select {
	case o := <-req.done:
		if o.lost {
			return o, fmt.Errorf("%s: %s: no reply from %s within %s", a.nick, verb, r.cfg.BotNick, r.cfg.Timeout)
		}
		return o, nil
	case <-ctx.Done():
		return outcome{}, ctx.Err()
	}
}

// parallel runs fn for every agent, at most ConnectParallel at once, and
// returns the first error.
func (r *run) parallel(fn func(a *agent) error) error {
	sem := make(chan struct{}, r.cfg.ConnectParallel)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for _, a := range r.agents {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(a); err != nil {
				once.Do(func() { first = err })
			}
		}()
	}
	wg.Wait()
	return first
}

// setup registers every agent with PIRCAN (HELLO) and makes a ring of
// message agreements (agent i asks i+1, which accepts), so that each agent
// has two partners to SEND to. These 3 requests per agent are not timed,
// but count against PIRCAN's per-account limit like any other.
func (r *run) setup(ctx context.Context) error {
	hello := helloBody()
	err := r.parallel(func(a *agent) error {
		o, err := r.ask(ctx, a, "HELLO", hello, false)
		if err != nil {
			return err
		}
		switch {
		case o.verb == "ERROR" && o.last.Code == "registration_paused":
			return fmt.Errorf("%s: HELLO: registration_paused: PIRCAN registers at most PIRCAN_REGISTRATIONS_PER_HOUR new agents "+
				"per hour (30 by default): raise it on the bot for the first run, or reuse these agents (same --nick-prefix "+
				"and --agent-password; HELLO of a known agent is not a new registration)", a.nick)
		case o.verb != "HELLO" || o.last.AgentID == "":
			return fmt.Errorf("%s: HELLO: %s %s", a.nick, o.verb, o.last.Code)
		}
		a.id = o.last.AgentID
		return nil
	})
	if err != nil {
		return err
	}

	n := len(r.agents)
	pairs := n
	if n == 2 {
		pairs = 1 // 0→1 is also 1→0
	}
	accepts := make([]string, n) // by requester: the request its partner must accept
	err = r.parallel(func(a *agent) error {
		if a.idx >= pairs {
			return nil
		}
		to := r.agents[(a.idx+1)%n]
		body := fmt.Sprintf(`{"to":%q,"purpose":"pircan bench","scopes":["message"],"ttl_days":1}`, to.id)
		o, err := r.ask(ctx, a, "CONTACT", body, false)
		if err != nil {
			return err
		}
		switch {
		case o.verb == "CONTACT" && o.last.Status == "pending":
			accepts[a.idx] = o.last.RequestID
		case o.verb == "CONTACT" && o.last.Status == "accepted":
		case o.verb == "ERROR" && o.last.Code == "already_agreed": // an earlier run's agreement
		case o.verb == "ERROR" && o.last.Code == "duplicate_request": // an earlier run's request, never answered
			id, err := r.findRequest(ctx, to, a.id)
			if err != nil {
				return err
			}
			accepts[a.idx] = id
		default:
			return fmt.Errorf("%s: CONTACT %s: %s %s %s", a.nick, to.nick, o.verb, o.last.Code, o.last.Status)
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = r.parallel(func(a *agent) error {
		from := r.agents[(a.idx-1+n)%n]
		id := accepts[from.idx]
		if id == "" {
			return nil
		}
		o, err := r.ask(ctx, a, "ACCEPT", fmt.Sprintf(`{"request_id":%q}`, id), false)
		if err != nil {
			return err
		}
		if o.verb != "ACCEPT" {
			return fmt.Errorf("%s: ACCEPT from %s: %s %s", a.nick, from.nick, o.verb, o.last.Code)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, a := range r.agents {
		next, prev := (i+1)%n, (i-1+n)%n
		a.partners = []int{next}
		if prev != next {
			a.partners = append(a.partners, prev)
		}
	}
	r.agreements = pairs
	return nil
}

// findRequest finds the pending request from agent fromID to a.
func (r *run) findRequest(ctx context.Context, a *agent, fromID string) (string, error) {
	o, err := r.ask(ctx, a, "CONTACTS", `{"direction":"incoming","status":"pending","limit":10}`, true)
	if err != nil {
		return "", err
	}
	for _, it := range o.items {
		if it.From.AgentID == fromID {
			return it.RequestID, nil
		}
	}
	return "", fmt.Errorf("%s: CONTACT said duplicate_request, but no pending request from %s among its first 10", a.nick, fromID)
}

// measure sends the mix at the configured rate for the configured
// duration, and the floor probes beside it.
func (r *run) measure(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Duration)
	defer cancel()
	start := time.Now()
	end := start.Add(r.cfg.Duration)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); r.floors(ctx, end) }()

	n := len(r.agents)
	// Each agent goes through the whole mix, from a phase of its own: one
	// shared sequence dealt round-robin would give an agent only the verbs
	// at every N-th position (e.g. always FIND), and one sequence per agent
	// from the same start would make every round one verb.
	total := 0
	for _, e := range r.cfg.Mix {
		total += e.Weight
	}
	for _, a := range r.agents {
		a.pick = newPicker(r.cfg.Mix)
		for range a.idx % total {
			a.pick.next(func(string) bool { return true })
		}
	}
	interval := float64(time.Second) / r.cfg.Rate
	timer := time.NewTimer(0)
	defer timer.Stop()
	for k := 0; ; k++ {
		at := start.Add(time.Duration(float64(k) * interval))
		if !at.Before(end) {
			break
		}
		if d := time.Until(at); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		r.turn(r.agents[k%n])
	}
	wg.Wait()
}

// turn sends an agent's next request: a waiting ACCEPT first, else the
// next verb of the mix it can send.
func (r *run) turn(a *agent) {
	const inWindow = true
	if a.c.Gone() != "" {
		r.skipped.Add(1)
		return
	}
	n := len(r.agents)
	a.mu.Lock()
	var acceptID string
	if len(a.accepts) > 0 {
		acceptID, a.accepts = a.accepts[0], a.accepts[1:]
	}
	canContact := a.contacts+2 < n // targets i+2, i+3, … (i+1 is its ring partner)
	a.mu.Unlock()
	if acceptID != "" {
		r.measured(a, "accept", "ACCEPT", fmt.Sprintf(`{"request_id":%q}`, acceptID), false, inWindow, nil)
		return
	}
	verb := a.pick.next(func(v string) bool { return v != "contact" || canContact })
	if verb == "" {
		r.skipped.Add(1)
		return
	}
	switch verb {
	case "hello":
		r.measured(a, verb, "HELLO", helloBody(), false, inWindow, nil)
	case "whoami":
		r.measured(a, verb, "WHOAMI", "", false, inWindow, nil)
	case "find":
		r.measured(a, verb, "FIND", fmt.Sprintf(`{"capability":%q,"limit":%d}`, BenchCapability, r.cfg.FindLimit), true, inWindow, nil)
	case "channels":
		r.measured(a, verb, "CHANNELS", "", true, inWindow, nil)
	case "echo":
		r.measured(a, verb, "ECHO", `{"text":"pircan bench"}`, false, inWindow, nil)
	case "inbox":
		r.measured(a, verb, "INBOX", `{"limit":5}`, true, inWindow, nil)
	case "send":
		a.mu.Lock()
		to := r.agents[a.partners[a.sends%len(a.partners)]]
		a.sends++
		a.mu.Unlock()
		body := fmt.Sprintf(`{"to":%q,"text":"pircan bench message from %s"}`, to.id, a.nick)
		r.measured(a, verb, "SEND", body, false, inWindow, nil)
	case "contact":
		a.mu.Lock()
		to := r.agents[(a.idx+2+a.contacts)%n]
		a.contacts++
		a.mu.Unlock()
		// A scope of this run's own: never already agreed by an earlier run.
		body := fmt.Sprintf(`{"to":%q,"purpose":"pircan bench %s","scopes":["task:pircan-bench-%s"],"ttl_days":1}`,
			to.id, r.runID, r.runID)
		r.measured(a, verb, "CONTACT", body, false, inWindow, func(f fields) {
			if f.Status == "pending" && f.RequestID != "" {
				to.mu.Lock()
				to.accepts = append(to.accepts, f.RequestID)
				to.mu.Unlock()
			}
		})
	}
}

func (r *run) measured(a *agent, stat, verb, body string, list, inWindow bool, after func(fields)) {
	req := &request{id: r.newID(""), stat: stat, a: a, list: list, inWindow: inWindow, after: after}
	line := requestLine(verb, body, req.id)
	r.register(req)
	go func() { _ = r.write(req, r.cfg.BotNick, line) }() // a stalled socket must not stall the schedule
}

// floors sends FloorRate probes per second to each floor, from the agents
// in turn: the echo bot (the same bytes as a WHOAMI) and NickServ INFO of
// the agent's own account (timed to its first line).
func (r *run) floors(ctx context.Context, end time.Time) {
	n := len(r.agents)
	t := time.NewTicker(time.Duration(float64(time.Second) / r.cfg.FloorRate))
	defer t.Stop()
	echoNext, infoNext := 0, n/2
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if !now.Before(end) {
				return
			}
			if r.echoFold != "" {
				a := r.agents[echoNext%n]
				echoNext++
				if a.c.Gone() == "" {
					req := &request{id: r.newID("e"), stat: floorEcho, a: a, inWindow: true}
					go func() { _ = r.send(req, r.cfg.Echo.Nick, requestLine("WHOAMI", "", req.id)) }()
				}
			}
			for range n { // the next agent with no INFO in the last second
				a := r.agents[infoNext%n]
				infoNext++
				a.mu.Lock()
				free := a.infoID == "" && now.Sub(a.infoAt) > time.Second && a.c.Gone() == ""
				var req *request
				if free {
					req = &request{id: r.newID("n"), stat: floorInfo, a: a, inWindow: true}
					a.infoID, a.infoAt = req.id, now
				}
				a.mu.Unlock()
				if free {
					go func() { _ = r.send(req, "NickServ", "INFO "+a.nick) }()
					break
				}
			}
		}
	}
}

// drain sends the ACCEPTs still owed (also for CONTACT replies that come
// in meanwhile) and waits for every reply, or its timeout.
func (r *run) drain(ctx context.Context) {
	deadline := time.Now().Add(r.cfg.Timeout + time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		owed := false
		for _, a := range r.agents {
			if a.c.Gone() != "" {
				continue
			}
			for {
				a.mu.Lock()
				var id string
				if len(a.accepts) > 0 {
					id, a.accepts = a.accepts[0], a.accepts[1:]
				}
				a.mu.Unlock()
				if id == "" {
					break
				}
				owed = true
				r.measured(a, "accept", "ACCEPT", fmt.Sprintf(`{"request_id":%q}`, id), false, false, nil)
			}
		}
		r.mu.Lock()
		left := len(r.pending)
		r.mu.Unlock()
		if left == 0 && !owed {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *run) report(res *Result) {
	d := r.cfg.Duration
	for _, v := range append(append([]string{}, Verbs...), "accept") {
		if !r.cfg.Mix.has(v) && (v != "accept" || !r.cfg.Mix.has("contact")) {
			continue
		}
		s := r.stats[v].stats(v, d)
		res.Verbs = append(res.Verbs, s)
		res.Sent += s.Sent
		res.OK += s.OK
		res.Errors += s.ErrorCount()
		res.Lost += s.Lost
		res.Throughput += s.PerSecond
	}
	if r.echoFold != "" {
		s := r.stats[floorEcho].stats("echo floor", d)
		res.EchoFloor = &s
	}
	s := r.stats[floorInfo].stats("NickServ INFO", d)
	res.NickServFloor = &s
	if w := res.Verb("whoami"); w != nil && w.OK > 0 {
		if e := res.EchoFloor; e != nil && e.OK > 0 {
			res.WhoamiVsEcho = &Ratio{P50: ratio(w.P50Ms, e.P50Ms), P99: ratio(w.P99Ms, e.P99Ms)}
		}
		if f := res.NickServFloor; f.OK > 0 {
			res.WhoamiVsInfo = &Ratio{P50: ratio(w.P50Ms, f.P50Ms), P99: ratio(w.P99Ms, f.P99Ms)}
		}
	}
	res.Late = int(r.late.Load())
	res.Skipped = int(r.skipped.Load())
	res.NotifyLines = int(r.notifies.Load())
	res.Uncorrelated = int(r.uncorr.Load())
	res.Disconnects = []Disconnect{}
	for _, a := range r.agents {
		if why := a.c.Gone(); why != "" {
			res.Disconnects = append(res.Disconnects, Disconnect{Nick: a.nick, Reason: why})
		}
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return float64(int(a/b*100+0.5)) / 100
}

// helloBody is every bench agent's profile (the mix's hello repeats it,
// which changes nothing, as a reconnecting agent's HELLO).
func helloBody() string {
	return fmt.Sprintf(`{"name":"bench agent","description":"pircan bench load agent","capabilities":[%q]}`, BenchCapability)
}
