package ircconn

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// PacerConfig sets output pacing: per recipient a token bucket (spec §4:
// bursts of 5, then 2 lines per second), under one global bucket sized to
// what the IRC server lets the bot send.
type PacerConfig struct {
	Burst       int
	PerSecond   float64
	GlobalBurst int
	GlobalRate  float64
	MaxQueued   int // per recipient; beyond it new lines are dropped and counted
}

// DefaultPacing is the spec's per-recipient pacing under a global cap that
// a server with a fake-lag exemption for the bot sustains.
var DefaultPacing = PacerConfig{Burst: 5, PerSecond: 2, GlobalBurst: 200, GlobalRate: 200, MaxQueued: 500}

// withDefaults fills unset (or unusable) fields from DefaultPacing.
func (c PacerConfig) withDefaults() PacerConfig {
	d := DefaultPacing
	if c.Burst < 1 {
		c.Burst = d.Burst
	}
	if c.PerSecond <= 0 {
		c.PerSecond = d.PerSecond
	}
	if c.GlobalBurst < 1 {
		c.GlobalBurst = d.GlobalBurst
	}
	if c.GlobalRate <= 0 {
		c.GlobalRate = d.GlobalRate
	}
	if c.MaxQueued < 1 {
		c.MaxQueued = d.MaxQueued
	}
	return c
}

type recipient struct {
	target  string
	lines   []string
	limiter *rate.Limiter
}

// Pacer queues lines per recipient and sends them round-robin: each turn
// goes to the next recipient that may send, so a long list to one agent
// never delays another's reply.
type Pacer struct {
	cfg       PacerConfig
	now       func() time.Time
	send      func(target, line string) error
	sendBatch func(target string, lines []string) error // when set, Run uses it

	mu      sync.Mutex
	queues  map[string]*recipient // by folded target
	ring    []*recipient          // recipients with queued lines, in turn order
	next    int
	global  *rate.Limiter
	online  bool
	dropped int
	wake    chan struct{}
	sent    atomic.Uint64 // lines handed to the server
}

// NewPacer builds a pacer that delivers with send. now is the clock (nil:
// time.Now).
func NewPacer(cfg PacerConfig, now func() time.Time, send func(target, line string) error) *Pacer {
	if now == nil {
		now = time.Now
	}
	cfg = cfg.withDefaults()
	return &Pacer{cfg: cfg, now: now, send: send, queues: map[string]*recipient{},
		global: rate.NewLimiter(rate.Limit(cfg.GlobalRate), cfg.GlobalBurst), wake: make(chan struct{}, 1)}
}

// Enqueue adds lines for target, in order.
func (p *Pacer) Enqueue(target string, lines ...string) {
	if len(lines) == 0 {
		return
	}
	p.mu.Lock()
	key := foldTarget(target)
	r := p.queues[key]
	if r == nil {
		r = &recipient{target: target, limiter: rate.NewLimiter(rate.Limit(p.cfg.PerSecond), p.cfg.Burst)}
		p.queues[key] = r
	}
	if len(r.lines) == 0 {
		p.ring = append(p.ring, r)
	}
	r.target = target
	for _, l := range lines {
		if len(r.lines) >= p.cfg.MaxQueued {
			p.dropped++
			continue
		}
		r.lines = append(r.lines, l)
	}
	p.mu.Unlock()
	p.poke()
}

// SetOnline pauses (false) or resumes (true) sending, around reconnects.
func (p *Pacer) SetOnline(online bool) {
	p.mu.Lock()
	p.online = online
	p.mu.Unlock()
	p.poke()
}

// Stats reports the queued line count and lines dropped for a full queue.
func (p *Pacer) Stats() (queued, dropped int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.ring {
		queued += len(r.lines)
	}
	return queued, p.dropped
}

// Sent reports the lines sent so far.
func (p *Pacer) Sent() uint64 { return p.sent.Load() }

