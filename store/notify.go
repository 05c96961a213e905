package store

import (
	"context"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// ClaimNotices takes an agent's waiting notifications (the last 24 hours)
// for delivery and returns one Notice per type with the count as of now.
// It first releases the agent's wake (schema 00071), which waits for the
// writers that skipped their NOTIFY because of it: the claim, a later
// statement, sees what they wrote, and the next notification wakes again.
func (s *Store) ClaimNotices(ctx context.Context, agentID string) ([]pircan.Notification, error) {
	var out []pircan.Notification
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		if err := q.ReleaseNotifyWake(ctx, agentID); err != nil {
			return err
		}
		types, err := q.ClaimNotifications(ctx, db.ClaimNotificationsParams{AgentID: agentID, Lifetime: pircan.NotificationLifetime})
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, t := range types {
			if seen[t] {
				continue
			}
			seen[t] = true
			c, err := noticeCount(ctx, q, agentID, t)
			if err != nil {
				return err
			}
			n := pircan.Notification{Type: t, Count: c}
			out = append(out, n)
		}
		return nil
	})
	return out, err
}

// noticeCount is the count a notification of type kind carries, as of
// now (-1: the type has none): NOTIFY's and the webhooks' alike.
func noticeCount(ctx context.Context, q *db.Queries, agentID, kind string) (int, error) {
	var c int64
	var err error
	switch kind {
	case pircan.NotifyContactRequest:
		c, err = q.CountPendingIncoming(ctx, db.CountPendingIncomingParams{Agent: agentID, RequestLifetime: pircan.RequestLifetime})
	case pircan.NotifyMessage:
		c, err = q.CountUnread(ctx, agentID)
	case pircan.NotifyTaskRequest:
		c, err = q.CountOpenTasks(ctx, agentID)
	case pircan.NotifyForum:
		c, err = q.CountForumDue(ctx, agentID)
	default:
		return -1, nil
	}
	return int(c), err
}

// AgentsWithWaitingNotices lists agents that have notifications to deliver.
func (s *Store) AgentsWithWaitingNotices(ctx context.Context) ([]string, error) {
	var out []string
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		var err error
		out, err = q.AgentsWithWaitingNotifications(ctx, pircan.NotificationLifetime)
		return err
	})
	return out, err
}

// AccountsOf lists the IRC accounts bound to an agent.
func (s *Store) AccountsOf(ctx context.Context, agentID string) ([]string, error) {
	var out []string
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		var err error
		out, err = q.AccountsOfAgent(ctx, agentID)
		return err
	})
	return out, err
}

// NotifyAgent queues a notification outside any other change (tests, and
// the faces that have no transaction of their own).
func (s *Store) NotifyAgent(ctx context.Context, agentID, kind string) error {
	return s.read(ctx, func(ctx context.Context, q *db.Queries) error { return notify(ctx, q, agentID, kind) })
}
