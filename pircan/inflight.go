package pircan

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// inflightTTL bounds how long a message handed out by INBOX is held back
// from the next INBOX while it waits for its delivery to be known: longer
// than any queue waits (MaxQueued lines at 2/s), and a safety net should a
// caller never report a fate.
const inflightTTL = 5 * time.Minute

// reads tracks INBOX messages between being returned and being marked
// read. A message is marked read only when all its lines were handed to
// the connection for the account that asked (Reply.Done); until its fate
// is known it is in flight, and a second INBOX skips it rather than
// returning it twice. A message whose lines were dropped stays unread and
// comes back in the next INBOX.
type reads struct {
	store Store
	log   zerolog.Logger
	now   func() time.Time

	mu       sync.Mutex
	inflight map[string]map[string]time.Time // agent → message → handed out at
	toMark   map[string]*Reads               // agent → delivered, not marked yet
	marking  bool
	idle     *sync.Cond // signalled when marking stops (tests)
}

// Reads are the messages delivered to one reader, to be marked read.
type Reads struct {
	Actor Actor
	IDs   []string
}

func newReads(st Store, log zerolog.Logger, now func() time.Time) *reads {
	r := &reads{store: st, log: log, now: now, inflight: map[string]map[string]time.Time{},
		toMark: map[string]*Reads{}}
	r.idle = sync.NewCond(&r.mu)
	return r
}

// skip lists agent's messages in flight (and forgets expired ones).
func (r *reads) skip(agent string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for id, at := range r.inflight[agent] {
		if r.now().Sub(at) > inflightTTL {
			delete(r.inflight[agent], id)
			continue
		}
		out = append(out, id)
	}
	if len(r.inflight[agent]) == 0 {
		delete(r.inflight, agent)
	}
	return out
}

// handOut records message id as in flight to actor and returns the hook
// its face calls once with its fate: the message is marked read if it was
// delivered, else released to be handed out again.
func (r *reads) handOut(actor Actor, id string) func(delivered bool) {
	r.mu.Lock()
	if r.inflight[actor.AgentID] == nil {
		r.inflight[actor.AgentID] = map[string]time.Time{}
	}
	r.inflight[actor.AgentID][id] = r.now()
	r.mu.Unlock()
	var once sync.Once
	return func(delivered bool) { once.Do(func() { r.settled(actor, id, delivered) }) }
}

func (r *reads) settled(actor Actor, id string, delivered bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !delivered {
		r.release(actor.AgentID, []string{id})
		return
	}
	p := r.toMark[actor.AgentID]
	if p == nil {
		p = &Reads{Actor: actor}
		r.toMark[actor.AgentID] = p
	}
	p.IDs = append(p.IDs, id)
	if !r.marking {
		r.marking = true
		go r.mark()
	}
}

// mark writes what was delivered, in one statement for everything
// delivered meanwhile (every agent's): the hooks run on the pacer's
// goroutine and must not wait for the database, and one commit for many
// readers costs the database less than one each.
func (r *reads) mark() {
	for {
		r.mu.Lock()
		batch := r.toMark
		r.toMark = map[string]*Reads{}
		if len(batch) == 0 {
			r.marking = false
			r.idle.Broadcast()
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		all := make([]Reads, 0, len(batch))
		n := 0
		for _, p := range batch {
			all = append(all, *p)
			n += len(p.IDs)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := r.store.MarkRead(ctx, all)
		cancel()
		if err != nil {
			// Not lost: unread, the messages come back in the next INBOX.
			r.log.Warn().Err(err).Int("readers", len(all)).Int("messages", n).Msg("delivered messages not marked read")
		}
		r.mu.Lock()
		for agent, p := range batch {
			r.release(agent, p.IDs)
		}
		r.mu.Unlock()
	}
}

func (r *reads) release(agent string, ids []string) {
	for _, id := range ids {
		delete(r.inflight[agent], id)
	}
	if len(r.inflight[agent]) == 0 {
		delete(r.inflight, agent)
	}
}

// wait blocks until every delivered message reported so far is marked.
func (r *reads) wait() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.marking {
		r.idle.Wait()
	}
}

// WaitReads blocks until every INBOX message reported delivered so far is
// marked read (shutdown, and tests).
func (s *Service) WaitReads() { s.reads.wait() }
