package ircconn

import (
	"context"
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
var DefaultPacing = PacerConfig{Burst: 5, PerSecond: 2, GlobalBurst: 100, GlobalRate: 50, MaxQueued: 500}

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
	cfg  PacerConfig
	now  func() time.Time
	send func(target, line string) error

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

// Run sends until ctx ends.
func (p *Pacer) Run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
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
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-timer.C:
		}
	}
}

// take picks the next line to send, or says how long to wait for one.
func (p *Pacer) take() (target, line string, wait time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	wait = time.Hour
	if !p.online || len(p.ring) == 0 {
		return "", "", wait
	}
	now := p.now()
	if g := p.global.TokensAt(now); g < 1 {
		return "", "", tokenWait(g, p.cfg.GlobalRate)
	}
	for i := 0; i < len(p.ring); i++ {
		idx := (p.next + i) % len(p.ring)
		r := p.ring[idx]
		if tokens := r.limiter.TokensAt(now); tokens < 1 {
			wait = min(wait, tokenWait(tokens, p.cfg.PerSecond))
			continue
		}
		r.limiter.AllowN(now, 1)
		p.global.AllowN(now, 1)
		line, r.lines = r.lines[0], r.lines[1:]
		if len(r.lines) == 0 {
			p.ring = append(p.ring[:idx], p.ring[idx+1:]...)
			p.next = idx
			p.forgetIdle(now)
		} else {
			p.next = idx + 1
		}
		return r.target, line, 0
	}
	return "", "", wait
}

// putBack returns an unsent line to the front of its recipient's queue.
func (p *Pacer) putBack(target, line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.queues[foldTarget(target)]
	if r == nil {
		return
	}
	if len(r.lines) == 0 {
		p.ring = append(p.ring, r)
	}
	r.lines = append([]string{line}, r.lines...)
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
