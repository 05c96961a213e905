package transport

import (
	"testing"
	"testing/synctest"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan/irc"
)

func TestLanesRouteByKind(t *testing.T) {
	l := newLanes(8)
	for _, c := range []struct {
		ev   Event
		want Lane
	}{
		{Event{Kind: Request, Sender: irc.Sender{Account: "alice", Nick: "alice"}}, LanePriority},
		{Event{Kind: Connected}, LanePriority},
		{Event{Kind: Request, Sender: irc.Sender{Nick: "guest"}}, LaneUnidentified},
		{Event{Kind: Joined, Sender: irc.Sender{Account: "alice", Nick: "alice"}}, LaneMembership},
		{Event{Kind: Quit, Sender: irc.Sender{Nick: "bob"}}, LaneMembership},
		{Event{Kind: NickChanged}, LaneMembership},
		{Event{Kind: Present}, LaneMembership},
	} {
		l.put(c.ev, zerolog.Nop())
		if n := len(l.q[c.want]); n != 1 {
			t.Errorf("%+v: %d in lane %v, want 1", c.ev, n, c.want)
		}
		<-l.q[c.want]
	}
}

// A full unidentified or membership lane drops its own events and never
// an identified request.
func TestLanesDropOnlyTheirOwn(t *testing.T) {
	l := newLanes(16)
	for range 100 {
		l.put(Event{Kind: Request, Sender: irc.Sender{Nick: "guest"}}, zerolog.Nop())
		l.put(Event{Kind: Joined, Sender: irc.Sender{Nick: "guest"}}, zerolog.Nop())
	}
	l.put(Event{Kind: Request, Sender: irc.Sender{Account: "alice"}}, zerolog.Nop())
	if got := l.dropped[LaneUnidentified].Load(); got != 100-uint64(cap(l.q[LaneUnidentified])) {
		t.Errorf("unidentified dropped %d", got)
	}
	if got := l.dropped[LaneMembership].Load(); got != 100-uint64(cap(l.q[LaneMembership])) {
		t.Errorf("membership dropped %d", got)
	}
	if len(l.q[LanePriority]) != 1 || l.dropped[LanePriority].Load() != 0 {
		t.Errorf("identified request not queued")
	}
}

// After a membership drop, the bot hears of it exactly once: at the last
// event queued before the drop, so that everything it knew up to then is
// applied before it forgets presence.
func TestMembershipLostAfterTheLastQueued(t *testing.T) {
	c := &Conn{events: newLanes(2)} // membership lane: 4
	for range 6 {
		c.events.put(Event{Kind: Quit}, zerolog.Nop())
	}
	var lost []int
	for i := range 4 {
		if c.MembershipLost(<-c.Membership()) {
			lost = append(lost, i)
		}
	}
	if len(lost) != 1 || lost[0] != 3 {
		t.Errorf("loss reported after events %v, want after the 4th (the last queued) only", lost)
	}
	c.events.put(Event{Kind: Quit}, zerolog.Nop())
	if c.MembershipLost(<-c.Membership()) {
		t.Error("loss reported again with nothing new dropped")
	}
}

// A full priority lane makes the reader wait, not drop: the request is
// queued as soon as the bot takes one.
func TestPriorityLaneWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLanes(2)
		id := Event{Kind: Request, Sender: irc.Sender{Account: "alice"}}
		l.put(id, zerolog.Nop())
		l.put(id, zerolog.Nop())
		done := make(chan struct{})
		go func() { l.put(id, zerolog.Nop()); close(done) }()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("put into a full priority lane returned at once")
		default:
		}
		<-l.q[LanePriority]
		<-done
		if l.waits.Load() != 1 || l.dropped[LanePriority].Load() != 0 || len(l.q[LanePriority]) != 2 {
			t.Errorf("waits %d, dropped %d, queued %d; want 1, 0, 2", l.waits.Load(), l.dropped[LanePriority].Load(), len(l.q[LanePriority]))
		}
		// Only a bot that takes nothing for priorityWait loses one.
		l.put(id, zerolog.Nop())
		if l.dropped[LanePriority].Load() != 1 {
			t.Errorf("dropped %d after priorityWait, want 1", l.dropped[LanePriority].Load())
		}
	})
}

func TestOrigin(t *testing.T) {
	for src, want := range map[string]string{
		"nick!~user@host.example": "~user@host.example",
		"nick":                    "",
		"irc.example.net":         "",
		"nick!user":               "",
	} {
		if got := origin(src); got != want {
			t.Errorf("origin(%q) = %q, want %q", src, got, want)
		}
	}
}
