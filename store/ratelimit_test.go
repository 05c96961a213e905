package store_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/store"
)

// The request windows are timed by the database clock: a window is ended
// by moving its row into the past with UPDATE, never by sleeping.

// openWindowStores opens n stores (n pools, as n processes would) on one
// fresh, migrated database.
func openWindowStores(tb testing.TB, n int) []*store.Store {
	tb.Helper()
	ctx := context.Background()
	dsn := pgtest.Database(tb)
	out := make([]*store.Store, n)
	for i := range out {
		s, err := store.Open(ctx, dsn)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(s.Close)
		out[i] = s
	}
	if _, err := out[0].Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	return out
}

func countRequest(t *testing.T, s *store.Store, key string, window time.Duration) (int, time.Time) {
	t.Helper()
	n, ends, err := s.CountRequest(context.Background(), key, window, 1)
	if err != nil {
		t.Fatalf("CountRequest %q: %v", key, err)
	}
	return n, ends
}

func execSQL(t *testing.T, s *store.Store, sql string, args ...any) {
	t.Helper()
	if _, err := s.Pool().Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func TestCountRequestCountsWithinWindow(t *testing.T) {
	s := openWindowStores(t, 1)[0]
	var first time.Time
	for want := 1; want <= 3; want++ {
		n, ends := countRequest(t, s, "k", time.Minute)
		if n != want {
			t.Fatalf("count %d, want %d", n, want)
		}
		if want == 1 {
			first = ends
		} else if !ends.Equal(first) {
			t.Fatalf("request %d: window ends %v, want the first request's %v", want, ends, first)
		}
	}
	var length time.Duration
	if err := s.Pool().QueryRow(context.Background(),
		"SELECT ends - started FROM request_windows WHERE key = 'k'").Scan(&length); err != nil {
		t.Fatal(err)
	}
	if length != time.Minute {
		t.Fatalf("window is %v long, want 1m", length)
	}
}

func TestCountRequestRestartsEndedWindow(t *testing.T) {
	s := openWindowStores(t, 1)[0]
	for range 5 {
		countRequest(t, s, "k", time.Minute)
	}
	execSQL(t, s, "UPDATE request_windows SET started = now() - interval '2 minutes', ends = now() - interval '1 minute'")
	n, ends := countRequest(t, s, "k", time.Minute)
	if n != 1 {
		t.Fatalf("count %d after the window ended, want 1", n)
	}
	if n, again := countRequest(t, s, "k", time.Minute); n != 2 || !again.Equal(ends) {
		t.Fatalf("next request: count %d ends %v, want 2 in the restarted window ending %v", n, again, ends)
	}
}

// Several requests counted at once (a process's lease) count as that many,
// in a window that starts or restarts with them; none is refused.
func TestCountRequestSeveralAtOnce(t *testing.T) {
	s := openWindowStores(t, 1)[0]
	ctx := context.Background()
	n, ends, err := s.CountRequest(ctx, "k", time.Minute, 5)
	if err != nil || n != 5 {
		t.Fatalf("first 5: count %d, %v; want 5", n, err)
	}
	if n, again, err := s.CountRequest(ctx, "k", time.Minute, 3); err != nil || n != 8 || !again.Equal(ends) {
		t.Fatalf("3 more: count %d ends %v, %v; want 8 in the window ending %v", n, again, err, ends)
	}
	execSQL(t, s, "UPDATE request_windows SET started = now() - interval '2 minutes', ends = now() - interval '1 minute'")
	if n, _, err := s.CountRequest(ctx, "k", time.Minute, 4); err != nil || n != 4 {
		t.Fatalf("4 after the window ended: count %d, %v; want 4", n, err)
	}
	if _, _, err := s.CountRequest(ctx, "k", time.Minute, 0); err == nil {
		t.Fatal("counting 0 requests accepted")
	}
}

func TestCountRequestKeysAreIndependent(t *testing.T) {
	s := openWindowStores(t, 1)[0]
	countRequest(t, s, "mcp:a:alice", time.Minute)
	countRequest(t, s, "mcp:a:alice", time.Minute)
	if n, _ := countRequest(t, s, "mcp:a:bob", time.Minute); n != 1 {
		t.Fatalf("bob's first request counts %d, want 1", n)
	}
	if n, _ := countRequest(t, s, "mcp:a:alice", time.Minute); n != 3 {
		t.Fatalf("alice's third request counts %d, want 3", n)
	}
	// Ending one key's window leaves the other's alone.
	execSQL(t, s, "UPDATE request_windows SET started = now() - interval '2 minutes', ends = now() - interval '1 minute' WHERE key = 'mcp:a:bob'")
	if n, _ := countRequest(t, s, "mcp:a:alice", time.Minute); n != 4 {
		t.Fatalf("alice's fourth request counts %d, want 4", n)
	}
	if n, _ := countRequest(t, s, "mcp:a:bob", time.Minute); n != 1 {
		t.Fatalf("bob's request after his window ended counts %d, want 1", n)
	}
}

func TestCountRequestSharedAcrossPools(t *testing.T) {
	ss := openWindowStores(t, 2)
	for want := 1; want <= 4; want++ {
		if n, _ := countRequest(t, ss[want%2], "k", time.Minute); n != want {
			t.Fatalf("request %d through pool %d counts %d", want, want%2, n)
		}
	}
}

// Concurrent requests on one key, from two pools, each get a distinct
// count: exactly 1…N*M, none lost, none twice.
func TestCountRequestConcurrentNoLostUpdate(t *testing.T) {
	const goroutines, each = 8, 25
	ss := openWindowStores(t, 2)
	counts := make([][]int, goroutines)
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			s := ss[g%2]
			for range each {
				n, _, err := s.CountRequest(context.Background(), "hot", time.Hour, 1)
				if err != nil {
					errs <- err
					return
				}
				counts[g] = append(counts[g], n)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all := slices.Concat(counts...)
	slices.Sort(all)
	if len(all) != goroutines*each {
		t.Fatalf("%d counts, want %d", len(all), goroutines*each)
	}
	for i, n := range all {
		if n != i+1 {
			t.Fatalf("sorted counts[%d] = %d, want %d (lost or repeated update)", i, n, i+1)
		}
	}
}

func TestCountRequestRejectsSubMicrosecondWindow(t *testing.T) {
	s := openWindowStores(t, 1)[0]
	for _, w := range []time.Duration{0, -time.Second, 999 * time.Nanosecond} {
		if _, _, err := s.CountRequest(context.Background(), "k", w, 1); err == nil {
			t.Fatalf("window %v accepted", w)
		}
	}
}

func TestPruneRequestWindowsDeletesOnlyEnded(t *testing.T) {
	s := openWindowStores(t, 1)[0]
	ctx := context.Background()
	for _, k := range []string{"old1", "old2", "live1", "live2"} {
		countRequest(t, s, k, time.Hour)
	}
	execSQL(t, s, "UPDATE request_windows SET started = now() - interval '2 hours', ends = now() - interval '1 hour' WHERE key LIKE 'old%'")
	n, err := s.PruneRequestWindows(ctx, time.Now())
	if err != nil || n != 2 {
		t.Fatalf("prune: %d, %v; want 2 deleted", n, err)
	}
	var left []string
	rows, err := s.Pool().Query(ctx, "SELECT key FROM request_windows ORDER BY key")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		left = append(left, k)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(left, []string{"live1", "live2"}) {
		t.Fatalf("left %v, want the live windows", left)
	}
	if n, _ := countRequest(t, s, "live1", time.Hour); n != 2 {
		t.Fatalf("live1 counts %d after the prune, want 2 (kept)", n)
	}
}

func TestPruneRequestWindowsIsBounded(t *testing.T) {
	s := openWindowStores(t, 1)[0]
	ctx := context.Background()
	execSQL(t, s, `INSERT INTO request_windows (key, started, ends, count)
		SELECT 'k' || g, now() - interval '2 minutes', now() - interval '1 minute', 1
		FROM generate_series(1, $1::int) AS g`, store.PruneBatch+3)
	for _, want := range []int{store.PruneBatch, 3, 0} {
		if n, err := s.PruneRequestWindows(ctx, time.Now()); err != nil || n != want {
			t.Fatalf("prune: %d, %v; want %d", n, err, want)
		}
	}
}

// BenchmarkCountRequest counts requests, each goroutine on its own key (no
// row contention: the cost of the statement itself); the floor is the
// round trip of SELECT 1 through the same kind of pool, in the same run.
//
//	go test -run '^$' -bench CountRequest -benchtime 2s ./store/
func BenchmarkCountRequest(b *testing.B) {
	s := openWindowStores(b, 1)[0]
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		key := fmt.Sprintf("bench:%d", next.Add(1))
		for pb.Next() {
			if _, _, err := s.CountRequest(context.Background(), key, time.Minute, 1); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkCountRequestFloor(b *testing.B) {
	s := openWindowStores(b, 1)[0]
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			ctx, cancel := context.WithTimeout(context.Background(), store.QueryTimeout)
			var one int
			err := s.Pool().QueryRow(ctx, "SELECT 1").Scan(&one)
			cancel()
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
}
