package bot

import (
	"sync"
	"sync/atomic"
	"time"
)

// dispatcher runs jobs off the IRC read goroutine: in order per key (one
// sender's replies never overtake each other) and concurrently across keys,
// with at most `workers` jobs running at once.
//
// It is bounded so that no sender, nor all unidentified senders together,
// can take it over: each key queues at most perSender jobs; unidentified
// ("guest") jobs queue at most guestQueue in all and run on at most
// guestWorkers of the workers, so identified senders always have the rest.
type dispatcher struct {
	mu         sync.Mutex
	queues     map[string]*keyQueue // a key is present while its drainer runs
	sem        chan struct{}        // all workers
	guestSem   chan struct{}        // the unidentified share of them
	perSender  int
	guestQueue int
	guests     int // guest jobs queued or running
	inFlight   sync.WaitGroup
	idle       chan drainJob // drainers done with their key, waiting for another
	stopped    chan struct{} // closed by stop: waiting drainers end
	stopOnce   sync.Once
	started    atomic.Int64 // drainers started
	// free holds queues whose key emptied, for the next key: a request
	// from a sender with nothing queued (nearly every one) then allocates
	// neither a queue nor its slice.
	free []*keyQueue
}

// maxFree bounds the queues kept for reuse.
const maxFree = 256

// job is one queued unit of work: a func (jobFunc), or a value that
// carries what it needs itself (a request: no closure, and no copy of the
// event moved to the heap beside it).
type job interface{ run() }

// jobFunc is a func as a job.
type jobFunc func()

func (f jobFunc) run() { f() }

// drainJob is a key whose queue wants a drainer.
type drainJob struct {
	key string
	q   *keyQueue
}

// drainerIdle is how long a drainer that emptied its key's queue waits for
// another key before it ends. Taking a waiting drainer costs a request less
// than starting one: no new goroutine, and no stack to grow again as the
// request's call chain deepens (runtime.copystack was ~3 % of serving).
const drainerIdle = 10 * time.Second

type keyQueue struct {
	jobs  []job // jobs[head:] wait
	head  int
	guest bool
	told  bool // refused once since the queue was last empty
}

// admission says what submit did with a job.
type admission int

const (
	accepted     admission = iota
	refusedTell            // the sender's queue is full: tell it (rate_limited), this once
	refusedQuiet           // the sender's queue is full and it was told already
	refusedGuest           // unidentified jobs are at their shared bound
)

func newDispatcher(workers, perSender int) *dispatcher {
	guestWorkers := max(1, workers/4)
	return &dispatcher{queues: map[string]*keyQueue{}, sem: make(chan struct{}, workers),
		guestSem: make(chan struct{}, guestWorkers), perSender: perSender, guestQueue: 4 * workers,
		idle: make(chan drainJob), stopped: make(chan struct{})}
}

func (d *dispatcher) submit(key string, guest bool, fn func()) admission {
	return d.submitJob(key, guest, jobFunc(fn))
}

// submitJob is submit for any job.
func (d *dispatcher) submitJob(key string, guest bool, j job) admission {
	d.mu.Lock()
	q, running := d.queues[key]
	if !running {
		q = d.newQueue(guest)
		d.queues[key] = q
	}
	switch {
	case len(q.jobs)-q.head >= d.perSender:
		told := q.told
		q.told = true
		d.mu.Unlock()
		if told {
			return refusedQuiet
		}
		return refusedTell
	case guest && d.guests >= d.guestQueue:
		if !running {
			delete(d.queues, key)
			d.recycle(q)
		}
		d.mu.Unlock()
		return refusedGuest
	}
	if guest {
		d.guests++
	}
	if q.head > 0 && len(q.jobs) == cap(q.jobs) { // move the waiting jobs down rather than grow
		n := copy(q.jobs, q.jobs[q.head:])
		clear(q.jobs[n:])
		q.jobs, q.head = q.jobs[:n], 0
	}
	q.jobs = append(q.jobs, j)
	d.inFlight.Add(1)
	d.mu.Unlock()
	if !running {
		d.startDrainer(drainJob{key, q})
	}
	return accepted
}

// newQueue is an empty queue, a recycled one if there is one; d.mu is held.
func (d *dispatcher) newQueue(guest bool) *keyQueue {
	n := len(d.free)
	if n == 0 {
		return &keyQueue{guest: guest}
	}
	q := d.free[n-1]
	d.free[n-1] = nil
	d.free = d.free[:n-1]
	q.guest = guest
	return q
}

// recycle keeps q, empty and no longer any key's, for newQueue; d.mu is held.
func (d *dispatcher) recycle(q *keyQueue) {
	if len(d.free) < maxFree && cap(q.jobs) <= 64 {
		clear(q.jobs)
		*q = keyQueue{jobs: q.jobs[:0]}
		d.free = append(d.free, q)
	}
}

// startDrainer hands j to a waiting drainer, or starts one.
func (d *dispatcher) startDrainer(j drainJob) {
	select {
	case d.idle <- j:
	default:
		d.started.Add(1)
		go d.drainer(j)
	}
}

// drainer drains one key's queue after another, until none comes for
// drainerIdle.
func (d *dispatcher) drainer(j drainJob) {
	t := time.NewTimer(drainerIdle)
	defer t.Stop()
	for {
		d.drain(j.key, j.q)
		t.Reset(drainerIdle)
		select {
		case j = <-d.idle:
		case <-t.C:
			return
		case <-d.stopped:
			return
		}
	}
}

// stop ends the drainers waiting for work (those at work finish their key;
// later submissions start drainers of their own, which end when done).
func (d *dispatcher) stop() { d.stopOnce.Do(func() { close(d.stopped) }) }

func (d *dispatcher) drain(key string, q *keyQueue) {
	for {
		d.mu.Lock()
		if q.head == len(q.jobs) {
			delete(d.queues, key)
			d.recycle(q)
			d.mu.Unlock()
			return
		}
		j := q.jobs[q.head]
		q.jobs[q.head] = nil
		q.head++
		d.mu.Unlock()
		if q.guest {
			d.guestSem <- struct{}{}
		}
		d.sem <- struct{}{}
		j.run()
		<-d.sem
		d.mu.Lock()
		if q.guest {
			<-d.guestSem
			d.guests--
		}
		d.mu.Unlock()
		d.inFlight.Done()
	}
}

// queued counts jobs waiting or running: identified and unidentified.
func (d *dispatcher) queued() (identified, guests int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, q := range d.queues {
		if !q.guest {
			identified += len(q.jobs) - q.head
		}
	}
	return identified, d.guests
}

// wait blocks until every submitted job has run.
func (d *dispatcher) wait() { d.inFlight.Wait() }
