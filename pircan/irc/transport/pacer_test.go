package transport

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// pacerClock is a settable clock for driving Pacer.take directly.
type pacerClock struct {
	mu sync.Mutex
	t  time.Time
}

func newPacerClock() *pacerClock {
	return &pacerClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *pacerClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *pacerClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type sent struct{ target, line string }

func (s sent) String() string { return s.target + ":" + s.line }

// takeReady takes every line that may be sent now, and the wait the pacer
// asks for once nothing more may be sent.
func takeReady(t *testing.T, p *Pacer) ([]sent, time.Duration) {
	t.Helper()
	var out []sent
	for range 100000 {
		target, line, wait := p.take()
		if line == "" {
			if target != "" {
				t.Fatalf("take returned target %q without a line", target)
			}
			if wait <= 0 {
				t.Fatalf("take returned no line and wait %v", wait)
			}
			return out, wait
		}
		if wait != 0 {
			t.Fatalf("take returned a line and wait %v", wait)
		}
		out = append(out, sent{target, line})
	}
	t.Fatal("take never ran dry")
	return nil, 0
}

func numbered(prefix string, n int) []Line {
	out := make([]Line, n)
	for i := range out {
		out[i] = Line{Text: fmt.Sprintf("%s%d", prefix, i)}
	}
	return out
}

func ls(texts ...string) []Line {
	out := make([]Line, len(texts))
	for i, t := range texts {
		out[i] = Line{Text: t}
	}
	return out
}

// take takes one line as Run would and settles it as written.
func (p *Pacer) take() (target, line string, wait time.Duration) {
	r, lines, _, wait := p.takeUpTo(1)
	if len(lines) == 0 {
		return "", "", wait
	}
	text := lines[0].Text // settle may take the slice back for r's next lines
	p.settle(r, lines, nil)
	return r.key, text, 0
}

// funcOutput is an Output whose writes go to write, every line for key
// counting as written to the nick key.
type funcOutput struct {
	write         func(key string, held bool, lines []string) error
	hold, release func(key string)
}

func (o funcOutput) Write(key string, held bool, lines []string) error {
	if o.write == nil {
		return nil
	}
	return o.write(key, held, lines)
}

func (o funcOutput) Hold(key string) {
	if o.hold != nil {
		o.hold(key)
	}
}

func (o funcOutput) Release(key string) {
	if o.release != nil {
		o.release(key)
	}
}

var testPacing = PacerConfig{Burst: 5, PerSecond: 2, GlobalBurst: 100, GlobalRate: 50, MaxQueued: 500}

func newTestPacer(cfg PacerConfig) (*Pacer, *pacerClock) {
	c := newPacerClock()
	p := NewPacer(cfg, c.now, funcOutput{})
	p.SetOnline(true)
	return p, c
}

func TestDefaultPacingIsTheSpecs(t *testing.T) {
	if DefaultPacing.Burst != 5 || DefaultPacing.PerSecond != 2 {
		t.Errorf("DefaultPacing %+v: spec §4 says bursts of 5, then 2 lines per second", DefaultPacing)
	}
	if DefaultPacing.MaxQueued < 1 || DefaultPacing.GlobalBurst < 1 || DefaultPacing.GlobalRate <= 0 {
		t.Errorf("DefaultPacing %+v has an unusable global cap or queue size", DefaultPacing)
	}
}

func TestPacerBurstThenRate(t *testing.T) {
	p, c := newTestPacer(testPacing)
	p.Enqueue("alice", numbered("l", 100)...)

	got, wait := takeReady(t, p)
	if len(got) != 5 {
		t.Fatalf("burst: %d lines, want 5: %v", len(got), got)
	}
	for i, s := range got {
		if s.target != "alice" || s.line != fmt.Sprintf("l%d", i) {
			t.Fatalf("burst line %d: %v", i, s)
		}
	}
	if wait != 500*time.Millisecond {
		t.Errorf("wait after the burst: %v, want 500ms (2 lines/s)", wait)
	}
	c.advance(499 * time.Millisecond)
	if got, wait := takeReady(t, p); len(got) != 0 || wait > time.Millisecond {
		t.Fatalf("499ms after the burst: %v, wait %v; want nothing, wait ≤ 1ms", got, wait)
	}
	c.advance(time.Millisecond)
	got, _ = takeReady(t, p)
	if len(got) != 1 || got[0].line != "l5" {
		t.Fatalf("500ms after the burst: %v, want [l5]", got)
	}

	// Ten seconds of steady sending, in 10ms steps: 2 lines per second.
	next := 6
	for range 1000 {
		c.advance(10 * time.Millisecond)
		got, _ := takeReady(t, p)
		for _, s := range got {
			if s.line != fmt.Sprintf("l%d", next) {
				t.Fatalf("line %v out of order, want l%d", s, next)
			}
			next++
		}
	}
	if sentIn10s := next - 6; sentIn10s != 20 {
		t.Errorf("%d lines in 10s, want 20", sentIn10s)
	}

	// Idle for a minute: the bucket refills to the burst, no more.
	c.advance(time.Minute)
	got, _ = takeReady(t, p)
	if len(got) != 5 {
		t.Errorf("after a minute idle: %d lines, want a burst of 5", len(got))
	}
	if q, d := p.Stats(); q != 100-next-5 || d != 0 {
		t.Errorf("Stats = %d queued, %d dropped; want %d, 0", q, d, 100-next-5)
	}
}

// The wait take asks for is neither too long (it would slow output down)
// nor too short to matter: sleeping the asked waits sends 20 lines at 3/s in
// 19/3 s, give or take a millisecond per line.
func TestPacerWaitIsAccurate(t *testing.T) {
	p, c := newTestPacer(PacerConfig{Burst: 1, PerSecond: 3, GlobalBurst: 100, GlobalRate: 50, MaxQueued: 500})
	p.Enqueue("a", numbered("l", 20)...)
	start := c.now()
	total := 0
	for range 100 {
		got, wait := takeReady(t, p)
		total += len(got)
		if total == 20 {
			break
		}
		if wait > time.Second/3+time.Millisecond {
			t.Fatalf("wait %v, longer than one token at 3/s", wait)
		}
		c.advance(wait)
	}
	if total != 20 {
		t.Fatalf("only %d of 20 lines sent", total)
	}
	elapsed := c.now().Sub(start)
	ideal := 19 * time.Second / 3
	if elapsed < ideal-time.Millisecond || elapsed > ideal+19*time.Millisecond {
		t.Errorf("20 lines at 3/s took %v of fake time, want ≈ %v", elapsed, ideal)
	}
}

func TestPacerRecipientsHaveTheirOwnBuckets(t *testing.T) {
	p, _ := newTestPacer(testPacing)
	p.Enqueue("alice", numbered("a", 20)...)
	p.Enqueue("bob", numbered("b", 20)...)
	got, _ := takeReady(t, p)
	n := map[string]int{}
	for _, s := range got {
		n[s.target]++
	}
	if n["alice"] != 5 || n["bob"] != 5 || len(got) != 10 {
		t.Errorf("each recipient gets its own burst of 5; got %v", n)
	}
}

func TestPacerRoundRobin(t *testing.T) {
	p, _ := newTestPacer(testPacing)
	p.Enqueue("a", ls("a0", "a1", "a2")...)
	p.Enqueue("b", ls("b0", "b1", "b2")...)
	p.Enqueue("c", ls("c0", "c1", "c2")...)
	got, _ := takeReady(t, p)
	var lines []string
	for _, s := range got {
		lines = append(lines, s.line)
	}
	want := []string{"a0", "b0", "c0", "a1", "b1", "c1", "a2", "b2", "c2"}
	if !slices.Equal(lines, want) {
		t.Errorf("order %v, want round-robin %v", lines, want)
	}
}

func TestPacerLongListDoesNotDelayOthers(t *testing.T) {
	p, c := newTestPacer(testPacing)
	p.Enqueue("A", numbered("a", 50)...)
	p.Enqueue("B", ls("b0")...)
	var first []sent
	for range 3 {
		target, line, _ := p.take()
		first = append(first, sent{target, line})
	}
	if !slices.Contains(first, sent{"B", "b0"}) {
		t.Errorf("B's line is not among the first 3 taken: %v", first)
	}

	// A is now in the middle of its list and out of tokens; a reply to C
	// goes out at once, and another to B as soon as asked.
	takeReady(t, p)
	p.Enqueue("C", ls("c0")...)
	target, line, _ := p.take()
	if target != "C" || line != "c0" {
		t.Errorf("a new recipient waited behind A's list: took %s:%s", target, line)
	}
	// Over a minute, A and D share turns: D's 10 lines are not all behind A's 45.
	p.Enqueue("D", numbered("d", 10)...)
	var order []string
	for range 6000 {
		c.advance(10 * time.Millisecond)
		got, _ := takeReady(t, p)
		for _, s := range got {
			order = append(order, s.target)
		}
	}
	lastD := -1
	aBefore := 0
	for i, tg := range order {
		if tg == "D" {
			lastD = i
		}
	}
	for _, tg := range order[:lastD] {
		if tg == "A" {
			aBefore++
		}
	}
	if lastD < 0 || aBefore > 10 {
		t.Errorf("D's last line came after %d of A's lines (order %v)", aBefore, order)
	}
}

func TestPacerGlobalCap(t *testing.T) {
	p, c := newTestPacer(PacerConfig{Burst: 5, PerSecond: 2, GlobalBurst: 3, GlobalRate: 1, MaxQueued: 500})
	for i := range 10 {
		p.Enqueue(fmt.Sprintf("r%d", i), ls("x", "y")...)
	}
	got, wait := takeReady(t, p)
	if len(got) != 3 {
		t.Fatalf("global burst 3: took %d lines: %v", len(got), got)
	}
	if wait != time.Second {
		t.Errorf("wait %v, want 1s (global rate 1/s)", wait)
	}
	c.advance(time.Second)
	if got, _ := takeReady(t, p); len(got) != 1 {
		t.Errorf("after 1s: %d lines, want 1", len(got))
	}
	c.advance(10 * time.Second)
	if got, _ := takeReady(t, p); len(got) != 3 {
		t.Errorf("after 10s idle: %d lines, want the global burst of 3", len(got))
	}
	// Every recipient eventually gets its turn: 20 lines at 1/s.
	total := 7
	for range 30 {
		c.advance(time.Second)
		got, _ := takeReady(t, p)
		total += len(got)
	}
	if q, _ := p.Stats(); total != 20 || q != 0 {
		t.Errorf("after 30s more: %d sent, %d queued; want 20, 0", total, q)
	}
}

func TestPacerGlobalCapCountsAllRecipients(t *testing.T) {
	p, c := newTestPacer(PacerConfig{Burst: 100, PerSecond: 100, GlobalBurst: 10, GlobalRate: 5, MaxQueued: 500})
	for i := range 4 {
		p.Enqueue(fmt.Sprintf("r%d", i), numbered("l", 100)...)
	}
	total := 0
	for range 100 {
		got, _ := takeReady(t, p)
		total += len(got)
		c.advance(100 * time.Millisecond)
	}
	// 10 at once, then 5/s for 9.9s.
	if total < 58 || total > 60 {
		t.Errorf("%d lines in 10s under a global 10 + 5/s, want 59±1", total)
	}
}

func TestPacerOffline(t *testing.T) {
	c := newPacerClock()
	p := NewPacer(testPacing, c.now, funcOutput{})
	p.Enqueue("alice", ls("l0", "l1", "l2")...)
	// A new pacer is offline until told.
	if target, line, wait := p.take(); line != "" || target != "" || wait <= 0 {
		t.Fatalf("new pacer sent %s:%s before SetOnline(true)", target, line)
	}
	p.SetOnline(true)
	if _, line, _ := p.take(); line != "l0" {
		t.Fatalf("online: took %q, want l0", line)
	}
	p.SetOnline(false)
	c.advance(time.Hour)
	for range 10 {
		if target, line, wait := p.take(); line != "" || wait <= 0 {
			t.Fatalf("offline: took %s:%s (wait %v)", target, line, wait)
		}
	}
	if q, d := p.Stats(); q != 2 || d != 0 {
		t.Errorf("offline Stats = %d, %d; want 2 queued, 0 dropped", q, d)
	}
	p.Enqueue("bob", ls("b0")...)
	if _, line, _ := p.take(); line != "" {
		t.Fatalf("offline: took %q after Enqueue", line)
	}
	p.SetOnline(true)
	got, _ := takeReady(t, p)
	// Round-robin in turn order: alice's turn came back before bob queued.
	want := []sent{{"alice", "l1"}, {"bob", "b0"}, {"alice", "l2"}}
	if !slices.Equal(got, want) {
		t.Errorf("back online: %v, want %v", got, want)
	}
}

func TestPacerMaxQueued(t *testing.T) {
	p, _ := newTestPacer(PacerConfig{Burst: 5, PerSecond: 2, GlobalBurst: 100, GlobalRate: 50, MaxQueued: 3})
	p.SetOnline(false)
	p.Enqueue("alice", ls("l0", "l1", "l2", "l3", "l4")...)
	if q, d := p.Stats(); q != 3 || d != 2 {
		t.Fatalf("Stats = %d queued, %d dropped; want 3, 2", q, d)
	}
	p.Enqueue("alice", ls("l5")...)
	if q, d := p.Stats(); q != 3 || d != 3 {
		t.Fatalf("Stats = %d, %d; want 3, 3 (same recipient)", q, d)
	}
	p.Enqueue("bob", ls("b0", "b1")...)
	if q, d := p.Stats(); q != 5 || d != 3 {
		t.Fatalf("Stats = %d, %d; want 5, 3 (bob has his own queue)", q, d)
	}
	p.SetOnline(true)
	if _, line, _ := p.take(); line != "l0" {
		t.Fatalf("took %q, want l0 (the oldest lines are kept)", line)
	}
	p.Enqueue("alice", ls("l6", "l7")...)
	if q, d := p.Stats(); q != 4+1 || d != 4 {
		t.Fatalf("Stats = %d, %d; want 5, 4 (one slot was free)", q, d)
	}
	got, _ := takeReady(t, p)
	var alice []string
	for _, s := range got {
		if s.target == "alice" {
			alice = append(alice, s.line)
		}
	}
	if !slices.Equal(alice, []string{"l1", "l2", "l6"}) {
		t.Errorf("alice's lines %v, want [l1 l2 l6]", alice)
	}
	if _, d := p.Stats(); d != 4 {
		t.Errorf("dropped count changed to %d after sending", d)
	}
}

func TestPacerEnqueueNothing(t *testing.T) {
	p, _ := newTestPacer(testPacing)
	p.Enqueue("alice")
	if q, d := p.Stats(); q != 0 || d != 0 {
		t.Errorf("Stats = %d, %d after an empty Enqueue", q, d)
	}
	if _, line, _ := p.take(); line != "" {
		t.Errorf("took %q from an empty pacer", line)
	}
}

// A write that fails (connection lost) or cannot tell yet puts its lines
// back first, in order; a recipient that is gone loses its whole queue, and
// each line's Done hears its fate once.
func TestPacerFailedWrites(t *testing.T) {
	p, c := newTestPacer(testPacing)
	var fates []string
	line := func(text string) Line {
		return Line{Text: text, Done: func(ok bool) { fates = append(fates, fmt.Sprintf("%s:%v", text, ok)) }}
	}
	p.Enqueue("alice", line("l0"), line("l1"))
	r, lines, _, _ := p.takeUpTo(5)
	p.settle(r, lines, errors.New("connection lost"))
	if q, _ := p.Stats(); q != 2 || len(fates) != 0 {
		t.Fatalf("after a lost connection: %d queued, fates %v; want 2, none", q, fates)
	}
	p.SetOnline(true)
	c.advance(time.Second)
	r, lines, _, _ = p.takeUpTo(1)
	if lines[0].Text != "l0" {
		t.Fatalf("after the failure took %q, want l0 again", lines[0].Text)
	}
	p.settle(r, lines, ErrNotYet)
	if got, _ := takeReady(t, p); len(got) != 0 {
		t.Fatalf("took %v at once after ErrNotYet; want a short wait", got)
	}
	c.advance(notYetRetry)
	if got, _ := takeReady(t, p); !slices.Equal(got, []sent{{"alice", "l0"}, {"alice", "l1"}}) {
		t.Fatalf("after the retry wait: %v", got)
	}
	if !slices.Equal(fates, []string{"l0:true", "l1:true"}) {
		t.Fatalf("fates %v", fates)
	}
	// Unconfirmed for too long: dropped, never sent unconfirmed.
	fates = nil
	p.Enqueue("carol", line("c0"))
	for range 1000 {
		r, lines, _, _ = p.takeUpTo(1)
		if r == nil {
			c.advance(notYetRetry)
			continue
		}
		p.settle(r, lines, ErrNotYet)
		if len(fates) > 0 {
			break
		}
	}
	if !slices.Equal(fates, []string{"c0:false"}) || p.Departed() != 1 {
		t.Fatalf("after %v of ErrNotYet: fates %v, departed %d", notYetPatience, fates, p.Departed())
	}
	// No room on the MONITOR list: it waits longer (others' lists free
	// entries), but not forever.
	fates = nil
	p.Enqueue("dave", line("d0"))
	start := c.now()
	for len(fates) == 0 && c.now().Sub(start) < time.Hour {
		r, lines, _, _ = p.takeUpTo(1)
		if r == nil {
			c.advance(noRoomRetry)
			continue
		}
		p.settle(r, lines, ErrNoRoom)
	}
	if waited := c.now().Sub(start); !slices.Equal(fates, []string{"d0:false"}) || waited < noRoomPatience || waited > noRoomPatience+time.Second {
		t.Fatalf("no room: fates %v after %v", fates, waited)
	}
	fates = nil
	p.Enqueue("bob", line("b0"), line("b1"), line("b2"))
	r, lines, _, _ = p.takeUpTo(1)
	p.settle(r, lines, ErrGone)
	if q, d := p.Stats(); q != 0 || d != 0 || p.Departed() != 5 {
		t.Errorf("after ErrGone: %d queued, %d dropped, %d departed; want 0, 0, 1+1+3", q, d, p.Departed())
	}
	if !slices.Equal(fates, []string{"b0:false", "b1:false", "b2:false"}) {
		t.Errorf("fates %v", fates)
	}
}

// A zero MaxQueued (a PacerConfig given partly, as bottest.Options allows)
// must not leave an empty queue in the ring for take to index.
func TestPacerZeroMaxQueued(t *testing.T) {
	p, _ := newTestPacer(PacerConfig{Burst: 5, PerSecond: 2, GlobalBurst: 100, GlobalRate: 50})
	p.Enqueue("alice", ls("x")...)
	queued, dropped := p.Stats()
	if queued+dropped != 1 {
		t.Errorf("Stats = %d queued, %d dropped for one line", queued, dropped)
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("take panicked after Enqueue with MaxQueued 0 (queued %d, dropped %d): %v", queued, dropped, r)
			}
		}()
		_, line, _ := p.take()
		if queued == 0 && line != "" {
			t.Errorf("took %q, which Stats counted as dropped", line)
		}
	}()
}

