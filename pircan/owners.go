package pircan

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Owner operations: what a signed-in owner does in the portal. The caller
// is the owner's account with its portal Session; an agent is named by id
// and must be one the account owns (store: ownerActor), else not_found.

// OwnerCaller is the portal's caller for a signed-in session.
func OwnerCaller(s PortalSession) Caller {
	return Caller{Kind: KindOwner, Account: s.Account, Face: FacePortal, Session: s.ID, Sizes: FullSizes}
}

// ownerErrors are the words of refused owner actions.
var ownerErrors = map[error]*Error{
	ErrNotAuthorized: Errorf(CodeNotAuthorized, "Another account is this agent's confirmed owner: only that account can change it here."),
	ErrNotFound:      Errorf(CodeNotFound, "No such agent, request, agreement or session of yours."),
	ErrNotPending:    decisionErrors[ErrNotPending],
	ErrNotActive:     revokeErrors[ErrNotActive],
	ErrInvalidGrant:  errInvalidGrant,
}

// SignInArgs is a browser starting a sign-in, as the portal sees it.
type SignInArgs struct {
	Address   string
	UserAgent string // as the browser sent it; cut to maxUserAgent bytes here
}

// SignInStarted is a started sign-in: the waiting session, and the secret
// its browser keeps in its cookie (only its SHA-256 is stored, so the
// secret exists only here).
type SignInStarted struct {
	Session PortalSession
	Secret  string
}

// maxUserAgent bounds the User-Agent a session keeps (the sessions page
// and LOGIN's reply show it).
const maxUserAgent = 300

// StartSignIn opens a waiting portal session for a browser, with a fresh
// cookie secret and CSRF token; over SignInStartsHour unused starts from
// its address in the hour it is rate_limited, saying when to try again.
// The caller is the portal's before sign-in (no account).
func (s *Service) StartSignIn(ctx context.Context, c Caller, a SignInArgs) (SignInStarted, error) {
	secret, raw := newSecret()
	sum := sha256.Sum256(raw)
	ua := a.UserAgent
	if len(ua) > maxUserAgent {
		ua = ua[:maxUserAgent]
	}
	lim := s.cfg.Limits.SignInStartsHour
	ps, err := s.store.StartSignIn(ctx, NewSignIn{SecretSHA256: sum[:], CSRFToken: NewSecret(), Address: a.Address,
		UserAgent: strings.ToValidUTF8(ua, "")}, lim)
	if errors.Is(err, ErrRateLimited) {
		wait := ps.RetryAt.Sub(s.cfg.Now())
		mins := max(1, int((wait+time.Minute-1)/time.Minute))
		return SignInStarted{}, &Error{Code: CodeRateLimited, RetryAfter: max(wait, time.Second), Message: fmt.Sprintf(
			"This address asked for %d sign-in codes in the last hour that were not used. Try again after %s (in about %s). Codes that were used to sign in do not count.",
			lim, ps.RetryAt.UTC().Format("15:04 UTC"), units(mins, "minute"))}
	}
	if err != nil {
		return SignInStarted{}, err
	}
	return SignInStarted{Session: ps, Secret: secret}, nil
}

// PortalSession is the browser session a cookie's secret names, or
// ErrNotFound. It is the portal's own lookup of who calls, so it takes the
// secret, not a Caller.
func (s *Service) PortalSession(ctx context.Context, secret string) (PortalSession, error) {
	raw, err := base64.RawURLEncoding.DecodeString(secret)
	if err != nil || len(raw) != secretBytes {
		return PortalSession{}, ErrNotFound
	}
	sum := sha256.Sum256(raw)
	return s.store.PortalSession(ctx, sum[:])
}

// OwnerView is what a signed-in account owns and what waits for it.
type OwnerView struct {
	Owner   *Owner // the account's owner row, if any
	Agents  []OwnedAgentView
	Pending []PendingBinding // agents asking the account to confirm it as owner
}

// OwnedAgentView is an owned agent with its incoming pending requests and
// active agreements (each up to ownerListMax).
type OwnedAgentView struct {
	OwnedAgent
	Requests   []ContactItem
	Agreements []AgreementItem
}

const ownerListMax = 50

// Owned reads everything the portal's agents page shows the caller.
func (s *Service) Owned(ctx context.Context, c Caller, _ NoArgs) (OwnerView, error) {
	var v OwnerView
	var err error
	if perr := c.identified(); perr != nil { // a *Error: a nil one in err would not be nil
		return v, perr
	}
	if v.Owner, err = s.store.Owner(ctx, c.Account); err != nil {
		return v, err
	}
	if v.Pending, err = s.store.PendingBindings(ctx, c.Account); err != nil {
		return v, err
	}
	owned, err := s.store.OwnedAgents(ctx, c.Account)
	if err != nil {
		return v, err
	}
	for _, a := range owned {
		av := OwnedAgentView{OwnedAgent: a}
		if av.Requests, _, err = s.store.Contacts(ctx, a.ID, true, "pending", ownerListMax, 0); err != nil {
			return v, err
		}
		if av.Agreements, _, err = s.store.Agreements(ctx, a.ID, false, ownerListMax, 0); err != nil {
			return v, err
		}
		v.Agents = append(v.Agents, av)
	}
	return v, nil
}

// AccountOwner is the caller's owner row (name, verification), if any.
func (s *Service) AccountOwner(ctx context.Context, c Caller, _ NoArgs) (*Owner, error) {
	return s.store.Owner(ctx, c.Account)
}

// Sessions lists the live portal sessions of the caller's account.
func (s *Service) Sessions(ctx context.Context, c Caller, _ NoArgs) ([]SessionItem, error) {
	return s.store.PortalSessions(ctx, c.Account)
}

