package store

import (
	"context"
	"errors"
	"slices"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// Owner sign-in and the owner portal's reads and actions.

// StartSignIn implements the portal's sign-in start (a browser asked for a
// code): at most limit unused codes per hour per address, counted from the
// rows; codes that were used to sign in do not count. Over the limit it
// returns pircan.ErrRateLimited and, in out.RetryAt, when the oldest unused
// code leaves the hour. It picks the code.
func (s *Store) StartSignIn(ctx context.Context, in pircan.NewSignIn, limit int) (pircan.PortalSession, error) {
	var out pircan.PortalSession
	var rule error
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		if err := q.LockSignInStarts(ctx, in.Address); err != nil {
			return err
		}
		c, err := q.CountSignInStarts(ctx, db.CountSignInStartsParams{Span: pircan.HourWindow, Address: in.Address})
		if err != nil {
			return err
		}
		if c.N >= int64(limit) {
			rule = pircan.ErrRateLimited
			out.RetryAt = c.FreesAt
			return audit(ctx, q, pircan.Actor{}, "owner.sign_in.rate_limited", "", map[string]any{"address": in.Address})
		}
		// A code names one waiting browser: on the (rare) clash with a
		// waiting code, draw again.
		for range 5 {
			code := pircan.NewSignInCode()
			row, err := q.InsertPortalSession(ctx, db.InsertPortalSessionParams{SecretSha256: in.SecretSHA256, Code: code,
				CsrfToken: in.CSRFToken, Address: in.Address, UserAgent: in.UserAgent})
			if errors.Is(err, errNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			out = pircan.PortalSession{ID: row.ID, Code: code, CSRFToken: in.CSRFToken, Address: in.Address,
				UserAgent: in.UserAgent, CreatedAt: row.CreatedAt, Waiting: true}
			return audit(ctx, q, pircan.Actor{}, "owner.sign_in.start", row.ID, map[string]any{"address": in.Address})
		}
		return errors.New("no free sign-in code after 5 draws")
	})
	if err == nil && rule != nil {
		return out, rule
	}
	return out, err
}

// KnownAccount reports whether PIRCAN has seen account: as an agent's, as a
// portal owner, or named as an owner (pircan owner verify refuses others).
func (s *Store) KnownAccount(ctx context.Context, account string) (bool, error) {
	var known bool
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) (err error) {
		known, err = q.AccountKnown(ctx, foldAccount(account))
		return err
	})
	return known, err
}

// PortalSession returns the session a cookie's secret hash names, as of now.
func (s *Store) PortalSession(ctx context.Context, secretSHA256 []byte) (pircan.PortalSession, error) {
	arg := db.PortalSessionBySecretParams{CodeLifetime: pircan.CodeLifetime, SecretSha256: secretSHA256}
	return readOne(ctx, s, (*db.Queries).PortalSessionBySecret, arg, func(r db.PortalSessionBySecretRow) pircan.PortalSession {
		out := pircan.PortalSession{ID: r.ID, Code: r.Code, CSRFToken: r.CsrfToken, Address: r.Address,
			UserAgent: r.UserAgent, CreatedAt: r.CreatedAt, Waiting: r.Waiting, Active: r.Active}
		if r.Account != nil {
			out.Account = *r.Account
		}
		if r.ExpiresAt.Valid {
			out.ExpiresAt = r.ExpiresAt.Time
		}
		return out
	})
}