// Run, in a synctest bubble (fake time, and synctest.Wait to let it run as
// far as it can): it paces with the real clock functions, sends what a
// bucket allows in one write, retries a write that failed, stays quiet
// while offline, and stops with ctx.
func TestPacerRunSendsAndRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var attempts []string
		var delivered []time.Duration
		failed := false
		start := time.Now()
		p := NewPacer(PacerConfig{Burst: 2, PerSecond: 2, GlobalBurst: 100, GlobalRate: 50, MaxQueued: 500}, nil,
			funcOutput{write: func(key string, _ bool, lines []string) error {
				mu.Lock()
				defer mu.Unlock()
				attempts = append(attempts, key+":"+strings.Join(lines, ","))
				if !failed {
					failed = true
					return errors.New("connection lost")
				}
				delivered = append(delivered, time.Since(start))
				return nil
			}})
		snapshot := func() []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(attempts)
		}
		p.Enqueue("alice", ls("l0", "l1", "l2", "l3", "l4")...)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { p.Run(ctx); close(done) }()

		synctest.Wait()
		if a := snapshot(); len(a) != 0 {
			t.Fatalf("sent %v before SetOnline(true)", a)
		}
		p.SetOnline(true)
		synctest.Wait()
		// The burst of two failed: the pacer went offline with both kept first.
		if a := snapshot(); !slices.Equal(a, []string{"alice:l0,l1"}) {
			t.Fatalf("attempts %v, want the failing l0,l1", a)
		}
		p.mu.Lock()
		online := p.online
		p.mu.Unlock()
		if online {
			t.Errorf("still online after a failed send")
		}
		if q, _ := p.Stats(); q != 5 {
			t.Errorf("queued %d after the failed send, want 5", q)
		}
		time.Sleep(time.Hour) // fake time: nothing is sent while offline
		if a := snapshot(); len(a) != 1 {
			t.Fatalf("sent while offline: %v", a)
		}
		p.SetOnline(true)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		want := []string{"alice:l0,l1", "alice:l0,l1", "alice:l2", "alice:l3", "alice:l4"}
		if a := snapshot(); !slices.Equal(a, want) {
			t.Fatalf("attempts %v, want %v", a, want)
		}
		// Paced: the bucket refilled during the hour offline, so l0 and l1
		// go at once, then one line per refill at 2 lines/s.
		mu.Lock()
		got := slices.Clone(delivered)
		mu.Unlock()
		wantAt := []time.Duration{time.Hour, time.Hour + 500*time.Millisecond, time.Hour + time.Second, time.Hour + 1500*time.Millisecond}
		if !slices.Equal(got, wantAt) {
			t.Errorf("delivered at %v, want %v", got, wantAt)
		}
		cancel()
		<-done // a hang here fails the bubble
	})
}