// ForAgent is an owner's arguments: the owned agent it acts for, and the
// arguments of the agent's own operation, whose check tags hold here too.
type ForAgent[A any] struct {
	AgentID *string `json:"agent_id" check:"required,id"`
	Args    A       `json:"-"`
}

// owning is the prologue of every owner operation on an agent: the agent
// id and then its arguments hold by their check tags.
func owning[A any](c Caller, a *ForAgent[A]) *Error {
	if err := checkArgs(a, c.Sizes); err != nil {
		return err
	}
	return checkArgs(&a.Args, c.Sizes)
}

// OwnerSetPolicy sets an owned agent's policy.
func (s *Service) OwnerSetPolicy(ctx context.Context, c Caller, a ForAgent[PolicyArgs]) (PolicyResult, error) {
	if err := owning(c, &a); err != nil {
		return PolicyResult{}, err
	}
	if a.Args.Policy == nil {
		return PolicyResult{}, FieldError(CodeInvalidArgument, "policy", "%q is required.", "policy")
	}
	if err := ruleErrors(s.store.OwnerSetPolicy(ctx, c.Account, c.Session, *a.AgentID, *a.Args.Policy), ownerErrors); err != nil {
		return PolicyResult{}, err
	}
	return PolicyResult{Policy: *a.Args.Policy, Locked: *a.Args.Policy == PolicyOwnerDecides}, nil
}

// OwnerAccept accepts a request to an owned agent, under the same rules as
// the agent's own ACCEPT.
func (s *Service) OwnerAccept(ctx context.Context, c Caller, a ForAgent[DecideArgs]) (DecisionResult, error) {
	return s.ownerDecide(ctx, c, DecideAccept, a)
}

// OwnerDecline declines a request to an owned agent.
func (s *Service) OwnerDecline(ctx context.Context, c Caller, a ForAgent[RequestArgs]) (DecisionResult, error) {
	return s.ownerDecide(ctx, c, DecideDecline, ForAgent[DecideArgs]{AgentID: a.AgentID, Args: DecideArgs{RequestID: a.Args.RequestID}})
}

func (s *Service) ownerDecide(ctx context.Context, c Caller, kind string, a ForAgent[DecideArgs]) (DecisionResult, error) {
	if err := checkArgs(&a, c.Sizes); err != nil {
		return DecisionResult{}, err
	}
	d, perr := decision(kind, a.Args, c.Sizes)
	if perr != nil {
		return DecisionResult{}, perr
	}
	res, err := s.store.OwnerDecide(ctx, c.Account, c.Session, *a.AgentID, d)
	return decided(d, res, err, ownerErrors)
}

// OwnerRevokeResult names the agreement an owner ended.
type OwnerRevokeResult struct {
	AgreementID string
}

// OwnerRevoke ends an owned agent's agreement.
func (s *Service) OwnerRevoke(ctx context.Context, c Caller, a ForAgent[RevokeArgs]) (OwnerRevokeResult, error) {
	if err := owning(c, &a); err != nil {
		return OwnerRevokeResult{}, err
	}
	err := ruleErrors(s.store.OwnerRevoke(ctx, c.Account, c.Session, *a.AgentID, *a.Args.AgreementID), ownerErrors)
	return done(OwnerRevokeResult{AgreementID: *a.Args.AgreementID}, err)
}

// BindingArgs confirm or decline the caller as an agent's owner.
type BindingArgs struct {
	AgentID  *string `json:"agent_id" check:"required,id"`
	Decision *string `json:"decision" check:"required,enum=confirm|decline"`
}

// BindingResult is the caller's decision on an agent's binding.
type BindingResult struct {
	AgentID   string
	Confirmed bool // false: declined
}

// DecideBinding confirms (or declines) the caller as an agent's owner.
func (s *Service) DecideBinding(ctx context.Context, c Caller, a BindingArgs) (BindingResult, error) {
	if err := checkArgs(&a, c.Sizes); err != nil {
		return BindingResult{}, err
	}
	confirm := *a.Decision == "confirm"
	err := ruleErrors(s.store.DecideBinding(ctx, c.Account, c.Session, *a.AgentID, confirm), ownerErrors)
	return done(BindingResult{AgentID: *a.AgentID, Confirmed: confirm}, err)
}

// ReleaseResult names the agent the caller no longer owns.
type ReleaseResult struct {
	AgentID string
}

// ReleaseAgent ends the caller's ownership of an agent.
func (s *Service) ReleaseAgent(ctx context.Context, c Caller, a AgentArgs) (ReleaseResult, error) {
	if err := checkArgs(&a, c.Sizes); err != nil {
		return ReleaseResult{}, err
	}
	err := ruleErrors(s.store.ReleaseAgent(ctx, c.Account, c.Session, *a.AgentID), ownerErrors)
	return done(ReleaseResult{AgentID: *a.AgentID}, err)
}

// SessionArgs name a portal session.
type SessionArgs struct {
	SessionID *string `json:"session_id" check:"required,id"`
}

// EndSessionResult names the portal session ended.
type EndSessionResult struct {
	SessionID string
}

// EndSession ends one portal session of the caller's account.
func (s *Service) EndSession(ctx context.Context, c Caller, a SessionArgs) (EndSessionResult, error) {
	if err := checkArgs(&a, c.Sizes); err != nil {
		return EndSessionResult{}, err
	}
	err := ruleErrors(s.store.EndPortalSession(ctx, c.Account, c.Session, *a.SessionID), ownerErrors)
	return done(EndSessionResult{SessionID: *a.SessionID}, err)
}

// done is an owner's change's result, or nothing when it was refused.
func done[R any](r R, err error) (R, error) {
	if err != nil {
		var zero R
		return zero, err
	}
	return r, nil
}
