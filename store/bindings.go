package store

import (
	"context"
	"errors"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// Owner bindings (OWNER; DESIGN.md "Owners"): an agent names an owner
// account, which confirms or declines it in the portal. Audit actions:
// owner.named, owner.confirmed, owner.declined, owner.cleared (details.by:
// agent, owner or operator).

// OwnerBinding implements pircan.Store.
func (s *Store) OwnerBinding(ctx context.Context, agentID string) (*pircan.Binding, error) {
	var out *pircan.Binding
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		r, err := q.BindingOfAgent(ctx, agentID)
		if errors.Is(err, errNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		out = &pircan.Binding{Account: r.OwnerAccount, Status: r.Status, NamedAt: r.NamedAt}
		if r.DecidedAt.Valid {
			out.DecidedAt = r.DecidedAt.Time
		}
		if r.OwnerName != nil && r.OwnerVerification != nil {
			out.Owner = &pircan.Owner{Account: r.OwnerAccount, Name: *r.OwnerName, Verification: *r.OwnerVerification}
		}
		return nil
	})
	return out, err
}

// NameOwner implements pircan.Store.
func (s *Store) NameOwner(ctx context.Context, actor pircan.Actor, account string) (pircan.Binding, error) {
	var out pircan.Binding
	folded := foldAccount(account)
	defer s.agents.forget(actor.AgentID)
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		old, err := lockBinding(ctx, q, actor.AgentID)
		if err != nil {
			return err
		}
		if refusal := pircan.NameOwnerRule(account, old); refusal != nil {
			return refusal
		}
		replaced := old.Account
		at, err := q.UpsertBinding(ctx, db.UpsertBindingParams{AgentID: actor.AgentID, OwnerFolded: folded, OwnerAccount: account})
		if err != nil {
			return err
		}
		out = pircan.Binding{Account: account, Status: pircan.BindingPending, NamedAt: at}
		details := map[string]any{"owner_account": account}
		if replaced != "" {
			details["replaced"] = replaced
		}
		return audit(ctx, q, actor, "owner.named", actor.AgentID, details)
	})
	return out, err
}

// lockBinding reads the agent's owner binding for the core's rules, its
// row locked (none: zero facts).
func lockBinding(ctx context.Context, q *db.Queries, agentID string) (pircan.BindingFacts, error) {
	old, err := q.LockBindingOfAgent(ctx, db.LockBindingOfAgentParams{Cooldown: pircan.DeclineCooldown, AgentID: agentID})
	if errors.Is(err, errNoRows) {
		return pircan.BindingFacts{}, nil
	}
	return pircan.BindingFacts{Account: old.OwnerAccount, Status: old.Status, DecidedRecently: old.Recent}, err
}

// ClearOwner implements pircan.Store.
func (s *Store) ClearOwner(ctx context.Context, actor pircan.Actor) (*pircan.Binding, error) {
	var out *pircan.Binding
	defer s.agents.forget(actor.AgentID)
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		old, err := lockBinding(ctx, q, actor.AgentID)
		if err != nil || old.Status == "" {
			return err
		}
		if refusal := pircan.ClearOwnerRule(old); refusal != nil {
			return refusal
		}
		if _, err := q.DeleteBinding(ctx, db.DeleteBindingParams{AgentID: actor.AgentID,
			Statuses: []string{pircan.BindingPending, pircan.BindingDeclined}}); err != nil {
			return err
		}
		out = &pircan.Binding{Account: old.Account, Status: old.Status}
		return audit(ctx, q, actor, "owner.cleared", actor.AgentID,
			map[string]any{"by": "agent", "owner_account": old.Account, "status": old.Status})
	})
	return out, err
}

// PendingBindings lists the agents waiting for account to confirm it as
// their owner.
func (s *Store) PendingBindings(ctx context.Context, account string) ([]pircan.PendingBinding, error) {
	return readRows(ctx, s, (*db.Queries).PendingBindingsFor, foldAccount(account), func(r db.PendingBindingsForRow) pircan.PendingBinding {
		return pircan.PendingBinding{AgentID: r.ID, Name: r.Name, Description: r.Description, AgentAccount: r.AgentAccount, NamedAt: r.NamedAt}
	})
}

// DecideBinding confirms or declines, as the named account from a portal
// session, an agent's pending binding: ErrNotFound unless one is pending
// for that account.
func (s *Store) DecideBinding(ctx context.Context, account, session, agentID string, confirm bool) error {
	status, action := pircan.BindingDeclined, "owner.declined"
	if confirm {
		status, action = pircan.BindingConfirmed, "owner.confirmed"
	}
	defer s.agents.forget(agentID)
	return s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		n, err := q.DecideBinding(ctx, db.DecideBindingParams{Status: status, AgentID: agentID, OwnerFolded: foldAccount(account)})
		if err != nil {
			return err
		}
		if n == 0 {
			return pircan.ErrNotFound
		}
		return audit(ctx, q, pircan.Actor{Account: account, Session: session}, action, agentID, map[string]any{"owner_account": account})
	})
}

// ReleaseAgent ends, as its confirmed owner from a portal session, the
// binding of an agent: the agent's own account acts as owner again.
func (s *Store) ReleaseAgent(ctx context.Context, account, session, agentID string) error {
	defer s.agents.forget(agentID)
	return s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		n, err := q.ReleaseBinding(ctx, db.ReleaseBindingParams{AgentID: agentID, OwnerFolded: foldAccount(account)})
		if err != nil {
			return err
		}
		if n == 0 {
			return pircan.ErrNotFound
		}
		return audit(ctx, q, pircan.Actor{Account: account, Session: session}, "owner.cleared", agentID,
			map[string]any{"by": "owner", "owner_account": account, "status": pircan.BindingConfirmed})
	})
}

// ClearOwnerByOperator removes any binding of an agent (pircan owner clear):
// the way out when a confirmed owner is gone. It returns the binding that
// was removed, or nil.
func (s *Store) ClearOwnerByOperator(ctx context.Context, actor pircan.Actor, agentID string) (*pircan.Binding, error) {
	var out *pircan.Binding
	defer s.agents.forget(agentID)
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		old, err := q.LockBindingOfAgent(ctx, db.LockBindingOfAgentParams{Cooldown: pircan.DeclineCooldown, AgentID: agentID})
		if errors.Is(err, errNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := q.DeleteBinding(ctx, db.DeleteBindingParams{AgentID: agentID,
			Statuses: []string{pircan.BindingPending, pircan.BindingDeclined, pircan.BindingConfirmed}}); err != nil {
			return err
		}
		out = &pircan.Binding{Account: old.OwnerAccount, Status: old.Status}
		return audit(ctx, q, actor, "owner.cleared", agentID,
			map[string]any{"by": "operator", "owner_account": old.OwnerAccount, "status": old.Status})
	})
	return out, err
}
