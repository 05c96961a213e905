package bot

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The tests run in synctest bubbles: synctest.Wait returns once every
// goroutine of the dispatcher has run as far as it can, so "nothing more
// happens" is checked exactly, without sleeping; a deadlock fails the test.

func TestDispatcherKeepsOrderPerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDispatcher(4, 1000)
		defer d.stop()
		var mu sync.Mutex
		got := map[string][]int{}
		keys := []string{"a:alice", "a:bob", "n:carol", "n:dave"}
		for i := range 400 {
			key := keys[i%len(keys)]
			seq := i / len(keys)
			d.submit(key, false, func() {
				mu.Lock()
				got[key] = append(got[key], seq)
				mu.Unlock()
			})
		}
		d.wait()
		for _, key := range keys {
			if len(got[key]) != 100 {
				t.Errorf("%s: %d jobs ran, want 100", key, len(got[key]))
			}
			if !slices.IsSorted(got[key]) {
				t.Errorf("%s: jobs ran out of order: %v", key, got[key])
			}
		}
	})
}

// One key's jobs never overlap, even when a job is slow and more are
// submitted meanwhile.
func TestDispatcherNoOverlapWithinKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDispatcher(8, 1000)
		defer d.stop()
		var running, overlaps atomic.Int32
		release := make(chan struct{})
		d.submit("k", false, func() {
			running.Add(1)
			<-release
			running.Add(-1)
		})
		var mu sync.Mutex
		var order []int
		for i := range 50 {
			d.submit("k", false, func() {
				if running.Add(1) != 1 {
					overlaps.Add(1)
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				running.Add(-1)
			})
		}
		synctest.Wait()
		mu.Lock()
		early := len(order)
		mu.Unlock()
		if early != 0 {
			t.Errorf("%d jobs of the key ran while its first job was still running", early)
		}
		close(release)
		d.wait()
		if overlaps.Load() != 0 {
			t.Errorf("%d jobs of one key overlapped", overlaps.Load())
		}
		if len(order) != 50 || !slices.IsSorted(order) {
			t.Errorf("order %v", order)
		}
	})
}

// Jobs of different keys run at the same time: each waits for the other to
// start, which completes only if they run concurrently.
func TestDispatcherRunsKeysConcurrently(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDispatcher(2, 1000)
		defer d.stop()
		aStarted, bStarted := make(chan struct{}), make(chan struct{})
		d.submit("a", false, func() {
			close(aStarted)
			<-bStarted
		})
		d.submit("b", false, func() {
			close(bStarted)
			<-aStarted
		})
		d.wait() // a deadlock here fails the bubble
	})
}

// A blocked job of one key does not hold up another key.
func TestDispatcherSlowKeyDoesNotBlockOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDispatcher(2, 1000)
		defer d.stop()
		release := make(chan struct{})
		var slowDone atomic.Bool
		d.submit("slow", false, func() { <-release })
		d.submit("slow", false, func() { slowDone.Store(true) })
		var fast []int
		var mu sync.Mutex
		for i := range 10 {
			d.submit("fast", false, func() {
				mu.Lock()
				fast = append(fast, i)
				mu.Unlock()
			})
		}
		synctest.Wait()
		mu.Lock()
		if len(fast) != 10 || !slices.IsSorted(fast) {
			t.Errorf("fast jobs while slow blocks: %v", fast)
		}
		mu.Unlock()
		if slowDone.Load() {
			t.Errorf("the slow key's second job overtook its first")
		}
		close(release)
		d.wait()
		if !slowDone.Load() {
			t.Errorf("wait() returned before the slow key's second job")
		}
	})
}

func TestDispatcherLimitsWorkers(t *testing.T) {
	for _, workers := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const jobs = 30
				d := newDispatcher(workers, 1000)
				defer d.stop()
				var inFlight, started atomic.Int32
				release := make(chan struct{})
				for i := range jobs {
					d.submit(fmt.Sprintf("key%d", i%20), false, func() {
						inFlight.Add(1)
						started.Add(1)
						<-release
						inFlight.Add(-1)
					})
				}
				synctest.Wait()
				if n := inFlight.Load(); n != int32(workers) {
					t.Fatalf("%d jobs running with every goroutine blocked, want exactly %d", n, workers)
				}
				// Free one worker at a time: each release lets exactly one
				// more job start, never more than workers at once.
				for i := range jobs - workers {
					release <- struct{}{}
					synctest.Wait()
					if n, s := inFlight.Load(), started.Load(); n != int32(workers) || s != int32(workers+i+1) {
						t.Fatalf("after %d releases: %d running, %d started; want %d, %d", i+1, n, s, workers, workers+i+1)
					}
				}
				close(release)
				d.wait()
				if s := started.Load(); s != jobs {
					t.Errorf("%d of %d jobs ran", s, jobs)
				}
			})
		})
	}
}

