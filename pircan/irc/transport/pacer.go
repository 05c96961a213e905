package transport

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// PacerConfig sets output pacing: per recipient a token bucket (spec §4:
// bursts of 5, then 2 lines per second), under one global bucket sized to
// what the IRC server lets the bot send.
type PacerConfig struct {
	Burst       int
	PerSecond   float64
	GlobalBurst int
	GlobalRate  float64
	MaxQueued   int // per recipient; beyond it new lines are dropped and counted
}

// DefaultPacing is the spec's per-recipient pacing under a global cap that
// a server with a fake-lag exemption for the bot sustains.
var DefaultPacing = PacerConfig{Burst: 5, PerSecond: 2, GlobalBurst: 200, GlobalRate: 200, MaxQueued: 500}

// withDefaults fills unset (or unusable) fields from DefaultPacing.
func (c PacerConfig) withDefaults() PacerConfig {
	d := DefaultPacing
	if c.Burst < 1 {
		c.Burst = d.Burst
	}
	if c.PerSecond <= 0 {
		c.PerSecond = d.PerSecond
	}
	if c.GlobalBurst < 1 {
		c.GlobalBurst = d.GlobalBurst
	}
	if c.GlobalRate <= 0 {
		c.GlobalRate = d.GlobalRate
	}
	if c.MaxQueued < 1 {
		c.MaxQueued = d.MaxQueued
	}
	return c
}

// Line is one queued NOTICE. Done, when set, learns the line's fate once:
// true when it was handed to the connection for the recipient it was
// queued for, false when it was dropped (the recipient left, or its queue
// was full). A state change that a reply announces waits for true.
type Line struct {
	Text string
	Done func(delivered bool)
}

// Output is where the pacer's lines go. Lines are queued under a key (an
// account, or an unidentified sender's nick, never a bare nick: see
// Conn.Notice); Write finds the nick for it at the moment of writing.
type Output interface {
	// Write hands lines for key to the connection, in one write (lines is
	// the pacer's again once Write returns: not to be kept). held says
	// the lines waited in the queue (the recipient was watched meanwhile,
	// see Hold). It returns ErrGone when key has no nick any more (its
	// lines are dropped), ErrNotYet when it cannot tell yet (retried
	// shortly), or another error when the connection is lost.
	Write(key string, held bool, lines []string) error
	// Hold says key's lines must wait for its bucket: watch its nick now,
	// so that it is confirmed by the time they are written (Write with
	// held set must confirm, or watch and say ErrNotYet, by itself too).
	Hold(key string)
	// Release says nothing is queued for key any more.
	Release(key string)
}

var (
	// ErrGone: the recipient is no longer where its lines could go.
	ErrGone = errors.New("recipient gone")
	// ErrNotYet: whether the recipient is still there is not known yet.
	ErrNotYet = errors.New("recipient not confirmed yet")
	// ErrNoRoom: it cannot be watched yet (the MONITOR list is full); a
	// kind of ErrNotYet that waits longer, since other recipients' lists
	// free entries as they end.
	ErrNoRoom = fmt.Errorf("%w: no room to watch it", ErrNotYet)
)

// notYetRetry is how soon a recipient whose nick is not confirmed yet is
// tried again (a MONITOR answer is one round trip away); after
// notYetPatience without an answer its lines are dropped, as for a
// recipient gone (never sent unconfirmed).
const (
	notYetRetry    = 20 * time.Millisecond
	notYetPatience = 10 * time.Second
	noRoomRetry    = 100 * time.Millisecond
	noRoomPatience = 2 * time.Minute
)

type recipientState uint8

const (
	idle    recipientState = iota // nothing queued
	ready                         // in the ready queue: may send now
	waiting                       // in the wait heap until its bucket refills
	busy                          // taken by Run, its write not settled yet
)

type recipient struct {
	key     string
	lines   []Line
	limiter *rate.Limiter
	state   recipientState
	held    bool      // its lines waited since its queue was last empty
	since   time.Time // when its oldest queued line began to wait
	unsure  time.Time // since when Write has said ErrNotYet (zero: it has not)
	noRoom  bool      // ... and whether it was ErrNoRoom
	readyAt time.Time // while waiting
	idleAt  time.Time // when it last went idle (forgetting)
	texts   []string  // write's scratch for the lines' texts, used while busy
}

