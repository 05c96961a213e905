// Package backoff is the one retry delay of PIRCAN's loops that wait
// after a failure: the IRC reconnect (pircan/irc/transport), a webhook's
// retries (pircan/webhook), `pircan audit --follow`'s reconnect (store)
// and the wait for a database at start (pircan/bot). Exponential from Min
// to Max with full jitter, so that many processes (or many webhooks)
// failing at once do not retry in step, and never below Min, so that
// there is no storm.
package backoff

import (
	"math/rand/v2"
	"time"
)

// Policy is a delay's bounds and its randomness.
type Policy struct {
	Min, Max time.Duration
	// Rand returns a value in [0,1); nil: math/rand/v2. Tests inject it.
	Rand func() float64
}

// Delay is the wait before retry number attempt (0 for the first retry):
// uniform over [Min, ceiling], the ceiling Min doubled attempt times, at
// most Max.
func (p Policy) Delay(attempt int) time.Duration {
	ceil := p.Min
	for i := 0; i < attempt && ceil < p.Max; i++ {
		if ceil > p.Max/2 {
			ceil = p.Max // doubling would pass Max (or overflow)
		} else {
			ceil *= 2
		}
	}
	r := p.Rand
	if r == nil {
		r = rand.Float64
	}
	return p.Min + time.Duration(r()*float64(ceil-p.Min))
}

// Backoff counts the attempts of one loop: Next is the Policy's delay for
// the next one.
type Backoff struct {
	Policy
	attempt int
}

// New is a Backoff from min to max with the default randomness.
func New(min, max time.Duration) *Backoff { return &Backoff{Policy: Policy{Min: min, Max: max}} }

// Next returns the delay before the next attempt and counts the attempt.
func (b *Backoff) Next() time.Duration {
	d := b.Delay(b.attempt)
	b.attempt++
	return d
}

// Reset starts over after a connection that lasted.
func (b *Backoff) Reset() { b.attempt = 0 }
