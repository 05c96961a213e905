package server

import "sync"

// dispatcher runs jobs off the IRC read goroutine: in order per key (one
// sender's replies never overtake each other) and concurrently across keys,
// with at most `workers` jobs running at once.
type dispatcher struct {
	mu       sync.Mutex
	queues   map[string][]func() // a key is present while its drainer runs
	sem      chan struct{}
	inFlight sync.WaitGroup
}

func newDispatcher(workers int) *dispatcher {
	return &dispatcher{queues: map[string][]func(){}, sem: make(chan struct{}, workers)}
}

func (d *dispatcher) submit(key string, job func()) {
	d.inFlight.Add(1)
	d.mu.Lock()
	q, running := d.queues[key]
	d.queues[key] = append(q, job)
	d.mu.Unlock()
	if !running {
		go d.drain(key)
	}
}

func (d *dispatcher) drain(key string) {
	for {
		d.mu.Lock()
		q := d.queues[key]
		if len(q) == 0 {
			delete(d.queues, key)
			d.mu.Unlock()
			return
		}
		job := q[0]
		d.queues[key] = q[1:]
		d.mu.Unlock()
		d.sem <- struct{}{}
		job()
		<-d.sem
		d.inFlight.Done()
	}
}

// wait blocks until every submitted job has run.
func (d *dispatcher) wait() { d.inFlight.Wait() }
