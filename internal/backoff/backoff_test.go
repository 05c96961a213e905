package backoff

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// almostOne is the largest value a [0,1) source can return.
var almostOne = math.Nextafter(1, 0)

func constRand(v float64) func() float64 { return func() float64 { return v } }

func TestBackoffCeilingGrowsExponentially(t *testing.T) {
	b := Backoff{Policy: Policy{Min: time.Second, Max: 30 * time.Second, Rand: constRand(0.5)}}
	// Ceilings 1, 2, 4, 8, 16, then capped at 30 s; the delay is halfway
	// between Min and the ceiling.
	want := []time.Duration{
		time.Second,
		1500 * time.Millisecond,
		2500 * time.Millisecond,
		4500 * time.Millisecond,
		8500 * time.Millisecond,
		15500 * time.Millisecond,
		15500 * time.Millisecond,
		15500 * time.Millisecond,
	}
	for i, w := range want {
		if got := b.Next(); got != w {
			t.Errorf("attempt %d: %v, want %v", i, got, w)
		}
	}
}

func TestBackoffExtremes(t *testing.T) {
	// rand → 0: always Min, however many attempts.
	b := Backoff{Policy: Policy{Min: time.Second, Max: 2 * time.Minute, Rand: constRand(0)}}
	for i := range 100 {
		if got := b.Next(); got != time.Second {
			t.Fatalf("rand 0, attempt %d: %v, want Min", i, got)
		}
	}
	// rand → 1: the ceiling itself (to within a nanosecond).
	b = Backoff{Policy: Policy{Min: time.Second, Max: 2 * time.Minute, Rand: constRand(almostOne)}}
	ceil := time.Second
	for i := range 12 {
		got := b.Next()
		if got > ceil || got < ceil-time.Microsecond {
			t.Fatalf("rand≈1, attempt %d: %v, want ≈ %v", i, got, ceil)
		}
		ceil = min(2*ceil, 2*time.Minute)
	}
}

// Whatever Min and Max and however many attempts: the delay stays in
// [Min, Max] and, with the same random value, never shrinks.
func TestBackoffStaysWithinBounds(t *testing.T) {
	cases := []struct{ min, max time.Duration }{
		{time.Second, 2 * time.Minute},
		{time.Millisecond, time.Second},
		{1500 * time.Millisecond, 5 * time.Minute},
		{3 * time.Second, time.Hour},
		{10 * time.Second, time.Hour},
		{7 * time.Second, 24 * time.Hour},
		{time.Minute, 24 * time.Hour},
		{17*time.Second + 3*time.Nanosecond, 365 * 24 * time.Hour},
		{time.Hour, 1000 * time.Hour},
		{time.Second, time.Second},
		{1, math.MaxInt64},
		// Min << attempt overflows int64 before attempt 30 here, and wraps
		// to a value in (0, Max]: below Min (24h) or a shrinking ceiling.
		{13*time.Hour + 7*time.Minute + 59*time.Second, 24 * time.Hour},
		{17180 * time.Millisecond, 7 * 24 * time.Hour},
	}
	for _, c := range cases {
		for _, r := range []float64{0, 0.25, 0.5, 0.999, almostOne} {
			t.Run(fmt.Sprintf("%v-%v-%v", c.min, c.max, r), func(t *testing.T) {
				b := Backoff{Policy: Policy{Min: c.min, Max: c.max, Rand: constRand(r)}}
				prev := time.Duration(0)
				for i := range 200 {
					d := b.Next()
					if d < c.min || d > c.max {
						t.Fatalf("attempt %d: %v outside [%v, %v]", i, d, c.min, c.max)
					}
					if d < prev {
						t.Fatalf("attempt %d: %v after %v: the ceiling shrank", i, d, prev)
					}
					prev = d
				}
			})
		}
	}
}

func TestBackoffReset(t *testing.T) {
	b := Backoff{Policy: Policy{Min: time.Second, Max: time.Minute, Rand: constRand(almostOne)}}
	for range 10 {
		b.Next()
	}
	if got := b.Next(); got < 59*time.Second {
		t.Fatalf("after 10 attempts: %v, want ≈ Max", got)
	}
	b.Reset()
	if got := b.Next(); got != time.Second {
		t.Errorf("first attempt after Reset: %v, want Min", got)
	}
	if got := b.Next(); got < 1900*time.Millisecond || got > 2*time.Second {
		t.Errorf("second attempt after Reset: %v, want ≈ 2s", got)
	}
}

func TestBackoffUsesInjectedRand(t *testing.T) {
	seq := []float64{0.1, 0.9, 0, 0.5}
	calls := 0
	b := Backoff{Policy: Policy{Min: time.Second, Max: time.Minute, Rand: func() float64 {
		v := seq[calls%len(seq)]
		calls++
		return v
	}}}
	// Ceilings 1, 2, 4, 8 s.
	want := []time.Duration{
		time.Second,                         // 1 + 0.1*0
		time.Second + 900*time.Millisecond,  // 1 + 0.9*1
		time.Second,                         // 1 + 0*3
		time.Second + 3500*time.Millisecond, // 1 + 0.5*7
	}
	for i, w := range want {
		if got := b.Next(); got != w {
			t.Errorf("attempt %d: %v, want %v", i, got, w)
		}
	}
	if calls != len(want) {
		t.Errorf("rand called %d times for %d delays", calls, len(want))
	}
}

func TestBackoffDefaultRand(t *testing.T) {
	b := New(time.Second, 8*time.Second)
	seen := map[time.Duration]bool{}
	for i := range 200 {
		d := b.Next()
		ceil := min(time.Second<<min(i, 30), 8*time.Second)
		if d < time.Second || d > ceil {
			t.Fatalf("attempt %d: %v outside [1s, %v]", i, d, ceil)
		}
		seen[d] = true
	}
	if len(seen) < 10 {
		t.Errorf("only %d distinct delays in 200: no jitter", len(seen))
	}
}

// Delay is the same sequence as Next, by attempt number: the webhook
// deliverer's retries are counted in the database, not in a loop.
func TestDelayByAttempt(t *testing.T) {
	p := Policy{Min: 30 * time.Second, Max: time.Hour, Rand: constRand(almostOne)}
	b := Backoff{Policy: p}
	for i := range 12 {
		if d, n := p.Delay(i), b.Next(); d != n {
			t.Fatalf("attempt %d: Delay %v, Next %v", i, d, n)
		}
	}
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute,
		16 * time.Minute, 32 * time.Minute, time.Hour, time.Hour}
	for i, w := range want {
		if got := p.Delay(i); got > w || got < w-time.Microsecond {
			t.Errorf("Delay(%d) = %v, want ≈ %v at the top of its range", i, got, w)
		}
	}
}
