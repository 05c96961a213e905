package server

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// The tests run in synctest bubbles: synctest.Wait returns once every
// goroutine of the dispatcher has run as far as it can, so "nothing more
// happens" is checked exactly, without sleeping; a deadlock fails the test.

func TestDispatcherKeepsOrderPerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
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
		d := newDispatcher(8)
		var running, overlaps atomic.Int32
		release := make(chan struct{})
		d.submit("k", func() {
			running.Add(1)
			<-release
			running.Add(-1)
		})
		var mu sync.Mutex
		var order []int
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
		d := newDispatcher(2)
		aStarted, bStarted := make(chan struct{}), make(chan struct{})
		d.submit("a", func() {
			close(aStarted)
			<-bStarted
		})
		d.submit("b", func() {
			close(bStarted)
			<-aStarted
		})
		d.wait() // a deadlock here fails the bubble
	})
}

// A blocked job of one key does not hold up another key.
func TestDispatcherSlowKeyDoesNotBlockOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDispatcher(2)
		release := make(chan struct{})
		var slowDone atomic.Bool
		d.submit("slow", func() { <-release })
		d.submit("slow", func() { slowDone.Store(true) })
		var fast []int
		var mu sync.Mutex
		for i := range 10 {
			d.submit("fast", func() {
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
				d := newDispatcher(workers)
				var inFlight, started atomic.Int32
				release := make(chan struct{})
				for i := range jobs {
					d.submit(fmt.Sprintf("key%d", i%20), func() {
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
		d := newDispatcher(3)
		var done atomic.Int32
		release := make(chan struct{})
		for i := range 60 {
			d.submit(fmt.Sprintf("k%d", i%7), func() {
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
		newDispatcher(1).wait()
	})
}

// A job may submit more work: wait() covers it, since it is submitted
// before the job finishes.
func TestDispatcherWaitCoversJobsSubmittedByJobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDispatcher(2)
		var mu sync.Mutex
		var got []string
		add := func(s string) {
			mu.Lock()
			got = append(got, s)
			mu.Unlock()
		}
		d.submit("a", func() {
			d.submit("a", func() { add("a2") })
			d.submit("b", func() { add("b1") })
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
		d := newDispatcher(4)
		for round := range 3 {
			var n atomic.Int32
			for i := range 100 {
				d.submit(fmt.Sprintf("k%d", i), func() { n.Add(1) })
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