func TestDispatcherWaitReturnsAfterAllJobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDispatcher(3, 1000)
		defer d.stop()
		var done atomic.Int32
		release := make(chan struct{})
		for i := range 60 {
			d.submit(fmt.Sprintf("k%d", i%7), false, func() {
				if i == 59 { // the last job of its key, and of all
					<-release
				}
				done.Add(1)
			})
		}
		var returned atomic.Bool
		waited := make(chan int32, 1)
		go func() {
			d.wait()
			returned.Store(true)
			waited <- done.Load()
		}()
		synctest.Wait()
		if returned.Load() {
			t.Fatalf("wait() returned while job 59 was still running; %d done", done.Load())
		}
		if n := done.Load(); n != 59 {
			t.Errorf("%d jobs done while job 59 is held, want 59", n)
		}
		close(release)
		if n := <-waited; n != 60 {
			t.Errorf("wait() returned after %d of 60 jobs", n)
		}
		// wait() with nothing submitted returns at once.
		newDispatcher(1, 1000).wait()
	})
}

// A job may submit more work: wait() covers it, since it is submitted
// before the job finishes.
func TestDispatcherWaitCoversJobsSubmittedByJobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDispatcher(2, 1000)
		defer d.stop()
		var mu sync.Mutex
		var got []string
		add := func(s string) {
			mu.Lock()
			got = append(got, s)
			mu.Unlock()
		}
		d.submit("a", false, func() {
			d.submit("a", false, func() { add("a2") })
			d.submit("b", false, func() { add("b1") })
			add("a1")
		})
		d.wait()
		mu.Lock()
		defer mu.Unlock()
		if len(got) != 3 || got[0] != "a1" && got[1] != "a1" || !slices.Contains(got, "a2") || !slices.Contains(got, "b1") {
			t.Errorf("jobs ran %v", got)
		}
		if slices.Index(got, "a2") < slices.Index(got, "a1") {
			t.Errorf("a2 overtook a1: %v", got)
		}
	})
}

// A key whose queue ran dry is started again by the next submit, and the
// map keeps no idle keys.
func TestDispatcherForgetsIdleKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDispatcher(4, 1000)
		defer d.stop()
		for round := range 3 {
			var n atomic.Int32
			for i := range 100 {
				d.submit(fmt.Sprintf("k%d", i), false, func() { n.Add(1) })
			}
			d.wait()
			if n.Load() != 100 {
				t.Fatalf("round %d: %d of 100 jobs ran", round, n.Load())
			}
			synctest.Wait() // the drainers finish after their last job's Done
			d.mu.Lock()
			left := len(d.queues)
			d.mu.Unlock()
			if left != 0 {
				t.Fatalf("round %d: %d idle keys still in the map", round, left)
			}
		}
	})
}

// One sender queues at most perSender jobs: the next is refused, told
// once, then quietly, until its queue has run dry.
func TestDispatcherBoundsEachSender(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDispatcher(2, 3)
		defer d.stop()
		release := make(chan struct{})
		var ran atomic.Int32
		for i := range 3 {
			if got := d.submit("a:alice", false, func() { <-release; ran.Add(1) }); got != accepted {
				t.Fatalf("job %d: %v, want accepted", i, got)
			}
		}
		synctest.Wait() // the first is running: two wait, room for one
		if got := d.submit("a:alice", false, func() { ran.Add(1) }); got != accepted {
			t.Fatalf("4th job with the first running: %v", got)
		}
		if got := d.submit("a:alice", false, func() {}); got != refusedTell {
			t.Fatalf("over the bound: %v, want refusedTell", got)
		}
		if got := d.submit("a:alice", false, func() {}); got != refusedQuiet {
			t.Fatalf("over the bound again: %v, want refusedQuiet", got)
		}
		if got := d.submit("a:bob", false, func() { ran.Add(1) }); got != accepted {
			t.Fatalf("another sender: %v", got)
		}
		close(release)
		d.wait()
		if ran.Load() != 5 {
			t.Errorf("%d jobs ran, want the 5 accepted", ran.Load())
		}
		synctest.Wait()
		if got := d.submit("a:alice", false, func() {}); got != accepted {
			t.Errorf("after the queue ran dry: %v, want accepted", got)
		}
		d.wait()
	})
}