// maxScratch bounds the texts a recipient keeps for its next write.
const maxScratch = 8

// Pacer queues lines per recipient and sends them round-robin: each turn
// goes to the next recipient that may send, so a long list to one agent
// never delays another's reply. Each line costs O(1) whatever the number
// of recipients (O(log n) for one that must wait): recipients that may
// send now are in a FIFO ready queue, those waiting for their bucket in a
// heap by the time it refills, and idle ones are forgotten in the order
// they went idle once their bucket is full again.
type Pacer struct {
	cfg PacerConfig
	now func() time.Time
	out Output

	mu       sync.Mutex
	queues   map[string]*recipient // every recipient not yet forgotten
	readyQ   fifo                  // state ready, in turn order
	waitH    waitHeap              // state waiting, by readyAt
	idleQ    []idleMark            // went idle, oldest first
	global   *rate.Limiter
	online   bool
	running  bool // Run is taking turns
	queued   int
	inFlight int // lines taken for a write not yet settled
	dropped  int
	departed int // lines dropped because their recipient left
	wake     chan struct{}
	sent     atomic.Uint64 // lines handed to the server
}

type idleMark struct {
	r  *recipient
	at time.Time
}

// NewPacer builds a pacer that delivers to out. now is the clock (nil:
// time.Now).
func NewPacer(cfg PacerConfig, now func() time.Time, out Output) *Pacer {
	if now == nil {
		now = time.Now
	}
	cfg = cfg.withDefaults()
	return &Pacer{cfg: cfg, now: now, out: out, queues: map[string]*recipient{},
		global: rate.NewLimiter(rate.Limit(cfg.GlobalRate), cfg.GlobalBurst), wake: make(chan struct{}, 1)}
}

// Enqueue adds lines for key, in order.
func (p *Pacer) Enqueue(key string, lines ...Line) {
	if len(lines) == 0 {
		return
	}
	var refused []Line
	p.mu.Lock()
	r := p.queues[key]
	if r == nil {
		r = &recipient{key: key, limiter: rate.NewLimiter(rate.Limit(p.cfg.PerSecond), p.cfg.Burst)}
		p.queues[key] = r
	}
	for _, l := range lines {
		if len(r.lines) >= p.cfg.MaxQueued {
			p.dropped++
			refused = append(refused, l)
			continue
		}
		r.lines = append(r.lines, l)
		p.queued++
	}
	now := p.now()
	if r.state == idle && len(r.lines) > 0 {
		r.since = now
		p.schedule(r, now)
	}
	// When r is the only recipient whose turn it is, its turn is now: its
	// lines go from this goroutine, without waking Run (one hand-off less
	// on every reply to an agent that asks one thing at a time).
	var taken []Line
	var held bool
	if r.state == ready && p.online && p.running {
		p.forgetIdle(now)
		p.wakeDue(now)
		if p.readyQ.len() == 1 && p.global.TokensAt(now) >= 1 {
			p.readyQ.pop()
			taken, held = p.takeFrom(r, now, p.cfg.Burst)
		}
	}
	p.mu.Unlock()
	settle(refused, false)
	if len(taken) == 0 || p.write(r, taken, held) {
		p.poke()
	}
}

// schedule puts a recipient with lines where its turn comes: the ready
// queue if its bucket has a token, else the wait heap.
func (p *Pacer) schedule(r *recipient, now time.Time) {
	tokens := r.limiter.TokensAt(now)
	if tokens >= 1 {
		r.state = ready
		p.readyQ.push(r)
		return
	}
	r.state = waiting
	r.readyAt = now.Add(tokenWait(tokens, p.cfg.PerSecond))
	heap.Push(&p.waitH, r)
}

// SetOnline pauses (false) or resumes (true) sending, around reconnects.
func (p *Pacer) SetOnline(online bool) {
	p.mu.Lock()
	p.online = online
	p.mu.Unlock()
	p.poke()
}

// Stats reports the queued line count and lines dropped for a full queue.
func (p *Pacer) Stats() (queued, dropped int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queued, p.dropped
}

// Pending reports the lines not yet settled: queued, or taken for a write
// whose outcome is not known yet (it may put them back).
func (p *Pacer) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queued + p.inFlight
}

// Departed counts lines dropped because their recipient left.
func (p *Pacer) Departed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.departed
}

// Sent reports the lines sent so far.
func (p *Pacer) Sent() uint64 { return p.sent.Load() }

