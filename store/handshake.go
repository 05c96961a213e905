package store

import (
	"context"
	"errors"
	"time"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// Policy implements pircan.Store.
func (s *Store) Policy(ctx context.Context, agentID string) (string, bool, error) {
	var policy string
	var locked bool
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		row, err := q.AgentPolicy(ctx, agentID)
		policy, locked = row.Policy, row.PolicyLocked
		return notFound(err)
	})
	return policy, locked, err
}

// SetPolicy implements pircan.Store. An owner's change (actor.ByOwner)
// locks owner-decides; the agent's own change is refused while locked.
func (s *Store) SetPolicy(ctx context.Context, actor pircan.Actor, policy string) error {
	return s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		if actor.ByOwner {
			if err := q.SetOwnerPolicy(ctx, db.SetOwnerPolicyParams{ID: actor.AgentID, Policy: policy}); err != nil {
				return err
			}
		} else {
			n, err := q.SetPolicy(ctx, db.SetPolicyParams{ID: actor.AgentID, Policy: policy})
			if err != nil {
				return err
			}
			if n == 0 {
				return pircan.ErrNotAuthorized
			}
		}
		return audit(ctx, q, actor, "policy.set", actor.AgentID, map[string]any{"policy": policy, "by_owner": actor.ByOwner})
	})
}

// Contact implements pircan.Store: it reads CONTACT's facts inside one
// transaction, with the requester's row locked, and files what the core's
// rule decides (pircan.ContactRule).
func (s *Store) Contact(ctx context.Context, actor pircan.Actor, r pircan.NewContact, rule pircan.ContactRule) (pircan.ContactResult, error) {
	var res pircan.ContactResult
	me := actor.AgentID
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		f, err := contactFacts(ctx, q, me, r.To)
		if err != nil {
			return err
		}
		outcome, perr := rule.Decide(me, r, f)
		if perr != nil {
			return perr
		}
		status, decidedBy := outcome.Status, (*string)(nil)
		if outcome.ByPolicy {
			decidedBy = ptr("policy")
		}
		row, err := q.InsertContactRequest(ctx, db.InsertContactRequestParams{FromAgent: me, ToAgent: r.To,
			Purpose: r.Purpose, Scopes: r.Scopes, TtlDays: int32(r.TTLDays), Status: status, DecidedBy: decidedBy})
		if err != nil {
			if isUniqueViolation(err) {
				return pircan.ErrDuplicateRequest // a racing CONTACT to the same target
			}
			return err
		}
		res = pircan.ContactResult{RequestID: row.ID, Status: status}
		if err := audit(ctx, q, actor, "contact.request", row.ID, map[string]any{"to": r.To, "scopes": r.Scopes,
			"ttl_days": r.TTLDays, "purpose_bytes": len(r.Purpose), "status": status}); err != nil {
			return err
		}
		switch status {
		case "pending":
			return notify(ctx, q, r.To, pircan.NotifyContactRequest)
		case "accepted":
			g, err := createAgreement(ctx, q, actor, row.ID, me, r.To, r.Scopes, r.TTLDays)
			res.AgreementID = g.ID
			if err != nil {
				return err
			}
			return notify(ctx, q, r.To, pircan.NotifyAgreement)
		}
		return nil
	})
	return res, err
}

// contactFacts reads what CONTACT's rule decides by, with the requester's
// row locked (so its racing requests are counted) and its stale requests to
// the target expired first.
func contactFacts(ctx context.Context, q *db.Queries, me, to string) (pircan.ContactFacts, error) {
	var f pircan.ContactFacts
	target, err := q.AgentPolicy(ctx, to)
	if errors.Is(err, errNoRows) {
		return f, nil // no such agent: no policy
	}
	if err != nil {
		return f, err
	}
	f.TargetPolicy = target.Policy
	if err := q.LockAgent(ctx, me); err != nil {
		return f, err
	}
	pair := db.ExpireStaleRequestsParams{FromAgent: me, ToAgent: to, RequestLifetime: pircan.RequestLifetime}
	if err := q.ExpireStaleRequests(ctx, pair); err != nil {
		return f, err
	}
	n, err := q.CountRequestsLastHour(ctx, db.CountRequestsLastHourParams{FromAgent: me, Span: pircan.HourWindow})
	if err != nil {
		return f, err
	}
	f.RequestsHour = int(n)
	if f.Pending, err = q.HasPendingRequest(ctx, db.HasPendingRequestParams(pair)); err != nil {
		return f, err
	}
	active, err := q.ActiveAgreementsBetween(ctx, db.ActiveAgreementsBetweenParams{A: me, B: to})
	if err != nil {
		return f, err
	}
	f.Active = agreementScopes(active)
	if f.DeclinedRecently, err = q.DeclinedRecently(ctx, db.DeclinedRecentlyParams{FromAgent: me, ToAgent: to, Cooldown: pircan.DeclineCooldown}); err != nil {
		return f, err
	}
	n, err = q.CountPendingOutgoing(ctx, db.CountPendingOutgoingParams{FromAgent: me, RequestLifetime: pircan.RequestLifetime})
	f.PendingOutgoing = int(n)
	return f, err
}

