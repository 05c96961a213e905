package server

import (
	"context"
	"sync"
	"time"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/ircconn"
)

// notifyGap is the least time between two NOTIFY deliveries to one agent:
// a burst of events becomes one line per type with the current count.
const notifyGap = 2 * time.Second

// notifier delivers waiting notifications to the nick PIRCAN has seen
// using the agent's account, after asking the server that the nick still
// belongs to that account (a nick can change hands unseen).
type notifier struct {
	b *Bot

	mu        sync.Mutex
	last      map[string]time.Time // agent → last delivery
	scheduled map[string]bool      // agent → a delayed delivery is set
}

func newNotifier(b *Bot) *notifier {
	return &notifier{b: b, last: map[string]time.Time{}, scheduled: map[string]bool{}}
}

// observe wakes delivery for an account that (re)appears; the transport
// keeps presence itself, as it reads each event (ircconn.Event.Fresh).
func (n *notifier) observe(ctx context.Context, ev ircconn.Event) {
	if account := ev.Sender.Account; ev.Fresh && account != "" {
		n.b.jobs.submit("appear:"+pircan.FoldAccount(account), func() { n.appeared(ctx, account) })
	}
}

// appeared wakes delivery for the agent bound to account, if any.
func (n *notifier) appeared(ctx context.Context, account string) {
	lookup, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	agent, err := n.b.store.AgentByAccount(lookup, account)
	n.b.log.Debug().Err(err).Str("account", account).Msg("account appeared")
	if err == nil {
		n.wake(ctx, agent.ID)
	}
}

// wake delivers now, or after the gap since the last delivery. ctx is the
// bot's: a delivery may run after the caller is gone.
func (n *notifier) wake(ctx context.Context, agentID string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.scheduled[agentID] {
		return
	}
	n.scheduled[agentID] = true
	wait := time.Until(n.last[agentID].Add(notifyGap))
	run := func() {
		n.b.jobs.submit("notify:"+agentID, func() { n.deliver(ctx, agentID) })
	}
	if wait <= 0 {
		run()
		return
	}
	time.AfterFunc(wait, run)
}

func (n *notifier) deliver(ctx context.Context, agentID string) {
	n.mu.Lock()
	delete(n.scheduled, agentID)
	n.last[agentID] = time.Now()
	if len(n.last) > 10000 {
		for id, at := range n.last {
			if time.Since(at) > notifyGap {
				delete(n.last, id)
			}
		}
	}
	n.mu.Unlock()
	if ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	nick, account := n.where(ctx, agentID)
	if nick == "" {
		n.b.log.Debug().Str("agent", agentID).Msg("agent not visible; NOTIFY waits")
		return // not visible: it waits (up to 24 hours) for the agent to appear
	}
	notices, err := n.b.store.ClaimNotices(ctx, agentID)
	if err != nil {
		n.b.log.Warn().Err(err).Str("agent", agentID).Msg("notifications not delivered; will retry when the agent appears")
		return
	}
	n.b.log.Debug().Str("agent", agentID).Str("account", account).Int("types", len(notices)).Msg("NOTIFY")
	replies := pircan.NotifyReplies(notices)
	for i := range replies {
		kind, _ := replies[i].Fields[0].Value.(string)
		replies[i].Done = func(delivered bool) {
			if !delivered { // claimed, then the nick left the account: it waits again
				go n.requeue(ctx, agentID, kind)
			}
		}
	}
	n.b.reply(pircan.Sender{Account: account}, replies)
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
// and, asked now, still logged in to it.
func (n *notifier) where(ctx context.Context, agentID string) (nick, account string) {
	accounts, err := n.b.store.AccountsOf(ctx, agentID)
	if err != nil {
		return "", ""
	}
	for _, account := range accounts {
		nick, ok := n.b.conn.Presence().Nick(account)
		if !ok {
			continue
		}
		now, online, err := n.b.conn.WhoAccount(ctx, nick)
		if err != nil {
			n.b.log.Debug().Err(err).Str("nick", nick).Msg("WHO failed; NOTIFY waits")
			continue
		}
		if !online || pircan.FoldAccount(now) != pircan.FoldAccount(account) {
			n.b.log.Debug().Str("nick", nick).Str("account", account).Bool("online", online).Msg("nick no longer holds the account; NOTIFY waits")
			n.b.conn.Presence().Forget(account) // the nick left or changed hands
			continue
		}
		return nick, account
	}
	return "", ""
}
