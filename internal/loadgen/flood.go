package loadgen

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ergochat/irc-go/ircmsg"

	"github.com/creatimus/pircan/internal/latency"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/irc/transport"
)

// FloodConfig describes a flood run (`pircan bench --flood`): Conns
// unidentified connections rotate through Nicks nicks in all over
// Duration (each nick: NICK, JOIN the lobby, one request, PART), while one
// identified agent sends WHOAMI every WhoamiEvery, first for Baseline
// without the flood, then throughout it.
type FloodConfig struct {
	Server, CAFile, BotNick, Lobby string

	Conns    int           // guest connections (0: 10)
	Nicks    int           // distinct guest nicks in all (0: 2000)
	Duration time.Duration // the flood (0: 60 s)
	Baseline time.Duration // WHOAMI alone before the flood (0: 10 s; <0: none)

	Agent, Password string // the identified agent: nick = NickServ account
	Register        bool   // REGISTER the account first (an existing one is IDENTIFIed)
	Email           string

	WhoamiEvery time.Duration // 0: 4 s (15 a minute: under PIRCAN's default 20 per account)
	Target      time.Duration // a WHOAMI answered later than this is late (0: 5 s)
	Timeout     time.Duration // one not answered by then is lost (0: 30 s)

	// MetricsURL, if set, is the bot's /metrics: sampled every second for
	// its RSS (process_resident_memory_bytes) and output queue, and read at
	// the end for its refusal counters.
	MetricsURL string

	Progress io.Writer
}

// PhaseStats are the identified agent's WHOAMIs in one phase.
type PhaseStats struct {
	Sent     int     `json:"sent"`
	Answered int     `json:"answered"`
	Late     int     `json:"late"` // answered after Target
	Lost     int     `json:"lost"` // not answered within Timeout
	P50ms    float64 `json:"p50_ms"`
	P99ms    float64 `json:"p99_ms"`
	MaxMs    float64 `json:"max_ms"`
}

// FloodResult is what a flood run measured.
type FloodResult struct {
	Conns           int                `json:"conns"`
	Nicks           int                `json:"nicks"`
	DurationSeconds float64            `json:"duration_seconds"`
	WhoamiEveryMs   float64            `json:"whoami_every_ms"`
	TargetMs        float64            `json:"target_ms"`
	Baseline        PhaseStats         `json:"baseline"`
	Flood           PhaseStats         `json:"flood"`
	NicksCycled     int64              `json:"nicks_cycled"`
	GuestReplies    map[string]int64   `json:"guest_replies"` // bot NOTICEs to the guests, by verb (ERROR by code)
	GuestsDropped   []string           `json:"guests_dropped,omitempty"`
	RSSBeforeMB     float64            `json:"rss_before_mb,omitempty"`
	RSSPeakMB       float64            `json:"rss_peak_mb,omitempty"`
	RSSAfterMB      float64            `json:"rss_after_mb,omitempty"`
	OutputQueuePeak float64            `json:"output_queue_peak_lines,omitempty"`
	BotCounters     map[string]float64 `json:"bot_counters,omitempty"`
}

// Failures lists why the run missed its target: a WHOAMI lost or late
// during the flood, or a guest connection dropped by the server.
func (r *FloodResult) Failures() []string {
	var f []string
	if r.Flood.Lost > 0 {
		f = append(f, fmt.Sprintf("%d WHOAMI lost during the flood", r.Flood.Lost))
	}
	if r.Flood.Late > 0 {
		f = append(f, fmt.Sprintf("%d WHOAMI answered after %.0f ms during the flood", r.Flood.Late, r.TargetMs))
	}
	if len(r.GuestsDropped) > 0 {
		f = append(f, fmt.Sprintf("%d guest connections dropped by the server", len(r.GuestsDropped)))
	}
	return f
}