// Unidentified jobs never hold more than their share of the workers, nor
// queue beyond their shared bound: identified jobs still run at once.
func TestDispatcherGuestsCannotTakeAllWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const workers = 8
		d := newDispatcher(workers, 100)
		defer d.stop()
		release := make(chan struct{})
		var guestsRunning, guestsMax atomic.Int32
		took := 0
		for i := range 1000 {
			if d.submit(fmt.Sprintf("n:guest%d", i), true, func() {
				n := guestsRunning.Add(1)
				for m := guestsMax.Load(); n > m && !guestsMax.CompareAndSwap(m, n); m = guestsMax.Load() {
				}
				<-release
				guestsRunning.Add(-1)
			}) == accepted {
				took++
			}
		}
		if took != 4*workers {
			t.Errorf("%d of 1000 guest jobs accepted, want the shared bound of %d", took, 4*workers)
		}
		synctest.Wait()
		if n := guestsRunning.Load(); n != workers/4 {
			t.Errorf("%d guest jobs running, want their share of %d", n, workers/4)
		}
		// Every identified job runs while the guests hold their share.
		var done atomic.Int32
		for i := range workers - workers/4 {
			d.submit(fmt.Sprintf("a:agent%d", i), false, func() { done.Add(1) })
		}
		synctest.Wait()
		if n := done.Load(); n != workers-workers/4 {
			t.Errorf("%d of %d identified jobs ran beside the guests", n, workers-workers/4)
		}
		close(release)
		d.wait()
		if m := guestsMax.Load(); m > workers/4 {
			t.Errorf("up to %d guest jobs ran at once, want at most %d", m, workers/4)
		}
		if _, g := d.queued(); g != 0 {
			t.Errorf("%d guest jobs still counted after all ran", g)
		}
	})
}

// A drainer that emptied its key takes the next key that comes within
// drainerIdle, rather than a new goroutine starting; past that it is gone.
func TestDispatcherReusesIdleDrainers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDispatcher(4, 1000)
		defer d.stop()
		ran := 0
		for _, key := range []string{"a:one", "a:two", "a:three"} {
			d.submit(key, false, func() { ran++ })
			synctest.Wait() // done, and its drainer waits for another key
		}
		if ran != 3 || d.started.Load() != 1 {
			t.Fatalf("ran %d jobs with %d drainers started, want 3 with 1", ran, d.started.Load())
		}
		time.Sleep(drainerIdle + time.Second)
		synctest.Wait()
		d.submit("a:four", false, func() { ran++ })
		synctest.Wait()
		if ran != 4 || d.started.Load() != 2 {
			t.Fatalf("after drainerIdle: ran %d with %d drainers started, want 4 with 2", ran, d.started.Load())
		}
	})
}

// A key that never empties (each job submits the next, with two waiting)
// runs its jobs in order in a queue that does not grow with the jobs it
// has run; a queue that emptied is reused for the next key, its refusal
// told again.
func TestDispatcherQueueReuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDispatcher(4, 8)
		defer d.stop()
		const total = 10_000
		var got []int
		var biggest int
		var next func(i int) func()
		next = func(i int) func() {
			return func() {
				got = append(got, i)
				d.mu.Lock()
				if q := d.queues["a:loop"]; q != nil {
					biggest = max(biggest, cap(q.jobs))
				}
				d.mu.Unlock()
				if i+2 < total {
					d.submit("a:loop", false, next(i+2))
				}
			}
		}
		d.submit("a:loop", false, next(0))
		d.submit("a:loop", false, next(1))
		d.wait()
		if len(got) != total || !slices.IsSorted(got) {
			t.Fatalf("%d jobs ran (want %d), in order: %v", len(got), total, slices.IsSorted(got))
		}
		if biggest > 8 {
			t.Errorf("the queue grew to %d slots for 2 waiting jobs", biggest)
		}

		// Fill a sender's queue past its bound, twice: the second time in
		// a reused queue, which tells the sender again.
		for round := range 2 {
			d.mu.Lock()
			reused := len(d.free) > 0
			d.mu.Unlock()
			if round == 1 && !reused {
				t.Fatal("no queue kept for reuse")
			}
			block := make(chan struct{})
			d.submit("a:full", false, func() { <-block })
			synctest.Wait() // running, no longer queued
			for range 8 {
				if a := d.submit("a:full", false, func() {}); a != accepted {
					t.Fatalf("round %d: within the bound: %v", round, a)
				}
			}
			if a := d.submit("a:full", false, func() {}); a != refusedTell {
				t.Fatalf("round %d: over the bound: %v, want refusedTell", round, a)
			}
			if a := d.submit("a:full", false, func() {}); a != refusedQuiet {
				t.Fatalf("round %d: over the bound again: %v, want refusedQuiet", round, a)
			}
			close(block)
			d.wait()
			synctest.Wait() // the drainer has forgotten the emptied key
		}
	})
}