func (p *Pacer) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// SendBatches makes Run hand a recipient all the lines it may have at once
// to send in one call (one socket write): an IRC server that does not set
// TCP_NODELAY holds a second line written separately until the client's
// delayed ACK, ~40 ms (BENCHMARKS.md).
func (p *Pacer) SendBatches(send func(target string, lines []string) error) { p.sendBatch = send }

// Run sends until ctx ends.
func (p *Pacer) Run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if p.sendBatch != nil {
			target, lines, wait := p.takeUpTo(p.cfg.Burst)
			if len(lines) > 0 {
				if err := p.sendBatch(target, lines); err != nil {
					p.putBack(target, lines...)
					p.SetOnline(false)
				} else {
					p.sent.Add(uint64(len(lines)))
				}
				continue
			}
			if !p.sleep(ctx, timer, wait) {
				return
			}
			continue
		}
		target, line, wait := p.take()
		if line != "" {
			if err := p.send(target, line); err != nil {
				p.putBack(target, line)
				p.SetOnline(false)
			} else {
				p.sent.Add(1)
			}
			continue
		}
		if !p.sleep(ctx, timer, wait) {
			return
		}
	}
}

// sleep waits for wait, a wake-up or the end of ctx (false).
func (p *Pacer) sleep(ctx context.Context, timer *time.Timer, wait time.Duration) bool {
	timer.Reset(wait)
	select {
	case <-ctx.Done():
		return false
	case <-p.wake:
	case <-timer.C:
	}
	return true
}

// take picks the next line to send, or says how long to wait for one.
func (p *Pacer) take() (target, line string, wait time.Duration) {
	target, lines, wait := p.takeUpTo(1)
	if len(lines) == 0 {
		return "", "", wait
	}
	return target, lines[0], 0
}

// takeUpTo picks, for the next recipient whose turn it is, as many of its
// queued lines (at most max) as its bucket and the global one allow now,
// or says how long to wait.
func (p *Pacer) takeUpTo(max int) (target string, lines []string, wait time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	wait = time.Hour
	if !p.online || len(p.ring) == 0 {
		return "", nil, wait
	}
	now := p.now()
	g := p.global.TokensAt(now)
	if g < 1 {
		return "", nil, tokenWait(g, p.cfg.GlobalRate)
	}
	for i := 0; i < len(p.ring); i++ {
		idx := (p.next + i) % len(p.ring)
		r := p.ring[idx]
		tokens := r.limiter.TokensAt(now)
		if tokens < 1 {
			wait = min(wait, tokenWait(tokens, p.cfg.PerSecond))
			continue
		}
		n := min(max, int(tokens), int(g), len(r.lines))
		r.limiter.AllowN(now, n)
		p.global.AllowN(now, n)
		lines, r.lines = r.lines[:n:n], r.lines[n:]
		if len(r.lines) == 0 {
			p.ring = append(p.ring[:idx], p.ring[idx+1:]...)
			p.next = idx
			p.forgetIdle(now)
		} else {
			p.next = idx + 1
		}
		return r.target, lines, 0
	}
	return "", nil, wait
}

// putBack returns unsent lines to the front of their recipient's queue.
func (p *Pacer) putBack(target string, lines ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.queues[foldTarget(target)]
	if r == nil {
		return
	}
	if len(r.lines) == 0 {
		p.ring = append(p.ring, r)
	}
	r.lines = append(slices.Clone(lines), r.lines...)
}

// forgetIdle drops recipients whose bucket has refilled and who wait for
// nothing, so memory follows recent recipients only.
func (p *Pacer) forgetIdle(now time.Time) {
	if len(p.queues) < 1024 {
		return
	}
	for k, r := range p.queues {
		if len(r.lines) == 0 && r.limiter.TokensAt(now) >= float64(p.cfg.Burst) {
			delete(p.queues, k)
		}
	}
}

func tokenWait(tokens, perSecond float64) time.Duration {
	return max(time.Millisecond, time.Duration((1-tokens)/perSecond*float64(time.Second)))
}