// WriteTable prints the result for people.
func (r *FloodResult) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "flood: %d connections rotating %d unidentified nicks over %.0fs (%d cycled); WHOAMI every %.0f ms\n",
		r.Conns, r.Nicks, r.DurationSeconds, r.NicksCycled, r.WhoamiEveryMs)
	fmt.Fprintf(&b, "%-10s %6s %8s %6s %6s %9s %9s %9s\n", "WHOAMI", "sent", "answered", "late", "lost", "p50 ms", "p99 ms", "max ms")
	for _, p := range []struct {
		name string
		s    PhaseStats
	}{{"baseline", r.Baseline}, {"flood", r.Flood}} {
		fmt.Fprintf(&b, "%-10s %6d %8d %6d %6d %9.1f %9.1f %9.1f\n", p.name, p.s.Sent, p.s.Answered, p.s.Late, p.s.Lost, p.s.P50ms, p.s.P99ms, p.s.MaxMs)
	}
	fmt.Fprintf(&b, "late: answered after %.0f ms\n", r.TargetMs)
	fmt.Fprintf(&b, "guest replies: %s\n", sortedCounts(r.GuestReplies))
	if r.RSSPeakMB > 0 {
		fmt.Fprintf(&b, "bot RSS: %.1f MB before, %.1f MB peak, %.1f MB after; output queue peak %.0f lines\n",
			r.RSSBeforeMB, r.RSSPeakMB, r.RSSAfterMB, r.OutputQueuePeak)
	}
	if len(r.BotCounters) > 0 {
		keys := make([]string, 0, len(r.BotCounters))
		for k := range r.BotCounters {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s %g\n", k, r.BotCounters[k])
		}
	}
	for _, g := range r.GuestsDropped {
		fmt.Fprintf(&b, "guest dropped: %s\n", g)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func sortedCounts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

func (c *FloodConfig) fill() error {
	switch {
	case c.Server == "" || c.BotNick == "" || c.Lobby == "":
		return errors.New("server, bot nick and lobby are needed")
	case c.Agent == "" || c.Password == "":
		return errors.New("the identified agent needs a nick (its account) and a NickServ password")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if c.Conns <= 0 {
		c.Conns = 10
	}
	if c.Nicks <= 0 {
		c.Nicks = 2000
	}
	def(&c.Duration, 60*time.Second)
	def(&c.Baseline, 10*time.Second)
	def(&c.WhoamiEvery, 4*time.Second)
	def(&c.Target, 5*time.Second)
	def(&c.Timeout, 30*time.Second)
	return nil
}

// prober is the identified agent and its WHOAMIs in flight.
type prober struct {
	mu      sync.Mutex
	pending map[string]time.Time // id → sent
	done    map[string]time.Duration
	hello   chan string // the HELLO reply's verb
}

func (p *prober) handle(botFold string, m ircmsg.Message, at time.Time) {
	if m.Command != "NOTICE" || len(m.Params) < 2 || pircan.RFC1459.Fold(m.Nick()) != botFold {
		return
	}
	verb, f, ok := parseLine(m.Params[len(m.Params)-1])
	if !ok || f.Re == "" {
		return
	}
	if f.Re == "hello" {
		select {
		case p.hello <- verb:
		default:
		}
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if sent, ok := p.pending[f.Re]; ok && verb == "WHOAMI" {
		delete(p.pending, f.Re)
		p.done[f.Re] = at.Sub(sent)
	}
}

// RunFlood runs the flood and reports what it measured (the result so far
// and ctx's error when interrupted).
func RunFlood(ctx context.Context, cfg FloodConfig) (*FloodResult, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	tlsConf, err := transport.TLSConfig(cfg.Server, cfg.CAFile, false)
	if err != nil {
		return nil, err
	}
	progress := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "pircan bench --flood: "+format+"\n", args...)
		}
	}
	var idb [3]byte
	_, _ = rand.Read(idb[:])
	runID := hex.EncodeToString(idb[:])
	botFold := pircan.RFC1459.Fold(cfg.BotNick)
	res := &FloodResult{Conns: cfg.Conns, Nicks: cfg.Nicks, DurationSeconds: cfg.Duration.Seconds(),
		WhoamiEveryMs: latency.Millis(cfg.WhoamiEvery), TargetMs: latency.Millis(cfg.Target),
		GuestReplies: map[string]int64{}}

	// The identified agent.
	dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	ac, err := dial(dctx, cfg.Server, tlsConf, cfg.Agent)
	if err == nil {
		if err = ac.nickServ(dctx, cfg.Register, cfg.Agent, cfg.Password, cfg.Email); err != nil {
			ac.close(false)
		}
	}
	cancel()
	if err != nil {
		return nil, fmt.Errorf("identified agent: %w", err)
	}
	p := &prober{pending: map[string]time.Time{}, done: map[string]time.Duration{}, hello: make(chan string, 1)}
	ac.start(func(m ircmsg.Message, at time.Time) { p.handle(botFold, m, at) })
	defer ac.close(true)
	if err := ac.privmsg(cfg.BotNick, `PIRCAN/1 HELLO {"id":"hello","name":"pircan bench flood probe"}`); err != nil {
		return nil, err
	}
	select {
	case verb := <-p.hello:
		if verb != "HELLO" {
			return nil, fmt.Errorf("HELLO answered %s", verb)
		}
	case <-time.After(cfg.Timeout):
		return nil, errors.New("no answer to HELLO")
	case <-ctx.Done():
		return nil, ctx.Err()
	}

	// The guests: connected before the clock starts.
	guests := make([]*client, cfg.Conns)
	var replies sync.Map // verb → *atomic.Int64
	count := func(k string) {
		v, _ := replies.LoadOrStore(k, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
	}
	var wg sync.WaitGroup
	errs := make([]error, cfg.Conns)
	for i := range guests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			guests[i], errs[i] = dial(gctx, cfg.Server, tlsConf, fmt.Sprintf("f%s-%d", runID, i))
		}()
	}
	wg.Wait()
	for i, g := range guests {
		if errs[i] != nil {
			for _, g := range guests {
				if g != nil {
					g.close(false)
				}
			}
			return nil, fmt.Errorf("guest connection: %w", errs[i])
		}
		g.start(func(m ircmsg.Message, _ time.Time) {
			switch {
			case m.Command == "NOTICE" && len(m.Params) >= 2 && pircan.RFC1459.Fold(m.Nick()) == botFold:
				verb, f, _ := parseLine(m.Params[len(m.Params)-1])
				if verb == "ERROR" {
					verb += ":" + f.Code
				}
				count(verb)
			case m.Command == "433" || m.Command == "432" || m.Command == "438":
				count("nick-refused:" + m.Command)
			}
		})
	}
	defer func() {
		for _, g := range guests {
			g.close(true)
		}
	}()
	progress("identified agent %s and %d guest connections ready", cfg.Agent, cfg.Conns)

	// RSS and output queue, sampled every second.
	sampleCtx, stopSample := context.WithCancel(context.Background())
	sampled := make(chan struct{})
	var rssMu sync.Mutex
	if cfg.MetricsURL != "" {
		if m, err := scrapeMetrics(ctx, cfg.MetricsURL); err == nil {
			res.RSSBeforeMB = m["process_resident_memory_bytes"] / (1 << 20)
		}
		go func() {
			defer close(sampled)
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-sampleCtx.Done():
					return
				case <-t.C:
				}
				m, err := scrapeMetrics(sampleCtx, cfg.MetricsURL)
				if err != nil {
					continue
				}
				rssMu.Lock()
				res.RSSPeakMB = max(res.RSSPeakMB, m["process_resident_memory_bytes"]/(1<<20))
				res.OutputQueuePeak = max(res.OutputQueuePeak, m["pircan_output_queue_lines"])
				rssMu.Unlock()
			}
		}()
	} else {
		close(sampled)
	}

	// WHOAMI throughout: the baseline, then the flood.
	var seq atomic.Int64
	var phaseMu sync.Mutex
	phaseOf := map[string]int{} // id → 0 baseline, 1 flood
	phase := 0
	probeCtx, stopProbe := context.WithCancel(ctx)
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		t := time.NewTicker(cfg.WhoamiEvery)
		defer t.Stop()
		for {
			id := "fw" + strconv.FormatInt(seq.Add(1), 10)
			phaseMu.Lock()
			phaseOf[id] = phase
			phaseMu.Unlock()
			p.mu.Lock()
			p.pending[id] = time.Now()
			p.mu.Unlock()
			_ = ac.privmsg(cfg.BotNick, `PIRCAN/1 WHOAMI {"id":"`+id+`"}`) // unsent: counted lost
			select {
			case <-probeCtx.Done():
				return
			case <-t.C:
			}
		}
	}()
	if cfg.Baseline > 0 {
		progress("baseline: WHOAMI alone for %s", cfg.Baseline)
		select {
		case <-time.After(cfg.Baseline):
		case <-ctx.Done():
		}
	}
	phaseMu.Lock()
	phase = 1
	phaseMu.Unlock()

	progress("flood: %d nicks over %s", cfg.Nicks, cfg.Duration)
	var cycled atomic.Int64
	start := time.Now()
	for i, g := range guests {
		share := cfg.Nicks / cfg.Conns
		if i < cfg.Nicks%cfg.Conns {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			step := cfg.Duration / time.Duration(max(share, 1))
			for k := range share {
				at := start.Add(time.Duration(k)*step + time.Duration(i)*step/time.Duration(cfg.Conns))
				select {
				case <-time.After(time.Until(at)):
				case <-ctx.Done():
					return
				}
				nick := fmt.Sprintf("f%s-%d-%d", runID, i, k)
				err := g.raw("NICK " + nick + "\r\nJOIN " + cfg.Lobby + "\r\nPRIVMSG " + cfg.BotNick +
					` :PIRCAN/1 ECHO {"text":"flood"}` + "\r\nPART " + cfg.Lobby)
				if err != nil {
					return
				}
				cycled.Add(1)
			}
		}()
	}
	wg.Wait()
	stopProbe()
	<-probed
	progress("flood sent; waiting up to %s for the last WHOAMI replies", cfg.Timeout)
	deadline := time.Now().Add(cfg.Timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		p.mu.Lock()
		left := len(p.pending)
		p.mu.Unlock()
		if left == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	stopSample()
	<-sampled
	if cfg.MetricsURL != "" {
		if m, err := scrapeMetrics(context.Background(), cfg.MetricsURL); err == nil {
			res.RSSAfterMB = m["process_resident_memory_bytes"] / (1 << 20)
			res.RSSPeakMB = max(res.RSSPeakMB, res.RSSAfterMB)
			res.BotCounters = map[string]float64{}
			for k, v := range m {
				for _, prefix := range floodCounters {
					if strings.HasPrefix(k, prefix) {
						res.BotCounters[k] = v
					}
				}
			}
		}
	}

	// Tally.
	res.NicksCycled = cycled.Load()
	replies.Range(func(k, v any) bool {
		res.GuestReplies[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	for _, g := range guests {
		if why := g.Gone(); why != "" {
			res.GuestsDropped = append(res.GuestsDropped, g.nick+": "+why)
		}
	}
	var lat [2][]time.Duration
	var stats [2]*PhaseStats = [2]*PhaseStats{&res.Baseline, &res.Flood}
	p.mu.Lock()
	phaseMu.Lock()
	for id, ph := range phaseOf {
		s := stats[ph]
		s.Sent++
		d, ok := p.done[id]
		if !ok {
			s.Lost++
			continue
		}
		s.Answered++
		if d > cfg.Target {
			s.Late++
		}
		lat[ph] = append(lat[ph], d)
	}
	phaseMu.Unlock()
	p.mu.Unlock()
	for i, s := range stats {
		s.P50ms = latency.Millis(latency.Percentile(lat[i], 50))
		s.P99ms = latency.Millis(latency.Percentile(lat[i], 99))
		s.MaxMs = latency.Millis(latency.Percentile(lat[i], 100))
	}
	return res, ctx.Err()
}

// floodCounters are the bot's series the flood result reports (those the
// bot has: an older PIRCAN lacks some).
var floodCounters = []string{"pircan_requests_refused_total", "pircan_lobby_welcomes_total", "pircan_irc_events_dropped_total",
	"pircan_irc_intake_waits_total", "pircan_output_dropped_lines_total", "pircan_presence_resets_total",
	"pircan_notify_jobs_refused_total", `pircan_requests_total{code="rate_limited`}

// scrapeMetrics reads a Prometheus text page into series → value.
func scrapeMetrics(ctx context.Context, url string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}
