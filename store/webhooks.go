package store

import (
	"context"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// Webhooks (DESIGN.md "Webhooks"): the agent's registrations here, and the
// deliverer's side (pircan/webhook): claiming due deliveries and recording
// how they went. Deliveries are queued by a trigger on notifications
// (schema/00009_webhooks.sql), in the transaction of the change.

var _ pircan.WebhookStore = (*Store)(nil)

// AddWebhook registers url for the actor's agent, counting its webhooks
// under the agent's row lock so that racing registrations cannot pass max.
func (s *Store) AddWebhook(ctx context.Context, actor pircan.Actor, rawURL, secret string, max int) (pircan.Webhook, error) {
	var w pircan.Webhook
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		if err := q.LockAgent(ctx, actor.AgentID); err != nil {
			return err
		}
		if n, err := q.CountWebhooks(ctx, actor.AgentID); err != nil || n >= int64(max) {
			return orErr(err, pircan.ErrTooManyPending)
		}
		row, err := q.InsertWebhook(ctx, db.InsertWebhookParams{AgentID: actor.AgentID, Url: rawURL, Secret: secret})
		if err != nil {
			return err
		}
		w = pircan.Webhook{ID: row.ID, AgentID: actor.AgentID, URL: rawURL, CreatedAt: row.CreatedAt}
		return audit(ctx, q, actor, "webhook.registered", row.ID, map[string]any{"host": urlHost(rawURL)})
	})
	return w, err
}

// Webhooks lists an agent's webhooks, oldest first.
func (s *Store) Webhooks(ctx context.Context, agentID string) ([]pircan.Webhook, error) {
	return readRows(ctx, s, (*db.Queries).ListWebhooks, agentID, func(r db.ListWebhooksRow) pircan.Webhook {
		w := pircan.Webhook{ID: r.ID, AgentID: r.AgentID, URL: r.Url, CreatedAt: r.CreatedAt, Failures: int(r.Failures)}
		if r.LastError != nil {
			w.LastError = *r.LastError
		}
		if r.DisabledAt.Valid {
			w.DisabledAt = r.DisabledAt.Time
		}
		return w
	})
}

// DeleteWebhook removes one of the actor's agent's webhooks and what waits
// for it (ErrNotFound for any other id).
func (s *Store) DeleteWebhook(ctx context.Context, actor pircan.Actor, id string) error {
	return s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		u, err := q.DeleteWebhook(ctx, db.DeleteWebhookParams{ID: id, AgentID: actor.AgentID})
		if err != nil {
			return notFound(err)
		}
		return audit(ctx, q, actor, "webhook.deleted", id, map[string]any{"host": urlHost(u)})
	})
}

// urlHost is what the audit log keeps of a webhook URL: its path or query
// may carry the receiver's own token.
func urlHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

var _ pircan.DeliveryStore = (*Store)(nil)

// claimCandidates is how many of the oldest due rows a claim ranks per
// delivery it may take or webhook it has on the wire: a webhook has at
// most one row per notification type (T of them), of which a claim takes
// at least one, so T+1 per row wanted and per busy webhook leave enough
// claimable whatever the order, and the claim's cost does not grow with
// the backlog.
var claimCandidates = len(pircan.NotifyTypes) + 1

// ClaimDeliveries takes up to c.Limit due deliveries for this process and
// leases them; the counts are read in the same transaction.
func (s *Store) ClaimDeliveries(ctx context.Context, c pircan.DeliveryClaim) ([]pircan.WebhookDelivery, error) {
	var out []pircan.WebhookDelivery
	ids := make([]string, 0, len(c.InFlight))
	counts := make([]int32, 0, len(c.InFlight))
	for id, n := range c.InFlight {
		ids, counts = append(ids, id), append(counts, int32(n))
	}
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.ClaimDeliveries(ctx, db.ClaimDeliveriesParams{Now: c.Now, ExpiredBefore: c.Expired,
			LeaseUntil: c.LeaseUntil, MaxRows: int32(c.Limit), PerWebhook: int32(c.PerWebhook), BusyIds: ids, BusyCounts: counts,
			Candidates: int32(claimCandidates * (c.Limit + len(c.InFlight)))})
		if err != nil {
			return err
		}
		for _, r := range rows {
			n, err := noticeCount(ctx, q, r.AgentID, r.Type)
			if err != nil {
				return err
			}
			out = append(out, pircan.WebhookDelivery{ID: r.ID, WebhookID: r.WebhookID, URL: r.Url, Secret: r.Secret,
				AgentID: r.AgentID, Type: r.Type, Count: n, Attempts: int(r.Attempts), FirstAt: r.FirstAt, Events: int(r.Events)})
		}
		return nil
	})
	return out, err
}

// delivered ends a delivery that was POSTed: done, unless an event came in
// while it was on the wire (then a new delivery is due).
func delivered(ctx context.Context, q *db.Queries, d pircan.WebhookDelivery) error {
	n, err := q.DeleteDelivered(ctx, db.DeleteDeliveredParams{ID: d.ID, Events: int32(d.Events)})
	if err != nil || n > 0 {
		return err
	}
	return q.RequeueDelivered(ctx, d.ID)
}

// DeliverySucceeded ends a delivery and the webhook's run of failures.
func (s *Store) DeliverySucceeded(ctx context.Context, d pircan.WebhookDelivery) error {
	return s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		if err := delivered(ctx, q, d); err != nil {
			return err
		}
		return q.WebhookSucceeded(ctx, d.WebhookID)
	})
}

// DeliveryFailed records a failed (or too slow) attempt: the delivery is
// due again at f.Retry (or done, if f.Delivered), the webhook's run of
// failures grows and it pauses until f.Pause of it; at f.MaxFailures the
// webhook is disabled and what waits for it dropped. disabled says so.
func (s *Store) DeliveryFailed(ctx context.Context, d pircan.WebhookDelivery, f pircan.DeliveryFailure) (disabled bool, err error) {
	err = s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		if f.Delivered {
			if err := delivered(ctx, q, d); err != nil {
				return err
			}
		} else if err := q.RetryDelivery(ctx, db.RetryDeliveryParams{ID: d.ID, NextAttemptAt: f.Retry}); err != nil {
			return err
		}
		w, err := q.WebhookFailed(ctx, db.WebhookFailedParams{ID: d.WebhookID, LastError: &f.Error})
		if err != nil {
			return notFound(err) // deleted meanwhile
		}
		if int(w.Failures) < f.MaxFailures {
			until := f.Pause(int(w.Failures))
			if err := q.PauseWebhook(ctx, db.PauseWebhookParams{ID: d.WebhookID, PausedUntil: pgtype.Timestamptz{Time: until, Valid: true}}); err != nil {
				return err
			}
			return q.DeferWebhookDeliveries(ctx, db.DeferWebhookDeliveriesParams{WebhookID: d.WebhookID, PausedUntil: until})
		}
		disabled = true
		if err := q.DisableWebhook(ctx, d.WebhookID); err != nil {
			return err
		}
		if err := q.DropWebhookDeliveries(ctx, d.WebhookID); err != nil {
			return err
		}
		return audit(ctx, q, pircan.Actor{AgentID: w.AgentID}, "webhook.disabled", d.WebhookID,
			map[string]any{"host": urlHost(w.Url), "failures": w.Failures})
	})
	return disabled, err
}

// DropExpired deletes the deliveries first queued before before (their
// time to be retried is over) and says how many.
func (s *Store) DropExpired(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		var err error
		n, err = q.DropExpiredDeliveries(ctx, before)
		return err
	})
	return n, err
}
