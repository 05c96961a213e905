package pircan

import (
	"context"
	"sync"
	"time"

	"github.com/creatimus/pircan/internal/expiring"
)

// Per-minute request limits of the HTTP faces: the portal's, and one
// window per account that MCP and A2A share (an account is one client of
// the HTTP API whichever protocol it speaks, so speaking both does not
// double its share). Those faces run as many replicas as needed, so the
// window of a caller lives in the database, where every replica counts it
// (Store.CountRequest).
// The IRC face keeps its windows in memory (pircan/irc/limits.go): exactly
// one process holds the IRC connection (the leader lock), so every IRC
// request passes through the one table.
//
// A round trip per request was a third of an MCP call's cost, so a process
// counts requests in the database ahead of use: it claims several of a
// window's requests at once (a lease) and admits from them in memory until
// they are used up, then claims again. The database's count is the sum of
// every replica's claims, so the limit still holds across replicas: no
// window ever admits more than the limit. What a lease costs is the other
// way: a replica may hold claimed requests it does not use, by which another
// replica refuses early, at most maxLease(limit)-1 a replica, a tenth of the
// limit. A lease grows with the caller's use in the window (1, 2, 4, …): a
// caller of one request a minute costs one round trip a request as before,
// a busy one ~limit/10 a window. A window refused is refused in memory until
// it ends (the database counted the limit already; only its end restarts it).
// A process has one claim in flight per window: parallel requests of one
// account wait for it and serve from its lease, so none strands a lease of
// its own or refuses while the process still holds leased requests.

// RequestCounter counts n requests of key at once in its fixed window,
// shared by every process: the count so far in the window, these n
// included, and when it ends.
type RequestCounter interface {
	CountRequest(ctx context.Context, key string, window time.Duration, n int) (count int, ends time.Time, err error)
}

// admissions is a process's leases: per window key, what it claimed and
// has not admitted yet. Bounded: at most maxLeases windows; past that a
// caller is counted one request at a time, as without leases.
type admissions struct {
	mu       sync.Mutex
	leases   *expiring.Table[lease]
	claiming map[string]chan struct{} // per window key, the claim in flight: closed when it ends
}

type lease struct {
	ends time.Time // the window's end, by the database's clock
	left int       // claimed and not admitted yet
	used int       // admitted by this process in this window
	full bool      // the window refused: refuse until it ends
}

// maxLeases bounds the lease table (a few dozen bytes each).
const maxLeases = 20_000

// maxLease is the most requests one claim takes: a tenth of the limit, at
// most 64 (1 under a limit of 10 or less: exactly as without leases).
func maxLease(limit int) int { return min(max(limit/10, 1), 64) }

func newAdmissions(window time.Duration) *admissions {
	return &admissions{leases: expiring.New[lease](window, maxLeases), claiming: map[string]chan struct{}{}}
}

// Admit counts one request of the caller in its face's window and refuses
// it (rate_limited, with RetryAfter) over that window's per-minute limit.
// Not an operation: the door that every operation's request passes first.
func (s *Service) Admit(ctx context.Context, c Caller) error {
	limit, window := s.cfg.Limits.perMinute(c.Face)
	if limit <= 0 || s.counter == nil {
		return nil
	}
	key := window + ":a:" + FoldAccount(c.Account)
	a := s.admissions
	for {
		now := time.Now() // the windows end by the database's clock, a real one
		a.mu.Lock()
		l, ok := a.leases.Get(key, now)
		if ok && now.Before(l.ends) {
			if l.full {
				ends := l.ends
				a.mu.Unlock()
				return rateLimited(limit, ends.Sub(now))
			}
			if l.left > 0 {
				l.left--
				l.used++
				a.mu.Unlock()
				return nil
			}
		}
		// One claim in flight per window: a request that finds one waits
		// for it and serves from its lease. Parallel claims of one process
		// would over-claim near the limit, and a refused one would mark the
		// window full while another's lease still held requests.
		if wait, busy := a.claiming[key]; busy {
			a.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		want := 1
		if ok && now.Before(l.ends) {
			want = min(max(l.used, 1), maxLease(limit))
		}
		done := make(chan struct{})
		a.claiming[key] = done
		a.mu.Unlock()
		return s.claim(ctx, key, limit, want, done)
	}
}

// claim counts want requests of key in the database, admits one and keeps
// the rest as the window's lease; it ends the claim in flight (done).
func (s *Service) claim(ctx context.Context, key string, limit, want int, done chan struct{}) error {
	a := s.admissions
	count, ends, err := s.counter.CountRequest(ctx, key, s.cfg.Limits.Window, want)
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.claiming, key)
	close(done)
	if err != nil {
		return err
	}
	// The window held count-want before this claim (0 when it restarted
	// with it: count is then want).
	granted := min(max(limit-(count-want), 0), want)
	now := time.Now()
	l, ok := a.leases.Get(key, now)
	if !ok || !l.ends.Equal(ends) { // a new window (or the first claim)
		// A window lives at most Limits.Window from now: the table's ttl.
		if l, ok = a.leases.Put(key, lease{ends: ends}, now); !ok {
			if granted == 0 {
				return rateLimited(limit, ends.Sub(now))
			}
			return nil // table full: the rest of this claim is not kept
		}
	}
	if granted == 0 {
		l.full = true
		return rateLimited(limit, ends.Sub(now))
	}
	l.left += granted - 1
	l.used++
	return nil
}

func rateLimited(limit int, retry time.Duration) error {
	e := Errorf(CodeRateLimited, "At most %d requests per minute; try again in a moment.", limit)
	e.RetryAfter = max(retry, 0)
	return e
}

// perMinute is the per-minute request limit of a face (0: none here) and
// the name of the window it counts in: MCP and A2A count in one, "http".
func (l Limits) perMinute(f Face) (int, string) {
	switch f {
	case FacePortal:
		return l.PortalPerMinute, string(FacePortal)
	case FaceMCP, FaceA2A:
		return l.HTTPPerMinute, "http"
	case FaceParley:
		// The forum's own window: its 600 a minute are the reference's.
		return l.ForumPerMinute, string(FaceParley)
	}
	return 0, ""
}