// setRunning says whether Run is there to take turns; without it nothing
// is sent, not even by Enqueue's shortcut (tests drive turns themselves).
func (p *Pacer) setRunning(running bool) {
	p.mu.Lock()
	p.running = running
	p.mu.Unlock()
}

func (p *Pacer) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Run sends until ctx ends. A recipient's lines that its bucket allows go
// in one write: an IRC server that does not set TCP_NODELAY holds a
// second line written separately until the client's delayed ACK, ~40 ms
// (BENCHMARKS.md).
func (p *Pacer) Run(ctx context.Context) {
	p.setRunning(true)
	defer p.setRunning(false)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		r, lines, held, wait := p.takeUpTo(p.cfg.Burst)
		if len(lines) > 0 {
			p.write(r, lines, held)
			continue
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-timer.C:
		}
	}
}

// write hands lines taken from r to the output and settles them; it
// reports whether r has more lines queued.
func (p *Pacer) write(r *recipient, lines []Line, held bool) (more bool) {
	texts := r.texts[:0] // r is busy: this writer's alone until settle
	for _, l := range lines {
		texts = append(texts, l.Text)
	}
	err := p.out.Write(r.key, held, texts)
	if cap(texts) <= maxScratch {
		clear(texts)
		r.texts = texts[:0]
	}
	return p.settle(r, lines, err)
}

// takeUpTo picks, for the next recipient whose turn it is, as many of its
// queued lines (at most max) as its bucket and the global one allow now,
// or says how long to wait. The recipient is busy until settle.
func (p *Pacer) takeUpTo(max int) (r *recipient, lines []Line, held bool, wait time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	p.forgetIdle(now)
	p.wakeDue(now)
	if !p.online {
		return nil, nil, false, time.Hour
	}
	if p.readyQ.len() == 0 {
		if p.waitH.Len() == 0 {
			return nil, nil, false, time.Hour
		}
		return nil, nil, false, max1ms(p.waitH[0].readyAt.Sub(now))
	}
	if g := p.global.TokensAt(now); g < 1 {
		return nil, nil, false, tokenWait(g, p.cfg.GlobalRate)
	}
	r = p.readyQ.pop()
	lines, held = p.takeFrom(r, now, max)
	return r, lines, held, 0
}

// wakeDue moves the recipients whose bucket has refilled by now from the
// wait heap to the ready queue; p.mu is held.
func (p *Pacer) wakeDue(now time.Time) {
	for p.waitH.Len() > 0 && !p.waitH[0].readyAt.After(now) {
		w := heap.Pop(&p.waitH).(*recipient)
		p.schedule(w, now) // ready, or back in the heap if the wait was rounded short
		if w.state == waiting {
			break
		}
	}
}

// takeFrom takes as many of r's lines (at most max) as its bucket and the
// global one (which holds a token) allow now; r, just taken from the ready
// queue, is busy until settle. p.mu is held.
func (p *Pacer) takeFrom(r *recipient, now time.Time, max int) (lines []Line, held bool) {
	n := min(max, int(r.limiter.TokensAt(now)), int(p.global.TokensAt(now)), len(r.lines))
	r.limiter.AllowN(now, n)
	p.global.AllowN(now, n)
	lines = r.lines[:n:n]
	r.lines = r.lines[n:]
	p.queued -= n
	p.inFlight += n
	r.state = busy
	if now.Sub(r.since) > heldAfter {
		r.held = true // waited behind others: watched like a paced line
	}
	return lines, r.held
}

// heldAfter is how long a line may wait before it counts as held (see
// Output.Write) even though its own bucket did not hold it.
const heldAfter = 100 * time.Millisecond