// With a batch sender, a recipient's lines go out together, as many as its
// bucket allows at once (the burst), then one per refill.
func TestPacerBatches(t *testing.T) {
	c := &fakeClock{t: time.Unix(1_000_000, 0)}
	p := NewPacer(PacerConfig{Burst: 5, PerSecond: 2, GlobalBurst: 100, GlobalRate: 50, MaxQueued: 500}, c.now, funcOutput{})
	p.SetOnline(true)
	p.Enqueue("alice", ls("a0", "a1", "a2", "a3", "a4", "a5", "a6")...)
	p.Enqueue("bob", ls("b0")...)
	batch := func() (string, string, time.Duration) {
		r, lines, _, wait := p.takeUpTo(5)
		if r == nil {
			return "", "", wait
		}
		var texts []string
		for _, l := range lines {
			texts = append(texts, l.Text)
		}
		p.settle(r, lines, nil) // the pacer's again
		return r.key, strings.Join(texts, ","), wait
	}
	if target, lines, _ := batch(); target != "alice" || lines != "a0,a1,a2,a3,a4" {
		t.Fatalf("first batch: %s %v", target, lines)
	}
	if target, lines, _ := batch(); target != "bob" || lines != "b0" {
		t.Fatalf("bob's turn: %s %v", target, lines)
	}
	if _, lines, wait := batch(); lines != "" || wait != 500*time.Millisecond {
		t.Fatalf("alice's bucket is empty: %v, wait %v", lines, wait)
	}
	c.t = c.t.Add(time.Second) // two tokens back
	if _, lines, _ := batch(); lines != "a5,a6" {
		t.Fatalf("after a second: %v", lines)
	}
}

