package transport

import (
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Lane is one of the bounded queues events wait in between the IRC reader
// and the bot, so that a flood of one kind never delays or drops another.
type Lane int

const (
	// LanePriority: requests from identified accounts, and Connected. Never
	// dropped: when it is full the IRC reader waits (up to priorityWait)
	// rather than lose one.
	LanePriority Lane = iota
	// LaneMembership: joins, channel talk, nick changes, quits, account
	// changes, WHO results. When full, new events are dropped, and the bot
	// is told (MembershipLost) once it has handled every event queued
	// before the loss, so it can forget what presence it knew rather than
	// keep a mapping a dropped QUIT or NICK would have undone.
	LaneMembership
	// LaneUnidentified: requests without an account. When full, dropped:
	// they share a small budget anyway (pircan.Limits.Unidentified).
	LaneUnidentified
	numLanes
)

func (l Lane) String() string { return [...]string{"priority", "membership", "unidentified"}[l] }

// priorityWait bounds how long the IRC reader waits for room in the
// priority lane: only a bot loop stuck that long loses a request (logged
// at error level and counted).
const priorityWait = 10 * time.Second

// LaneStat is one lane's queue length and drop count.
type LaneStat struct {
	Lane    Lane
	Queued  int
	Dropped uint64
}

type lanes struct {
	q       [numLanes]chan Event
	dropped [numLanes]atomic.Uint64
	waits   atomic.Uint64 // times the reader waited for the priority lane
	// Membership events are numbered; lostUpTo is the number of the last
	// one queued before a drop (0: none lost since the bot last heard).
	seq, lastQueued, lostUpTo atomic.Uint64
}

func newLanes(size int) *lanes {
	l := &lanes{}
	l.q[LanePriority] = make(chan Event, size)
	l.q[LaneMembership] = make(chan Event, 2*size)
	l.q[LaneUnidentified] = make(chan Event, max(16, size/16))
	return l
}

func laneOf(e Event) Lane {
	switch {
	case e.Kind == Connected || e.Kind == Request && e.Sender.Identified():
		return LanePriority
	case e.Kind == Request:
		return LaneUnidentified
	}
	return LaneMembership
}

func (l *lanes) put(e Event, log zerolog.Logger) {
	lane := laneOf(e)
	if lane == LaneMembership {
		e.seq = l.seq.Add(1)
	}
	select {
	case l.q[lane] <- e:
		if lane == LaneMembership {
			l.lastQueued.Store(e.seq)
		}
		return
	default:
	}
	switch lane {
	case LanePriority:
		l.waits.Add(1)
		t := time.NewTimer(priorityWait)
		defer t.Stop()
		select {
		case l.q[lane] <- e:
			return
		case <-t.C:
			log.Error().Int("kind", int(e.Kind)).Str("nick", e.Sender.Nick).Str("account", e.Sender.Account).
				Msg("the bot took no event for 10 s: identified request dropped")
		}
	case LaneMembership:
		l.lostUpTo.Store(l.lastQueued.Load())
		log.Warn().Int("kind", int(e.Kind)).Str("nick", e.Sender.Nick).Msg("membership queue full; event dropped, presence will be reset")
	case LaneUnidentified:
		log.Debug().Str("nick", e.Sender.Nick).Msg("unidentified request queue full; dropped")
	}
	l.dropped[lane].Add(1)
}

// Membership is the lane of membership events (see LaneMembership).
func (c *Conn) Membership() <-chan Event { return c.events.q[LaneMembership] }

// Unidentified is the lane of requests without an account.
func (c *Conn) Unidentified() <-chan Event { return c.events.q[LaneUnidentified] }

// MembershipLost reports, once, that membership events were dropped and ev
// is the last one queued before that: what the bot knew of presence may
// now be stale, and it should start over (forget, ask WHO again).
func (c *Conn) MembershipLost(ev Event) bool {
	lost := c.events.lostUpTo.Load()
	return lost != 0 && ev.seq >= lost && c.events.lostUpTo.CompareAndSwap(lost, 0)
}

// Lanes reports each lane's queue length and drops.
func (c *Conn) Lanes() []LaneStat {
	out := make([]LaneStat, numLanes)
	for i := range out {
		out[i] = LaneStat{Lane: Lane(i), Queued: len(c.events.q[i]), Dropped: c.events.dropped[i].Load()}
	}
	return out
}

// PriorityWaits counts the times the IRC reader waited for room in the
// priority lane (backpressure rather than a lost request).
func (c *Conn) PriorityWaits() uint64 { return c.events.waits.Load() }