// settle records how the write of lines taken from r went, and puts r
// back in turn if it has more (and says so). lines are the pacer's again:
// once written, with no Done to call, they hold r's next lines.
func (p *Pacer) settle(r *recipient, lines []Line, err error) (more bool) {
	var fate []Line
	var release, hold, delivered bool
	p.mu.Lock()
	p.inFlight -= len(lines)
	now := p.now()
	if errors.Is(err, ErrNotYet) {
		noRoom, patience := errors.Is(err, ErrNoRoom), notYetPatience
		if noRoom {
			patience = noRoomPatience
		}
		if r.unsure.IsZero() || r.noRoom != noRoom {
			r.unsure, r.noRoom = now, noRoom
		} else if now.Sub(r.unsure) > patience {
			err = ErrGone
		}
	}
	if !errors.Is(err, ErrNotYet) {
		r.unsure = time.Time{}
	}
	switch {
	case err == nil:
		p.sent.Add(uint64(len(lines)))
		fate, delivered = lines, true
		if len(r.lines) == 0 && cap(lines) <= maxScratch && !hooked(lines) {
			// Nothing to tell of these lines: their slice holds r's next
			// ones (otherwise every reply's append allocates anew).
			clear(lines)
			r.lines, fate = lines[:0], nil
		}
	case errors.Is(err, ErrGone):
		fate = append(lines, r.lines...)
		p.departed += len(fate)
		p.queued -= len(r.lines)
		r.lines = nil
	default: // not confirmed yet, or offline: the lines go first again
		r.lines = append(lines[:len(lines):len(lines)], r.lines...)
		p.queued += len(lines)
		if !errors.Is(err, ErrNotYet) {
			p.online = false
		}
	}
	switch {
	case len(r.lines) == 0:
		release = true // Write may have watched the nick even for lines not held here
		r.held = false
		r.state, r.idleAt = idle, now
		p.idleQ = append(p.idleQ, idleMark{r, now})
	case errors.Is(err, ErrNotYet):
		r.state, r.readyAt = waiting, now.Add(notYetRetry)
		if errors.Is(err, ErrNoRoom) {
			r.readyAt = now.Add(noRoomRetry)
		}
		heap.Push(&p.waitH, r)
	default:
		r.since = now
		p.schedule(r, now)
		if r.state == waiting && !r.held {
			r.held, hold = true, true
		}
	}
	more = len(r.lines) > 0
	p.mu.Unlock()
	// Outside the lock: the output takes its own (presence's), and Done
	// may start work of its own.
	if hold {
		p.out.Hold(r.key)
	}
	if release {
		p.out.Release(r.key)
	}
	settle(fate, delivered)
	return more
}

// hooked reports whether any of lines has a Done to call.
func hooked(lines []Line) bool {
	for _, l := range lines {
		if l.Done != nil {
			return true
		}
	}
	return false
}

func settle(lines []Line, delivered bool) {
	for _, l := range lines {
		if l.Done != nil {
			l.Done(delivered)
		}
	}
}

// forgetIdle drops recipients whose bucket has refilled while they waited
// for nothing, oldest first, so memory follows recent recipients only.
func (p *Pacer) forgetIdle(now time.Time) {
	refill := time.Duration(float64(p.cfg.Burst) / p.cfg.PerSecond * float64(time.Second))
	for len(p.idleQ) > 0 && now.Sub(p.idleQ[0].at) >= refill {
		m := p.idleQ[0]
		p.idleQ[0] = idleMark{}
		p.idleQ = p.idleQ[1:]
		if m.r.state == idle && m.r.idleAt.Equal(m.at) && p.queues[m.r.key] == m.r {
			delete(p.queues, m.r.key)
		}
	}
}

// tokenWait is how long until a bucket holding tokens has one, rounded up
// so that the bucket does have it then.
func tokenWait(tokens, perSecond float64) time.Duration {
	return max1ms(time.Duration(math.Ceil((1 - tokens) / perSecond * float64(time.Second))))
}

func max1ms(d time.Duration) time.Duration { return max(time.Millisecond, d) }

// fifo is a queue of recipients in a ring buffer.
type fifo struct {
	buf        []*recipient
	head, size int
}

func (q *fifo) len() int { return q.size }

func (q *fifo) push(r *recipient) {
	if q.size == len(q.buf) {
		grown := make([]*recipient, max(16, 2*len(q.buf)))
		for i := range q.size {
			grown[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = grown, 0
	}
	q.buf[(q.head+q.size)%len(q.buf)] = r
	q.size++
}

func (q *fifo) pop() *recipient {
	r := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.size--
	return r
}

// waitHeap orders waiting recipients by when their bucket has a token.
type waitHeap []*recipient

func (h waitHeap) Len() int           { return len(h) }
func (h waitHeap) Less(i, j int) bool { return h[i].readyAt.Before(h[j].readyAt) }
func (h waitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *waitHeap) Push(x any)        { *h = append(*h, x.(*recipient)) }
func (h *waitHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return r
}
