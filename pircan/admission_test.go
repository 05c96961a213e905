package pircan_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/internal/storetest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// The portal's per-minute limit is counted in the database, so that every
// replica shares it; the IRC face counts in memory and is never counted here.
func TestAdmit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := sharedLimits()
	l.PortalPerMinute = 3
	dsn := pgtest.Database(t) // two processes: two stores on one database
	one, err := storetest.Open(ctx, dsn)
	must(t, err)
	t.Cleanup(one.Close)
	two, err := store.Open(ctx, dsn)
	must(t, err)
	t.Cleanup(two.Close)
	a := pircan.NewService(one, pircan.Config{Limits: l}, zerolog.Nop())
	b := pircan.NewService(two, pircan.Config{Limits: l}, zerolog.Nop())

	account := unique("p")
	portal := pircan.Caller{Account: account, Face: pircan.FacePortal}
	for i := range l.PortalPerMinute {
		svc := []*pircan.Service{a, b}[i%2]
		if err := svc.Admit(ctx, portal); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	for _, svc := range []*pircan.Service{a, b} {
		err := svc.Admit(ctx, portal)
		var perr *pircan.Error
		if !errors.As(err, &perr) || perr.Code != pircan.CodeRateLimited || perr.RetryAfter <= 0 || perr.RetryAfter > l.Window {
			t.Fatalf("over the limit: %v", err)
		}
	}
	// Accounts are folded; another account has its own window.
	wantErr(t, "the same account in upper case", b.Admit(ctx, pircan.Caller{Account: "P" + account[1:], Face: pircan.FacePortal}), pircan.CodeRateLimited, "")
	if err := a.Admit(ctx, pircan.Caller{Account: unique("p"), Face: pircan.FacePortal}); err != nil {
		t.Fatalf("another account: %v", err)
	}
	// IRC is never counted here, however many.
	irc := pircan.Caller{Account: account, Face: pircan.FaceIRC, Sizes: pircan.IRCSizes}
	for range l.PortalPerMinute + 2 {
		if err := a.Admit(ctx, irc); err != nil {
			t.Fatalf("IRC admitted by the database: %v", err)
		}
	}
	var rows int
	must(t, one.Pool().QueryRow(ctx, "SELECT count(*) FROM request_windows WHERE key LIKE 'irc:%'").Scan(&rows))
	if rows != 0 {
		t.Fatalf("%d IRC request windows", rows)
	}
	// MCP has its own limit and window, apart from the portal's.
	if err := a.Admit(ctx, pircan.Caller{Account: account, Face: pircan.FaceMCP}); err != nil {
		t.Fatalf("MCP after the portal's limit: %v", err)
	}
}

// MCP and A2A count in one window per account (the flag's help and
// docs/protocol-notes.md say so): an account at its limit over one face is
// refused over the other, whichever it used first.
func TestAdmitHTTPFacesShareOneWindow(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := sharedLimits()
	l.HTTPPerMinute = 4
	svc := newServiceLimits(t, l)
	for _, first := range []pircan.Face{pircan.FaceMCP, pircan.FaceA2A} {
		account := unique("h")
		other := pircan.FaceA2A
		if first == pircan.FaceA2A {
			other = pircan.FaceMCP
		}
		for i := range l.HTTPPerMinute {
			face := []pircan.Face{first, other}[i%2]
			if err := svc.Admit(ctx, pircan.Caller{Account: account, Face: face}); err != nil {
				t.Fatalf("%s request %d over %s: %v", first, i+1, face, err)
			}
		}
		for _, face := range []pircan.Face{first, other} {
			wantErr(t, string(face)+" past the shared limit", svc.Admit(ctx, pircan.Caller{Account: account, Face: face}), pircan.CodeRateLimited, "")
		}
		// The portal keeps its own window.
		if err := svc.Admit(ctx, pircan.Caller{Account: account, Face: pircan.FacePortal}); err != nil {
			t.Fatalf("portal after the HTTP faces' limit: %v", err)
		}
	}
}

// countingStore counts the store's CountRequest calls (round trips).
type countingStore struct {
	*store.Store
	calls atomic.Int64
}

func (s *countingStore) CountRequest(ctx context.Context, key string, window time.Duration, n int) (int, time.Time, error) {
	s.calls.Add(1)
	return s.Store.CountRequest(ctx, key, window, n)
}

