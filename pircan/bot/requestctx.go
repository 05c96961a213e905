package bot

import (
	"context"
	"sync"
	"time"
)

// requestCtx is a request's context: what context.WithTimeout(parent, d)
// with a deferred cancel gives, except that its timer is made only when
// something asks for Done (a query, a wait): most requests (WHOAMI from
// the agent cache) never do, and the timer, its context and their
// allocations were a tenth of what a request allocated. parent has no
// deadline and is never done (Run's context without its cancellation).
type requestCtx struct {
	parent   context.Context
	deadline time.Time
	mu       sync.Mutex
	armed    context.Context // WithDeadline(parent, deadline), once asked for
	cancel   context.CancelFunc
	released bool // the request has returned: cancelled, as by a deferred cancel
}

func (r *requestCtx) Deadline() (time.Time, bool) { return r.deadline, true }

func (r *requestCtx) Value(key any) any { return r.parent.Value(key) }

func (r *requestCtx) Done() <-chan struct{} { return r.arm().Done() }

func (r *requestCtx) Err() error {
	r.mu.Lock()
	armed, released := r.armed, r.released
	r.mu.Unlock()
	switch {
	case armed != nil:
		return armed.Err()
	case released:
		return context.Canceled
	case !time.Now().Before(r.deadline):
		return context.DeadlineExceeded
	}
	return nil
}

// AfterFunc lets context.AfterFunc and the contexts derived from this one
// (context.WithCancel, WithTimeout) follow it without a goroutine each.
func (r *requestCtx) AfterFunc(f func()) (stop func() bool) { return context.AfterFunc(r.arm(), f) }

func (r *requestCtx) String() string { return "bot.requestCtx" }

// arm makes the context with the timer, once.
func (r *requestCtx) arm() context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.armed != nil:
	case r.released: // cancelled before its deadline, as it stays
		r.armed, r.cancel = context.WithCancel(r.parent)
		r.cancel()
	default:
		r.armed, r.cancel = context.WithDeadline(r.parent, r.deadline)
	}
	return r.armed
}

// release ends the context (the request returned): Err says Canceled from
// now on, unless the deadline had passed, and Done is closed.
func (r *requestCtx) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.released && r.armed == nil && !time.Now().Before(r.deadline) {
		r.armed, r.cancel = context.WithDeadline(r.parent, r.deadline) // past: DeadlineExceeded, as the timer would say
	}
	r.released = true
	if r.cancel != nil {
		r.cancel()
	}
}
