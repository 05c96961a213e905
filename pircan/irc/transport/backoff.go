package transport

import (
	"math/rand/v2"
	"time"
)

// Backoff yields reconnect delays: exponential from Min to Max with full
// jitter, so a fleet of restarts does not hit the server in step, and one
// process never retries faster than Min.
type Backoff struct {
	Min, Max time.Duration
	attempt  int
	rand     func() float64 // in [0,1); injectable for tests
}

// Next returns the delay before the next attempt and counts the attempt.
func (b *Backoff) Next() time.Duration {
	ceil := b.Min
	for i := 0; i < b.attempt && ceil < b.Max; i++ {
		if ceil > b.Max/2 {
			ceil = b.Max // doubling would pass Max (or overflow)
		} else {
			ceil *= 2
		}
	}
	b.attempt++
	r := b.rand
	if r == nil {
		r = rand.Float64
	}
	// Full jitter over [Min, ceil]: never below Min, so there is no storm.
	return b.Min + time.Duration(r()*float64(ceil-b.Min))
}

// Reset starts over after a connection that lasted.
func (b *Backoff) Reset() { b.attempt = 0 }