// Login implements pircan.Store. A wrong, expired or used code changes
// nothing but the attempt count, which is committed with the refusal.
func (s *Store) Login(ctx context.Context, account, code string, l pircan.Limits) (pircan.LoginResult, error) {
	var res pircan.LoginResult
	var rule error
	folded := foldAccount(account)
	actor := pircan.Actor{Account: account}
	defer s.agents.forget("*") // EnsureOwner: the account now owns its own agent
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		if err := q.LockLoginAttempts(ctx, folded); err != nil {
			return err
		}
		n, err := q.CountLoginAttempts(ctx, db.CountLoginAttemptsParams{AccountFolded: folded, Span: pircan.HourWindow})
		if err != nil {
			return err
		}
		if n >= int64(l.LoginsHour) {
			rule = pircan.ErrRateLimited
			return audit(ctx, q, actor, "owner.login.rate_limited", "", nil)
		}
		w, err := q.LockWaitingByCode(ctx, db.LockWaitingByCodeParams{Code: code, CodeLifetime: pircan.CodeLifetime})
		if errors.Is(err, errNoRows) {
			rule = pircan.ErrNotFound
			if err := q.InsertLoginAttempt(ctx, db.InsertLoginAttemptParams{AccountFolded: folded, Ok: false}); err != nil {
				return err
			}
			return audit(ctx, q, actor, "owner.login.failed", "", nil)
		}
		if err != nil {
			return err
		}
		if err := q.InsertLoginAttempt(ctx, db.InsertLoginAttemptParams{AccountFolded: folded, Ok: true}); err != nil {
			return err
		}
		a, err := q.ApprovePortalSession(ctx, db.ApprovePortalSessionParams{AccountFolded: folded, Account: account,
			SessionLifetime: pircan.SessionLifetime, ID: w.ID})
		if err != nil {
			return err
		}
		if err := q.EnsureOwner(ctx, db.EnsureOwnerParams{AccountFolded: folded, Account: account}); err != nil {
			return err
		}
		res = pircan.LoginResult{SessionID: w.ID, Account: account, Browser: w.UserAgent, StartedAt: w.CreatedAt, ExpiresAt: a.ExpiresAt}
		return audit(ctx, q, actor, "owner.sign_in", w.ID, map[string]any{"address": w.Address,
			"browser_bytes": len(w.UserAgent), "expires_at": a.ExpiresAt})
	})
	if err == nil && rule != nil {
		return res, rule
	}
	return res, err
}

// Logout implements pircan.Store.
func (s *Store) Logout(ctx context.Context, account string) (int, error) {
	n := 0
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		ids, err := q.EndAccountSessions(ctx, foldAccount(account))
		if err != nil {
			return err
		}
		n = len(ids)
		return audit(ctx, q, pircan.Actor{Account: account}, "owner.logout", "", map[string]any{"sessions_ended": n, "sessions": ids})
	})
	return n, err
}

// Owner returns the owner of an account, or nil when it has none yet.
func (s *Store) Owner(ctx context.Context, account string) (*pircan.Owner, error) {
	var out *pircan.Owner
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		r, err := q.OwnerByAccount(ctx, foldAccount(account))
		if errors.Is(err, errNoRows) {
			return nil
		}
		if err == nil {
			out = &pircan.Owner{Name: r.Name, Verification: r.Verification}
		}
		return err
	})
	return out, err
}

// VerifyOwner records that an operator checked who owns account, under
// name; it creates the owner row if the owner has not signed in yet.
func (s *Store) VerifyOwner(ctx context.Context, actor pircan.Actor, account, name string) (created bool, err error) {
	defer s.agents.forget("*") // shown in the WHOAMI of every agent it owns
	err = s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		created, err = q.VerifyOwner(ctx, db.VerifyOwnerParams{AccountFolded: foldAccount(account), Account: account, Name: name})
		if err != nil {
			return err
		}
		return audit(ctx, q, actor, "owner.verify", account,
			map[string]any{"name": name, "verification": "verified", "created": created})
	})
	return created, err
}

// OwnedAgents lists every agent bound to account, with its policy.
func (s *Store) OwnedAgents(ctx context.Context, account string) ([]pircan.OwnedAgent, error) {
	var out []pircan.OwnedAgent
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		folded := foldAccount(account)
		rows, err := q.AgentsOfAccount(ctx, folded)
		for _, r := range rows {
			a := pircan.OwnedAgent{Agent: pircan.Agent{ID: r.ID, Account: r.AgentAccount, Name: r.Name, Description: r.Description,
				Capabilities: r.Capabilities, Nick: r.Nick}, Policy: r.Policy, Locked: r.PolicyLocked}
			if r.ConfirmedOwner != nil {
				a.OwnerAccount = *r.ConfirmedOwner
				a.ReadOnly = foldAccount(a.OwnerAccount) != folded
			}
			out = append(out, a)
		}
		return err
	})
	return out, err
}

