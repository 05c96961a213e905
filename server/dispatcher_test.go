package server

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hangGuard fails the test if ch does not deliver in a long while: it only
// catches deadlocks, it measures nothing.
func hangGuard[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("stuck waiting for %s", what)
		var zero T
		return zero
	}
}

func waitDone(t *testing.T, d *dispatcher) {
	t.Helper()
	done := make(chan struct{})
	go func() { d.wait(); close(done) }()
	hangGuard(t, done, "wait()")
}

func TestDispatcherKeepsOrderPerKey(t *testing.T) {
	d := newDispatcher(4)
	var mu sync.Mutex
	got := map[string][]int{}
	keys := []string{"a:alice", "a:bob", "n:carol", "n:dave"}
	for i := range 400 {
		key := keys[i%len(keys)]
		seq := i / len(keys)
		d.submit(key, func() {
			mu.Lock()
			got[key] = append(got[key], seq)
			mu.Unlock()
		})
	}
	waitDone(t, d)
	for _, key := range keys {
		if len(got[key]) != 100 {
			t.Errorf("%s: %d jobs ran, want 100", key, len(got[key]))
		}
		if !slices.IsSorted(got[key]) {
			t.Errorf("%s: jobs ran out of order: %v", key, got[key])
		}
	}
}

// One key's jobs never overlap, even when a job is slow to finish and more
// are submitted meanwhile.
func TestDispatcherNoOverlapWithinKey(t *testing.T) {
	d := newDispatcher(8)
	var running, overlaps atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	d.submit("k", func() {
		running.Add(1)
		started <- struct{}{}
		<-release
		running.Add(-1)
	})
	hangGuard(t, started, "first job")
	var order []int
	var mu sync.Mutex
	for i := range 50 {
		d.submit("k", func() {
			if running.Add(1) != 1 {
				overlaps.Add(1)
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			running.Add(-1)
		})
	}
	close(release)
	waitDone(t, d)
	if overlaps.Load() != 0 {
		t.Errorf("%d jobs of one key overlapped", overlaps.Load())
	}
	if len(order) != 50 || !slices.IsSorted(order) {
		t.Errorf("order %v", order)
	}
}

// Jobs of different keys run at the same time: each of these waits for the
// other to start, which can only finish if they run concurrently.
func TestDispatcherRunsKeysConcurrently(t *testing.T) {
	d := newDispatcher(2)
	aStarted, bStarted := make(chan struct{}), make(chan struct{})
	// Jobs run on the dispatcher's goroutines, so they report with Error.
	await := func(ch <-chan struct{}, what string) {
		select {
		case <-ch:
		case <-time.After(20 * time.Second):
			t.Errorf("stuck waiting for %s: keys do not run concurrently", what)
		}
	}
	d.submit("a", func() {
		close(aStarted)
		await(bStarted, "b to start while a runs")
	})
	d.submit("b", func() {
		close(bStarted)
		await(aStarted, "a to start while b runs")
	})
	waitDone(t, d)
}

// A slow job of one key does not hold up another key's queue.
func TestDispatcherSlowKeyDoesNotBlockOthers(t *testing.T) {
	d := newDispatcher(2)
	release := make(chan struct{})
	d.submit("slow", func() { <-release })
	d.submit("slow", func() {})
	fast := make(chan int, 10)
	for i := range 10 {
		d.submit("fast", func() { fast <- i })
	}
	for i := range 10 {
		if got := hangGuard(t, fast, "fast jobs while slow blocks"); got != i {
			t.Fatalf("fast job %d ran as %d", i, got)
		}
	}
	close(release)
	waitDone(t, d)
}

func TestDispatcherLimitsWorkers(t *testing.T) {
	const workers, jobs = 3, 30
	d := newDispatcher(workers)
	var inFlight, peak atomic.Int32
	started := make(chan int, jobs)
	release := make(chan struct{})
	for i := range jobs {
		d.submit(fmt.Sprintf("key%d", i), func() {
			n := inFlight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			started <- i
			<-release
			inFlight.Add(-1)
		})
	}
	// workers jobs start; every other job waits for a free worker.
	for range workers {
		hangGuard(t, started, "the first jobs to start")
	}
	if n := inFlight.Load(); n != workers {
		t.Fatalf("%d jobs running, want %d", n, workers)
	}
	// Free one worker at a time: each release lets exactly one more start.
	for range jobs - workers {
		release <- struct{}{}
		hangGuard(t, started, "the next job to start")
		if n := inFlight.Load(); n > workers {
			t.Fatalf("%d jobs running at once, limit %d", n, workers)
		}
	}
	close(release)
	waitDone(t, d)
	if p := peak.Load(); p != workers {
		t.Errorf("peak concurrency %d, want %d", p, workers)
	}
}

// The same holds when keys carry several jobs each.
func TestDispatcherLimitsWorkersManyJobsPerKey(t *testing.T) {
	const workers = 2
	d := newDispatcher(workers)
	var inFlight, peak atomic.Int32
	for k := range 8 {
		for range 25 {
			d.submit(fmt.Sprintf("k%d", k), func() {
				n := inFlight.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				for range 100 {
					runtime.Gosched() // keep the job running a little while
				}
				inFlight.Add(-1)
			})
		}
	}
	waitDone(t, d)
	if p := peak.Load(); p > workers {
		t.Errorf("peak concurrency %d, limit %d", p, workers)
	}
}

func TestDispatcherWaitReturnsAfterAllJobs(t *testing.T) {
	d := newDispatcher(3)
	var done atomic.Int32
	release := make(chan struct{})
	for i := range 60 {
		d.submit(fmt.Sprintf("k%d", i%7), func() {
			if i == 0 {
				<-release
			}
			done.Add(1)
		})
	}
	waited := make(chan int32)
	go func() {
		d.wait()
		waited <- done.Load()
	}()
	// wait() cannot return while job 0 is held.
	select {
	case n := <-waited:
		t.Fatalf("wait() returned with job 0 still running (%d done)", n)
	default:
	}
	close(release)
	if n := hangGuard(t, waited, "wait()"); n != 60 {
		t.Errorf("wait() returned after %d of 60 jobs", n)
	}
	// wait() with nothing submitted returns at once.
	waitDone(t, newDispatcher(1))
}

// A job may submit more work (a reply that triggers a follow-up): wait()
// covers it, since it is submitted before the job finishes.
func TestDispatcherWaitCoversJobsSubmittedByJobs(t *testing.T) {
	d := newDispatcher(2)
	var mu sync.Mutex
	var got []string
	d.submit("a", func() {
		d.submit("a", func() {
			mu.Lock()
			got = append(got, "a2")
			mu.Unlock()
		})
		d.submit("b", func() {
			mu.Lock()
			got = append(got, "b1")
			mu.Unlock()
		})
		mu.Lock()
		got = append(got, "a1")
		mu.Unlock()
	})
	waitDone(t, d)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 || got[0] != "a1" || !slices.Contains(got, "a2") || !slices.Contains(got, "b1") {
		t.Errorf("jobs ran %v", got)
	}
	if slices.Index(got, "a2") < slices.Index(got, "a1") {
		t.Errorf("a2 overtook a1: %v", got)
	}
}

// Keys come and go: a key whose queue ran dry is started again by the next
// submit, and the map does not keep idle keys.
func TestDispatcherForgetsIdleKeys(t *testing.T) {
	d := newDispatcher(4)
	for round := range 3 {
		var n atomic.Int32
		for i := range 100 {
			d.submit(fmt.Sprintf("k%d", i), func() { n.Add(1) })
		}
		waitDone(t, d)
		if n.Load() != 100 {
			t.Fatalf("round %d: %d of 100 jobs ran", round, n.Load())
		}
	}
	// The drainers delete their key after the last job's Done; give them
	// the lock in turn until they have.
	deadline := time.Now().Add(20 * time.Second)
	for {
		d.mu.Lock()
		left := len(d.queues)
		d.mu.Unlock()
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d idle keys still in the map", left)
		}
		time.Sleep(time.Millisecond)
	}
}