// A recipient that is alone in its turn is written from Enqueue itself, not
// by waking Run: here Run is held in another recipient's write, and alice's
// burst still goes out before Enqueue returns; what her bucket does not
// allow waits for Run as before.
func TestPacerEnqueueWritesWhenAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var attempts []string
		bobWrites := make(chan struct{})
		p := NewPacer(PacerConfig{Burst: 2, PerSecond: 2, GlobalBurst: 100, GlobalRate: 50, MaxQueued: 500}, nil,
			funcOutput{write: func(key string, _ bool, lines []string) error {
				if key == "bob" {
					<-bobWrites
				}
				mu.Lock()
				defer mu.Unlock()
				attempts = append(attempts, key+":"+strings.Join(lines, ","))
				return nil
			}})
		snapshot := func() []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(attempts)
		}
		p.SetOnline(true)
		p.Enqueue("bob", ls("b0")...) // before Run: queued only
		if a := snapshot(); len(a) != 0 {
			t.Fatalf("written without Run: %v", a)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { p.Run(ctx); close(done) }()
		synctest.Wait() // Run is in bob's write

		p.Enqueue("alice", ls("a0", "a1", "a2")...)
		if a := snapshot(); !slices.Equal(a, []string{"alice:a0,a1"}) {
			t.Fatalf("after Enqueue returned: %v, want alice's burst a0,a1 written by Enqueue", a)
		}
		close(bobWrites)
		synctest.Wait()
		if a := snapshot(); !slices.Equal(a, []string{"alice:a0,a1", "bob:b0"}) {
			t.Fatalf("after bob's write: %v; a2 must wait for alice's bucket", a)
		}
		time.Sleep(500 * time.Millisecond) // one token at 2 lines/s
		synctest.Wait()
		if a := snapshot(); !slices.Equal(a, []string{"alice:a0,a1", "bob:b0", "alice:a2"}) {
			t.Fatalf("after alice's bucket refilled: %v", a)
		}
		cancel()
		<-done
	})
}