func createAgreement(ctx context.Context, q *db.Queries, actor pircan.Actor, requestID, requester, target string, scopes []string, ttl int) (db.InsertAgreementRow, error) {
	g, err := q.InsertAgreement(ctx, db.InsertAgreementParams{RequestID: requestID, Requester: requester,
		Target: target, Scopes: scopes, TtlDays: int32(ttl)})
	if err != nil {
		if isUniqueViolation(err) {
			return g, pircan.ErrNotPending // the request already has its agreement
		}
		return g, err
	}
	return g, audit(ctx, q, actor, "agreement.create", g.ID, map[string]any{"request_id": requestID,
		"requester": requester, "target": target, "scopes": scopes, "ttl_days": ttl})
}

func agreementScopes(rows []db.ActiveAgreementsBetweenRow) []pircan.AgreementScopes {
	out := make([]pircan.AgreementScopes, len(rows))
	for i, r := range rows {
		out[i] = pircan.AgreementScopes{Requester: r.Requester, Scopes: r.Scopes}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// Contacts implements pircan.Store.
func (s *Store) Contacts(ctx context.Context, agentID string, incoming bool, status string, limit, offset int) ([]pircan.ContactItem, int, error) {
	var out []pircan.ContactItem
	total := 0
	err := s.readPlanned(ctx, func(ctx context.Context, q *db.Queries) error {
		p := db.ListContactsParams{RequestLifetime: pircan.RequestLifetime, Incoming: incoming, Agent: agentID, Status: status, Lim: int32(limit), Off: int32(offset)}
		rows, err := q.ListContacts(ctx, p)
		for _, r := range rows {
			out = append(out, pircan.ContactItem{RequestID: r.ID, Other: pircan.PartyRef{AgentID: r.OtherID, Name: r.OtherName},
				Purpose: r.Purpose, Scopes: r.Scopes, TTLDays: int(r.TtlDays), Status: r.Status, ExpiresAt: r.ExpiresAt})
			total = int(r.Total)
		}
		if err == nil && len(rows) == 0 && offset > 0 {
			p.Off, p.Lim = 0, 1
			if rows, err = q.ListContacts(ctx, p); err == nil && len(rows) > 0 {
				total = int(rows[0].Total)
			}
		}
		return err
	})
	return out, total, err
}

// Decide implements pircan.Store: the request row is locked, so of two
// racing decisions one wins and the other finds it no longer pending.
func (s *Store) Decide(ctx context.Context, actor pircan.Actor, d pircan.Decision) (pircan.DecisionResult, error) {
	var res pircan.DecisionResult
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		req, err := q.LockRequest(ctx, db.LockRequestParams{RequestLifetime: pircan.RequestLifetime, ID: d.RequestID})
		if err != nil {
			return notFound(err)
		}
		out, err := pircan.DecideRequest(actor, d, pircan.DecisionFacts{From: req.FromAgent, To: req.ToAgent,
			Status: req.Status, Expired: req.Expired, Scopes: req.Scopes, TTLDays: int(req.TtlDays), TargetPolicy: req.TargetPolicy})
		if err != nil {
			return err
		}
		var decidedBy *string
		if out.DecidedBy != "" {
			decidedBy = &out.DecidedBy
		}
		if err := q.DecideRequest(ctx, db.DecideRequestParams{ID: req.ID, Status: out.Status, DecidedBy: decidedBy}); err != nil {
			return err
		}
		if err := audit(ctx, q, actor, "contact."+d.Kind, req.ID, map[string]any{"by_owner": actor.ByOwner}); err != nil {
			return err
		}
		switch d.Kind {
		case pircan.DecideCancel:
			return notify(ctx, q, req.ToAgent, pircan.NotifyContactUpdate)
		case pircan.DecideDecline:
			return notify(ctx, q, req.FromAgent, pircan.NotifyContactUpdate)
		}
		g, err := createAgreement(ctx, q, actor, req.ID, req.FromAgent, req.ToAgent, out.Scopes, out.TTLDays)
		if err != nil {
			return err
		}
		res = pircan.DecisionResult{AgreementID: g.ID, Scopes: out.Scopes, ExpiresAt: g.ExpiresAt}
		if !actor.ByOwner {
			return notify(ctx, q, req.FromAgent, pircan.NotifyContactUpdate)
		}
		// The agent itself learns of its owner's decision too. The two go in
		// agent-id order: each takes its agent's wake row (schema 00071),
		// and two decisions between the same two agents in opposite
		// directions would otherwise take them in opposite orders.
		notes := [][2]string{{req.FromAgent, pircan.NotifyContactUpdate}, {req.ToAgent, pircan.NotifyAgreement}}
		if notes[1][0] < notes[0][0] {
			notes[0], notes[1] = notes[1], notes[0]
		}
		for _, n := range notes {
			if err := notify(ctx, q, n[0], n[1]); err != nil {
				return err
			}
		}
		return nil
	})
	return res, err
}

