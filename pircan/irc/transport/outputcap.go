package transport

import (
	"strings"
	"sync"

	"golang.org/x/time/rate"
)

// OrdinaryOutput is the global output cap without a granted fake-lag
// exemption: what an IRC server's default flood control lets an ordinary
// client send. InspIRCd's default <connect> allows a penalty of 10
// (threshold) draining at 1 line/s (commandrate 1000) within an 8 KiB recvq;
// Ergo's default fakelag allows a burst of 5, then 2 lines/s. A burst of 5
// then 1 line/s stays inside both, with room for the JOINs, WHOs and PINGs
// that bypass the pacer.
var OrdinaryOutput = OutputCap{Burst: 5, PerSecond: 1}

// minOutput is the floor when flood disconnects keep lowering the cap.
var minOutput = OutputCap{Burst: 1, PerSecond: 0.25}

// OutputCap is a global output cap: lines at once, then lines per second.
type OutputCap struct {
	Burst     int
	PerSecond float64
}

func (a OutputCap) min(b OutputCap) OutputCap {
	return OutputCap{Burst: min(a.Burst, b.Burst), PerSecond: min(a.PerSecond, b.PerSecond)}
}

// halved is the cap after a flood disconnect, never below minOutput.
func (a OutputCap) halved() OutputCap {
	return OutputCap{Burst: max(minOutput.Burst, a.Burst/2), PerSecond: max(minOutput.PerSecond, a.PerSecond/2)}
}

// SetGlobalRate changes the pacer's global cap (the transport sets it to
// what the server allows the bot on each connection).
func (p *Pacer) SetGlobalRate(perSecond float64, burst int) {
	p.mu.Lock()
	now := p.now()
	p.cfg.GlobalRate, p.cfg.GlobalBurst = perSecond, burst
	p.global.SetLimitAt(now, rate.Limit(perSecond))
	p.global.SetBurstAt(now, burst)
	p.mu.Unlock()
	p.poke()
}

// GlobalRate reports the global cap in force.
func (p *Pacer) GlobalRate() (perSecond float64, burst int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg.GlobalRate, p.cfg.GlobalBurst
}

// outputPolicy picks the global cap: the configured one while the server
// has granted a fake-lag exemption (OPER answered 381) or the operator
// stated one (Config.OutputExempt), the ordinary-client cap otherwise, and
// both never above a ceiling that each flood disconnect halves (for the
// life of the process).
type outputPolicy struct {
	mu         sync.Mutex
	configured OutputCap
	ceiling    OutputCap
	exempt     bool // granted on this connection (381)
	stated     bool // by the operator, for every connection
}

func newOutputPolicy(cfg PacerConfig, stated bool) *outputPolicy {
	c := OutputCap{Burst: cfg.GlobalBurst, PerSecond: cfg.GlobalRate}
	return &outputPolicy{configured: c, ceiling: c, stated: stated}
}

func (o *outputPolicy) inForce() OutputCap {
	c := OrdinaryOutput.min(o.configured)
	if o.exempt || o.stated {
		c = o.configured
	}
	return c.min(o.ceiling)
}

// Exempt says whether the configured cap is in force (granted or stated),
// rather than the ordinary-client one.
func (o *outputPolicy) Exempt() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.exempt || o.stated
}

// set records whether the exemption holds and returns the cap in force.
func (o *outputPolicy) set(exempt bool) OutputCap {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.exempt = exempt
	return o.inForce()
}

// flooded halves the cap in force and returns it.
func (o *outputPolicy) flooded() OutputCap {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ceiling = o.inForce().halved()
	return o.inForce()
}

// floodKill tells a server's ERROR for sending too much (InspIRCd "Excess
// Flood", "RecvQ exceeded", "SendQ exceeded"; Ergo and others alike).
func floodKill(text string) bool {
	t := strings.ToLower(text)
	for _, s := range []string{"flood", "recvq", "sendq"} {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}
