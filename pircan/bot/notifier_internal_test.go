package bot

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/irc"
	"github.com/creatimus/pircan/pircan/irc/transport"
	"github.com/creatimus/pircan/store"
)

// Notification work has its own workers and a bounded queue: with every
// notification worker stuck (as on a WHOX that never comes back) and the
// queue full, a request from an agent who just appeared is still answered
// by the request workers, and the notification job its sighting would
// start is refused and counted, not waited for.
func TestNotificationWorkBlocksNoRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		b := &Bot{log: zerolog.Nop(), conn: transport.New(transport.Config{}, zerolog.Nop()),
			irc: irc.New(pircan.NewService(nil, pircan.Config{Limits: pircan.DefaultLimits}, zerolog.Nop()), nil,
				irc.Config{Limits: pircan.DefaultLimits}, zerolog.Nop()),
			cfg: Config{Timeout: time.Second}, jobs: newDispatcher(1, 1)}
		defer b.jobs.stop()
		b.notes = newNotifier(b)
		b.notes.run(ctx)
		stuck := make(chan struct{})
		defer close(stuck)
		offer := func(n int) {
			for i := range n {
				if !b.notes.offer(func() { <-stuck }) {
					t.Fatalf("notification job %d of %d refused", i, n)
				}
			}
			synctest.Wait()
		}
		offer(notifyWorkers) // every notification worker takes one and is stuck
		offer(notifyQueue)   // the queue is full
		if b.notes.offer(func() {}) {
			t.Fatal("a job beyond the notification queue's bound was taken")
		}
		b.handle(ctx, transport.Event{Kind: transport.Request, Fresh: true,
			Sender: irc.Sender{Account: "alice", Nick: "alice"}, Text: `PIRCAN/1 ECHO {"id":"e"}`})
		b.jobs.wait()
		if q, _ := b.conn.Pacer().Stats(); q != 1 {
			t.Errorf("%d lines queued for alice, want the ECHO's reply", q)
		}
		if n := b.notes.refused.Load(); n != 2 {
			t.Errorf("pircan_notify_jobs_refused_total = %d, want 2 (the extra job and alice's sighting)", n)
		}
	})
}

// A wake that finds the notification queue full is refused and forgets the
// agent (its next wake tries again); it never waits, neither for the queue
// nor for the notifier's own lock (which it once took twice, stopping
// every notification worker for good: 5,000 agents in pircan bench).
func TestWakeOnAFullQueueReturns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := &Bot{log: zerolog.Nop()}
	n := newNotifier(b) // no workers: nothing takes from the queue
	for range notifyQueue {
		if !n.offer(func() {}) {
			t.Fatal("the queue refused a job below its bound")
		}
	}
	done := make(chan struct{})
	go func() {
		n.wake(ctx, "agent-1")
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // a deadline, not a pause: it returns at once
		t.Fatal("wake on a full queue did not return")
	}
	n.mu.Lock()
	scheduled := n.scheduled["agent-1"]
	n.mu.Unlock()
	if scheduled {
		t.Error("a refused wake left the agent scheduled: its next wake would do nothing")
	}
	if got := n.refused.Load(); got != 1 {
		t.Errorf("refused %d, want 1", got)
	}
}

// A sighting is an agent's wake while its notifications wait unwoken (a
// delivery found it out of sight, and its wake row, schema 00071, keeps
// the next ones silent): a sighting the full queue refuses, or whose agent
// the database could not read, is offered again after the gap, not lost
// until the agent is seen anew.
func TestRefusedSightingIsOfferedAgain(t *testing.T) {
	closed := closedStore(t)
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		n := newNotifier(&Bot{log: zerolog.Nop(), store: closed}) // no workers: the test takes the jobs
		for range notifyQueue {
			n.offer(func() {})
		}
		n.observe(ctx, transport.Event{Kind: transport.Request, Fresh: true, Sender: irc.Sender{Account: "alice", Nick: "alice"}})
		if got := n.refused.Load(); got != 1 {
			t.Fatalf("refused %d, want the sighting", got)
		}
		for range notifyQueue { // the workers catch up
			<-n.work
		}
		again := func(what string) func() {
			t.Helper()
			time.Sleep(notifyGap)
			synctest.Wait()
			select {
			case job := <-n.work:
				return job
			default:
				t.Fatalf("%s: the sighting was not offered again", what)
				return nil
			}
		}
		job := again("refused by the full queue")
		job() // the database fails: no agent read
		again("its agent not read")
	})
}

// The agents woken when LISTEN starts are those whose notifications may
// have been written while nobody listened; their wake rows (schema 00071)
// keep the next notifications silent. A failed read of them is tried
// again after the gap, not left to the agents' next sightings.
func TestWakeAllWaitingTriesAgain(t *testing.T) {
	closed := closedStore(t)
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var log bytes.Buffer
		b := &Bot{log: zerolog.New(&log), store: closed}
		b.notes = newNotifier(b)
		b.wakeAllWaiting(ctx)
		time.Sleep(notifyGap)
		synctest.Wait()
		if n := strings.Count(log.String(), "listing waiting notifications"); n != 2 {
			t.Fatalf("the waiting agents were read %d times in a gap after a failure, want 2:\n%s", n, log.String())
		}
	})
}

// closedStore is a store whose every read fails at once (its pool closed,
// no server ever dialled).
func closedStore(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), "postgres://pircan@127.0.0.1:1/none")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	return s
}