// Agreements implements pircan.Store.
func (s *Store) Agreements(ctx context.Context, agentID string, includeEnded bool, limit, offset int) ([]pircan.AgreementItem, int, error) {
	var out []pircan.AgreementItem
	total := 0
	err := s.readPlanned(ctx, func(ctx context.Context, q *db.Queries) error {
		p := db.ListAgreementsParams{Agent: agentID, IncludeEnded: includeEnded, Lim: int32(limit), Off: int32(offset)}
		rows, err := q.ListAgreements(ctx, p)
		for _, r := range rows {
			out = append(out, pircan.AgreementItem{AgreementID: r.ID,
				With: pircan.PartyRef{AgentID: r.OtherID, Name: r.OtherName, IRCAccounts: r.IrcAccounts},
				Role: r.Role, Scopes: r.Scopes, Status: r.Status, ExpiresAt: r.ExpiresAt})
			total = int(r.Total)
		}
		if err == nil && len(rows) == 0 && offset > 0 {
			p.Off, p.Lim = 0, 1
			if rows, err = q.ListAgreements(ctx, p); err == nil && len(rows) > 0 {
				total = int(rows[0].Total)
			}
		}
		return err
	})
	return out, total, err
}

// Revoke implements pircan.Store.
func (s *Store) Revoke(ctx context.Context, actor pircan.Actor, agreementID string) error {
	return s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		g, err := q.LockAgreement(ctx, agreementID)
		if err != nil {
			return notFound(err)
		}
		if g.Requester != actor.AgentID && g.Target != actor.AgentID {
			return pircan.ErrNotFound
		}
		if !g.Active {
			return pircan.ErrNotActive
		}
		if err := q.RevokeAgreement(ctx, db.RevokeAgreementParams{ID: g.ID, RevokedBy: &actor.AgentID}); err != nil {
			return err
		}
		if err := audit(ctx, q, actor, "agreement.revoke", g.ID, map[string]any{"by_owner": actor.ByOwner}); err != nil {
			return err
		}
		other := g.Requester
		if other == actor.AgentID {
			other = g.Target
		}
		return notify(ctx, q, other, pircan.NotifyAgreement)
	})
}

// notify queues a content-free notification in the caller's transaction.
func notify(ctx context.Context, q *db.Queries, agentID, kind string) error {
	return q.InsertNotification(ctx, db.InsertNotificationParams{AgentID: agentID, Type: kind})
}

// orErr returns err if the query failed, else the rule's error.
// countLimited is a counted limit's rule error with the wait the counting
// query read (microseconds until its oldest counted row leaves the window).
func countLimited(rule error, waitUS int64) error {
	return &pircan.CountLimited{Rule: rule, Wait: time.Duration(waitUS) * time.Microsecond}
}

func orErr(err, rule error) error {
	if err != nil {
		return err
	}
	return rule
}
