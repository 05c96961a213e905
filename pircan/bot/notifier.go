package bot

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/creatimus/pircan/internal/expiring"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/irc"
	"github.com/creatimus/pircan/pircan/irc/transport"
)

// notifyGap is the least time between two NOTIFY deliveries to one agent:
// a burst of events becomes one line per type with the current count.
const notifyGap = 2 * time.Second

// Notification work runs on its own workers, never on the request
// workers: a delivery may wait up to 10 s for a WHOX answer.
const (
	notifyWorkers = 4
	notifyQueue   = 1024 // jobs waiting; beyond it a wake is refused (and counted)
)

// notifier delivers waiting notifications to the nick PIRCAN has seen
// using the agent's account, after asking the server that the nick still
// belongs to that account (a nick can change hands unseen).
//
// A refused wake or sighting loses nothing: the notifications stay in the
// database, and the wake or sighting is tried again after notifyGap.
type notifier struct {
	b       *Bot
	work    chan func()
	refused atomic.Uint64

	mu        sync.Mutex
	last      *expiring.Table[time.Time] // agent → its delivery within the last notifyGap
	scheduled map[string]bool            // agent → a delivery is queued or set for later
	// delivering: agent → a delivery runs (at most notifyWorkers entries).
	delivering map[string]bool
}

func newNotifier(b *Bot) *notifier {
	return &notifier{b: b, work: make(chan func(), notifyQueue),
		last: expiring.New[time.Time](notifyGap, irc.MaxTrackedCallers), scheduled: map[string]bool{}, delivering: map[string]bool{}}
}

// run starts the notification workers; they stop with ctx.
func (n *notifier) run(ctx context.Context) {
	for range notifyWorkers {
		go func() {
			for {
				select {
				case job := <-n.work:
					job()
				case <-ctx.Done():
					return
				}
			}
		}()
	}
}

// offer queues job for the notification workers; false when they are at
// their bound.
func (n *notifier) offer(job func()) bool {
	select {
	case n.work <- job:
		return true
	default:
		n.refused.Add(1)
		return false
	}
}

// observe wakes delivery for an account that (re)appears; the transport
// keeps presence itself, as it reads each event (transport.Event.Fresh).
func (n *notifier) observe(ctx context.Context, ev transport.Event) {
	if account := ev.Sender.Account; ev.Fresh && account != "" {
		n.sighted(ctx, account)
	}
}

// sighted offers the sighting of account to the notification workers. A
// sighting is the only wake of an agent whose notifications a delivery
// left waiting out of sight: its wake row (schema 00071) keeps the next
// ones silent, and the agent is not seen afresh while it stays. So one the
// workers cannot take now is offered again after notifyGap, as a
// sighting whose agent could not be read (appeared).
func (n *notifier) sighted(ctx context.Context, account string) {
	if !n.offer(func() { n.appeared(ctx, account) }) {
		n.b.log.Warn().Str("account", account).Msg("notification workers busy; the sighting is offered again later")
		n.sightAgain(ctx, account)
	}
}

func (n *notifier) sightAgain(ctx context.Context, account string) {
	time.AfterFunc(notifyGap, func() {
		if ctx.Err() == nil {
			n.sighted(ctx, account)
		}
	})
}

// appeared wakes delivery for the agent bound to account, if any.
func (n *notifier) appeared(ctx context.Context, account string) {
	lookup, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	agent, err := n.b.store.AgentByAccount(lookup, account)
	n.b.log.Debug().Err(err).Str("account", account).Msg("account appeared")
	switch {
	case err == nil:
		n.wake(ctx, agent.ID)
	case !errors.Is(err, pircan.ErrNotFound) && ctx.Err() == nil: // no agent: nothing to wake
		n.sightAgain(ctx, account)
	}
}

// wake delivers now, or after the gap since the last delivery. ctx is the
// bot's: a delivery may run after the caller is gone. The queue is offered
// to outside n.mu: a refused offer takes n.mu to unschedule the agent, and
// taking it while held (wake runs on a notification worker, from appeared)
// stopped every notification worker for good once the queue was full (5,000
// agents in pircan bench: BENCHMARKS.md "Issue 24").
func (n *notifier) wake(ctx context.Context, agentID string) {
	n.mu.Lock()
	if n.scheduled[agentID] {
		n.mu.Unlock()
		return
	}
	n.scheduled[agentID] = true
	var at time.Time
	last, recent := n.last.Get(agentID, time.Now())
	if recent {
		at = *last
	}
	n.mu.Unlock()
	run := func() {
		if !n.offer(func() { n.deliver(ctx, agentID) }) {
			n.mu.Lock()
			delete(n.scheduled, agentID)
			n.mu.Unlock()
			n.b.log.Warn().Str("agent", agentID).Msg("notification workers busy; NOTIFY tried again later")
			n.retry(ctx, agentID)
		}
	}
	if !recent {
		run()
		return
	}
	time.AfterFunc(time.Until(at.Add(notifyGap)), run)
}