// The pacer's table of recipients is bounded by who has lines waiting or a
// bucket still refilling: 10,000 recipients answered once each are all
// forgotten once their buckets are full again, and each recipient's queue
// holds at most MaxQueued lines (TestPacerMaxQueued).
func TestPacerForgetsIdleRecipients(t *testing.T) {
	p, c := newTestPacer(PacerConfig{Burst: 5, PerSecond: 2, GlobalBurst: 1 << 20, GlobalRate: 1 << 20, MaxQueued: 500})
	const n = 10_000
	for i := range n {
		p.Enqueue(fmt.Sprintf("r%d", i), Line{Text: "one"})
	}
	if got, _ := takeReady(t, p); len(got) != n {
		t.Fatalf("%d lines sent, want %d", len(got), n)
	}
	p.mu.Lock()
	held := len(p.queues)
	p.mu.Unlock()
	if held != n {
		t.Fatalf("%d recipients held while their buckets refill, want %d", held, n)
	}
	c.advance(3 * time.Second) // a bucket of 5 at 2 lines/s refills one line in 0.5 s
	p.Enqueue("late", Line{Text: "after"})
	takeReady(t, p)
	p.mu.Lock()
	held = len(p.queues)
	p.mu.Unlock()
	if held > 1 {
		t.Fatalf("%d recipients held after their buckets refilled, want at most the latest", held)
	}
}