// PortalSessions lists the live portal sessions of account.
func (s *Store) PortalSessions(ctx context.Context, account string) ([]pircan.SessionItem, error) {
	return readRows(ctx, s, (*db.Queries).ListAccountSessions, foldAccount(account), func(r db.ListAccountSessionsRow) pircan.SessionItem {
		return pircan.SessionItem{ID: r.ID, Address: r.Address, UserAgent: r.UserAgent, ApprovedAt: r.ApprovedAt, ExpiresAt: r.ExpiresAt}
	})
}

// EndPortalSession ends one live session of account (sign out, when it is
// the caller's own): ErrNotFound if there is no such live session.
func (s *Store) EndPortalSession(ctx context.Context, account, bySession, sessionID string) error {
	return s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		n, err := q.EndPortalSession(ctx, db.EndPortalSessionParams{ID: sessionID, AccountFolded: foldAccount(account)})
		if err != nil {
			return err
		}
		if n == 0 {
			return pircan.ErrNotFound
		}
		action := "owner.session.end"
		if sessionID == bySession {
			action = "owner.sign_out"
		}
		return audit(ctx, q, pircan.Actor{Account: account}, action, sessionID, map[string]any{"by_session": bySession})
	})
}

// ownerActor is the owner acting on one of its agents from a portal
// session: ErrNotFound unless the portal shows the agent to the account,
// ErrNotAuthorized when it shows it read-only (another account is the
// agent's confirmed owner).
// The IRC twins below audit the change in its own transaction, with
// by_owner and the session.
func (s *Store) ownerActor(ctx context.Context, account, session, agentID string) (pircan.Actor, error) {
	agents, err := s.OwnedAgents(ctx, account)
	if err != nil {
		return pircan.Actor{}, err
	}
	i := slices.IndexFunc(agents, func(a pircan.OwnedAgent) bool { return a.ID == agentID })
	if i < 0 {
		return pircan.Actor{}, pircan.ErrNotFound
	}
	if agents[i].ReadOnly {
		return pircan.Actor{}, pircan.ErrNotAuthorized
	}
	return pircan.Actor{Account: account, AgentID: agentID, ByOwner: true, Session: session}, nil
}

// OwnerSetPolicy sets an owned agent's policy as its owner: owner-decides
// locks it (SetPolicy with ByOwner).
func (s *Store) OwnerSetPolicy(ctx context.Context, account, session, agentID, policy string) error {
	actor, err := s.ownerActor(ctx, account, session, agentID)
	if err != nil {
		return err
	}
	return s.SetPolicy(ctx, actor, policy)
}

// OwnerDecide accepts or declines a request to an owned agent as its owner.
func (s *Store) OwnerDecide(ctx context.Context, account, session, agentID string, d pircan.Decision) (pircan.DecisionResult, error) {
	if d.Kind != pircan.DecideAccept && d.Kind != pircan.DecideDecline {
		return pircan.DecisionResult{}, pircan.ErrNotAuthorized
	}
	actor, err := s.ownerActor(ctx, account, session, agentID)
	if err != nil {
		return pircan.DecisionResult{}, err
	}
	return s.Decide(ctx, actor, d)
}

// OwnerRevoke ends an agreement of an owned agent as its owner.
func (s *Store) OwnerRevoke(ctx context.Context, account, session, agentID, agreementID string) error {
	actor, err := s.ownerActor(ctx, account, session, agentID)
	if err != nil {
		return err
	}
	return s.Revoke(ctx, actor, agreementID)
}