func (n *notifier) deliver(ctx context.Context, agentID string) {
	n.mu.Lock()
	delete(n.scheduled, agentID)
	if n.delivering[agentID] { // one delivery per agent at a time: try again after the gap
		n.mu.Unlock()
		time.AfterFunc(notifyGap, func() { n.wake(ctx, agentID) })
		return
	}
	n.delivering[agentID] = true
	now := time.Now()
	n.last.Put(agentID, now, now) // full: no gap is kept, nothing is lost
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.delivering, agentID)
		n.mu.Unlock()
	}()
	if ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	nick, account, release, failed := n.where(ctx, agentID)
	if failed {
		n.retry(ctx, agentID)
		return
	}
	if nick == "" {
		n.b.log.Debug().Str("agent", agentID).Msg("agent not visible; NOTIFY waits")
		return // not visible: it waits (up to 24 hours) for the agent to appear
	}
	notices, err := n.b.store.ClaimNotices(ctx, agentID)
	if err != nil {
		release() // no line follows
		n.b.log.Warn().Err(err).Str("agent", agentID).Msg("notifications not delivered; tried again later")
		n.retry(ctx, agentID)
		return
	}
	n.b.log.Debug().Str("agent", agentID).Str("account", account).Int("types", len(notices)).Msg("NOTIFY")
	replies := irc.NotifyReplies(notices)
	if len(replies) == 0 {
		release() // nothing left to say (read meanwhile)
		return
	}
	for i := range replies {
		kind, _ := replies[i].Fields[0].Value.(string)
		replies[i].Done = func(delivered bool) {
			if !delivered { // claimed, then the nick left the account: it waits again
				go n.requeue(ctx, agentID, kind)
			}
		}
	}
	n.b.reply(irc.Sender{Account: account}, replies)
}

// retry wakes agentID again after notifyGap. A delivery that failed for a
// passing reason (the database, a WHO unanswered, the workers full) is not
// woken again by the agent's next notification: the agent's wake row
// (schema 00071) keeps that one silent until a delivery claims.
func (n *notifier) retry(ctx context.Context, agentID string) {
	time.AfterFunc(notifyGap, func() {
		if ctx.Err() == nil {
			n.wake(ctx, agentID)
		}
	})
}

// requeue puts back a claimed notification whose NOTIFY was not written.
func (n *notifier) requeue(ctx context.Context, agentID, kind string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := n.b.store.NotifyAgent(ctx, agentID, kind); err != nil {
		n.b.log.Warn().Err(err).Str("agent", agentID).Str("type", kind).Msg("undelivered notification not queued again")
	}
}

// where finds the nick to notify: seen with one of the agent's accounts
// and, asked now, still logged in to it. The nick is then on the MONITOR
// list for the account's NOTIFYs: release takes it off when none follows.
// failed says no nick was found because the database or a WHO failed.
func (n *notifier) where(ctx context.Context, agentID string) (nick, account string, release func(), failed bool) {
	accounts, err := n.b.store.AccountsOf(ctx, agentID)
	if err != nil {
		return "", "", nil, true
	}
	for _, account := range accounts {
		nick, ok := n.b.conn.Presence().Nick(account)
		if !ok {
			continue
		}
		// Watched before the WHO: a hand-over after its answer shows as
		// MONITOR offline before the NOTIFY is written (transport.Conn.Watch).
		release := n.b.conn.Watch(irc.Sender{Account: account}, nick)
		now, online, err := n.b.conn.WhoAccount(ctx, nick)
		if err != nil {
			release()
			n.b.log.Debug().Err(err).Str("nick", nick).Msg("WHO failed; NOTIFY tried again later")
			failed = true
			continue
		}
		if !online || pircan.FoldAccount(now) != pircan.FoldAccount(account) {
			release()
			n.b.log.Debug().Str("nick", nick).Str("account", account).Bool("online", online).Msg("nick no longer holds the account; NOTIFY waits")
			n.b.conn.Presence().Forget(account, nick) // the nick left or changed hands
			continue
		}
		return nick, account, release, false
	}
	return "", "", nil, failed
}
