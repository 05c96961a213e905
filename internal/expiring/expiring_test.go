package expiring

import (
	"fmt"
	"testing"
	"time"
)

// testClock is a settable clock: a table is given its time on each call.
type testClock struct{ t time.Time }

func newTestClock() *testClock {
	return &testClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *testClock) now() time.Time          { return c.t }
func (c *testClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestExpiringCapAndOrder(t *testing.T) {
	c := newTestClock()
	e := New[int](time.Minute, 3)
	for i := range 3 {
		if _, ok := e.Put(fmt.Sprint(i), i, c.now()); !ok {
			t.Fatalf("put %d refused below the cap", i)
		}
		c.advance(10 * time.Second)
	}
	if _, ok := e.Put("x", 9, c.now()); ok {
		t.Fatal("put beyond the cap accepted")
	}
	if e.Len() != 3 {
		t.Fatalf("len %d, want 3", e.Len())
	}
	if v, ok := e.Get("1", c.now()); !ok || *v != 1 {
		t.Fatalf("get 1 = %v %v", v, ok)
	}
	// t0+60s: "0" (put at t0) has expired; "1" and "2" have not.
	c.advance(30 * time.Second)
	if _, ok := e.Get("0", c.now()); ok {
		t.Error("an entry outlived its ttl")
	}
	if _, ok := e.Put("x", 9, c.now()); !ok {
		t.Error("put refused though an entry had expired")
	}
	if _, ok := e.Get("1", c.now()); !ok {
		t.Error(`"1" dropped before its ttl`)
	}
	if _, ok := e.Put("y", 9, c.now()); ok {
		t.Error("put beyond the cap accepted once full again")
	}
}

// A table of many expired entries is emptied a few entries per call, and
// an expired entry the front has not reached yet is never returned.
func TestExpiringExpiresInO1PerCall(t *testing.T) {
	c := newTestClock()
	const n = 10000
	e := New[int](time.Minute, n)
	for i := range n {
		e.Put(fmt.Sprint(i), i, c.now())
	}
	c.advance(time.Minute)
	if _, ok := e.Get(fmt.Sprint(n-1), c.now()); ok {
		t.Fatal("the newest expired entry was returned")
	}
	if got := e.Len(); got < n-expirePerCall-1 {
		t.Fatalf("one call dropped %d entries, want at most %d", n-got, expirePerCall+1)
	}
	calls := 0
	for e.Len() > 0 {
		e.Get("absent", c.now())
		calls++
		if calls > n {
			t.Fatal("expired entries never all dropped")
		}
	}
	if want := (n - expirePerCall - 1) / expirePerCall; calls < want {
		t.Errorf("emptied in %d calls, want at least %d (at most %d per call)", calls, want, expirePerCall)
	}
}