// A process claims requests ahead of use (leases): two processes on one
// database never admit more than the limit between them in a window, refuse
// early by at most what the other holds unused, and ask the database far
// less than once a request.
func TestAdmitLeases(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := sharedLimits()
	l.HTTPPerMinute = 100 // a lease of at most 10
	dsn := pgtest.Database(t)
	one, err := storetest.Open(ctx, dsn)
	must(t, err)
	t.Cleanup(one.Close)
	two, err := store.Open(ctx, dsn)
	must(t, err)
	t.Cleanup(two.Close)
	cs := []*countingStore{{Store: one}, {Store: two}}
	svcs := []*pircan.Service{pircan.NewService(cs[0], pircan.Config{Limits: l}, zerolog.Nop()),
		pircan.NewService(cs[1], pircan.Config{Limits: l}, zerolog.Nop())}

	c := pircan.Caller{Account: unique("m"), Face: pircan.FaceMCP}
	admitted := 0
	refused := [2]bool{}
	for i := 0; !refused[0] || !refused[1]; i++ {
		k := (i / 7) % 2 // bursts of 7 on each process in turn
		if refused[k] {
			k = 1 - k
		}
		err := svcs[k].Admit(ctx, c)
		if err == nil {
			admitted++
			continue
		}
		wantErr(t, "over the limit", err, pircan.CodeRateLimited, "")
		refused[k] = true
		if i > 1000 {
			t.Fatal("never refused")
		}
	}
	if admitted > l.HTTPPerMinute || admitted < l.HTTPPerMinute-2*9 {
		t.Fatalf("admitted %d in one window, want %d less at most what two leases of 10 hold unused",
			admitted, l.HTTPPerMinute)
	}
	var count int
	must(t, one.Pool().QueryRow(ctx, "SELECT count FROM request_windows WHERE key = $1", "http:a:"+pircan.FoldAccount(c.Account)).Scan(&count))
	if count < admitted {
		t.Fatalf("the database counted %d, fewer than the %d admitted", count, admitted)
	}
	trips := cs[0].calls.Load() + cs[1].calls.Load()
	if trips*3 > int64(admitted) {
		t.Fatalf("%d round trips for %d admitted requests", trips, admitted)
	}
	// Refused in memory until the window ends: no more round trips.
	for _, svc := range svcs {
		wantErr(t, "again", svc.Admit(ctx, c), pircan.CodeRateLimited, "")
	}
	if again := cs[0].calls.Load() + cs[1].calls.Load(); again != trips {
		t.Fatalf("%d round trips for refusals in a refused window", again-trips)
	}
	t.Logf("admitted %d of %d with %d round trips", admitted, l.HTTPPerMinute, trips)
}

// Parallel requests of one account in one process share the claim in
// flight: none strands leased requests (claimed, never admitted) or marks
// the window refused while leased requests remain, so exactly the limit is
// admitted, as sequentially.
func TestAdmitParallelOneProcess(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := sharedLimits()
	l.ForumPerMinute = 300 // leases of up to 30
	svc := pircan.NewService(shared, pircan.Config{Limits: l}, zerolog.Nop())
	c := pircan.Caller{Account: unique("p"), Face: pircan.FaceParley}
	const clients, each = 8, 40 // 320: the limit and 20 more
	var admitted, refused atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for range each {
				err := svc.Admit(ctx, c)
				if err == nil {
					admitted.Add(1)
					continue
				}
				var perr *pircan.Error
				if !errors.As(err, &perr) || perr.Code != pircan.CodeRateLimited {
					t.Errorf("admit: %v", err)
				}
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	if admitted.Load() != int64(l.ForumPerMinute) || refused.Load() != clients*each-int64(l.ForumPerMinute) {
		t.Fatalf("admitted %d, refused %d of %d; want exactly %d admitted",
			admitted.Load(), refused.Load(), clients*each, l.ForumPerMinute)
	}
}

// memoryCounter counts windows in memory, as the database does (a test of
// the lease table's bound needs many accounts, not Postgres).
type memoryCounter struct {
	*store.Store
	mu     sync.Mutex
	counts map[string]int
}

func (m *memoryCounter) CountRequest(_ context.Context, key string, window time.Duration, n int) (int, time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts[key] += n
	return m.counts[key], time.Now().Add(window), nil
}

// The lease table holds at most its bound of windows; past it a caller is
// counted one request at a time, still within its limit.
func TestAdmitLeasesBounded(t *testing.T) {
	t.Parallel()
	l := sharedLimits()
	l.HTTPPerMinute = 100
	svc := pircan.NewService(&memoryCounter{Store: shared, counts: map[string]int{}}, pircan.Config{Limits: l}, zerolog.Nop())
	const bound = 50
	svc.SetLeaseLimit(bound)
	for i := range 10 * bound {
		c := pircan.Caller{Account: fmt.Sprintf("lease-%d", i), Face: pircan.FaceMCP}
		for range 3 {
			must(t, svc.Admit(t.Context(), c))
		}
		if n := svc.Leases(); n > bound {
			t.Fatalf("%d windows held, bound %d", n, bound)
		}
	}
	// A caller beyond the table is still held to its limit.
	c := pircan.Caller{Account: "lease-beyond", Face: pircan.FaceMCP}
	admitted := 0
	for range 2 * l.HTTPPerMinute {
		if svc.Admit(t.Context(), c) == nil {
			admitted++
		}
	}
	if admitted != l.HTTPPerMinute {
		t.Fatalf("admitted %d beyond the table, want %d", admitted, l.HTTPPerMinute)
	}
}
