package bot

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

type ctxKey struct{}

// requestCtx says what context.WithTimeout with a deferred cancel says, in
// each order of asking, passing the deadline and returning.
func TestRequestCtxAsWithTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent := context.WithValue(context.WithoutCancel(context.Background()), ctxKey{}, "v")
		start := func() *requestCtx {
			return &requestCtx{parent: parent, deadline: time.Now().Add(time.Second)}
		}
		done := func(c context.Context) bool {
			select {
			case <-c.Done():
				return true
			default:
				return false
			}
		}

		r := start() // never asked for Done: no timer, yet the deadline holds
		if d, ok := r.Deadline(); !ok || !d.Equal(r.deadline) || r.Err() != nil || r.Value(ctxKey{}) != "v" {
			t.Fatalf("fresh: deadline %v %v, err %v, value %v", d, ok, r.Err(), r.Value(ctxKey{}))
		}
		time.Sleep(2 * time.Second)
		if !errors.Is(r.Err(), context.DeadlineExceeded) || !done(r) || context.Cause(r) != context.DeadlineExceeded {
			t.Fatalf("past the deadline: %v, done %v", r.Err(), done(r))
		}
		r.release()
		if !errors.Is(r.Err(), context.DeadlineExceeded) {
			t.Fatalf("released after its deadline: %v", r.Err())
		}

		r = start() // a query waits on it, and a child follows it
		child, stop := context.WithCancel(r)
		defer stop()
		fired := make(chan struct{})
		context.AfterFunc(r, func() { close(fired) })
		if done(r) || done(child) {
			t.Fatal("done before its deadline")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if !done(child) || !errors.Is(child.Err(), context.DeadlineExceeded) {
			t.Fatalf("child past the deadline: %v", child.Err())
		}
		select {
		case <-fired:
		default:
			t.Fatal("AfterFunc did not run at the deadline")
		}

		for _, ask := range []bool{false, true} { // returned before its deadline, Done asked or not
			r = start()
			if ask {
				_ = r.Done()
			}
			child, stop := context.WithCancel(r)
			r.release()
			synctest.Wait()
			if !errors.Is(r.Err(), context.Canceled) || !done(r) || !done(child) {
				t.Fatalf("asked %v, released: %v, done %v, child %v", ask, r.Err(), done(r), child.Err())
			}
			time.Sleep(2 * time.Second)
			if !errors.Is(r.Err(), context.Canceled) {
				t.Fatalf("asked %v, released, then past the deadline: %v", ask, r.Err())
			}
			stop()
		}
	})
}

// A request that never waits makes no timer: its context allocates nothing.
func TestRequestCtxUnarmedAllocatesNothing(t *testing.T) {
	r := &requestCtx{parent: context.Background()}
	if n := testing.AllocsPerRun(100, func() {
		*r = requestCtx{parent: context.Background(), deadline: time.Now().Add(time.Second)}
		_ = r.Err()
		r.release()
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
