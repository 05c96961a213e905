package pircan

import (
	"context"
	"errors"
	"time"
)

// The brokered handshake (spec §3b): POLICY, CONTACT, CONTACTS, ACCEPT,
// DECLINE, CANCEL, AGREEMENTS, REVOKE.

const (
	MaxScopes = 20
)

// Policies are the contact policies, in the order faces list them.
var Policies = []string{PolicyAgentDecides, PolicyOwnerDecides, PolicyAutoAccept, PolicyDeny}

// PolicyArgs show the caller's policy, or set it.
type PolicyArgs struct {
	Policy *string `json:"policy" check:"enum=@policies"`
}

// PolicyResult is an agent's policy now.
type PolicyResult struct {
	Policy string
	Locked bool // an owner set owner-decides: only the owner changes it
}

// Policy shows or sets the caller's contact policy.
func (s *Service) Policy(ctx context.Context, c Caller, a PolicyArgs) (PolicyResult, error) {
	agent, err := registered(c, &a)
	if err != nil {
		return PolicyResult{}, err
	}
	if a.Policy != nil {
		if err := s.store.SetPolicy(ctx, c.actor(), *a.Policy); err != nil {
			return PolicyResult{}, ruleErrors(err, map[error]*Error{
				ErrNotAuthorized: Errorf(CodeNotAuthorized, "Your owner set owner-decides; only your owner can change the policy now."),
			})
		}
	}
	p, locked, err2 := s.store.Policy(ctx, agent.ID)
	if err2 != nil {
		return PolicyResult{}, err2
	}
	return PolicyResult{Policy: p, Locked: locked}, nil
}

// ContactArgs ask an agent for an agreement.
type ContactArgs struct {
	To      *string   `json:"to" check:"required,id"`
	Purpose *string   `json:"purpose" check:"required,text=300"`
	Scopes  *[]string `json:"scopes"`
	TTLDays *int      `json:"ttl_days" check:"range=1-365,default=30"`
}

// Contact files a request; the target's policy applies at once.
func (s *Service) Contact(ctx context.Context, c Caller, a ContactArgs) (ContactResult, error) {
	if _, err := registered(c, &a); err != nil {
		return ContactResult{}, err
	}
	scopes := []string{ScopeMessage}
	if a.Scopes != nil {
		if err := CheckScopes(*a.Scopes); err != nil {
			return ContactResult{}, err
		}
		scopes = *a.Scopes
	}
	r := NewContact{To: *a.To, Purpose: *a.Purpose, Scopes: scopes, TTLDays: *a.TTLDays}
	res, serr := s.store.Contact(ctx, c.actor(), r, ContactRule{Limits: s.cfg.Limits})
	if serr != nil {
		return ContactResult{}, ruleErrors(serr, map[error]*Error{ErrDuplicateRequest: errDuplicateRequest})
	}
	return res, nil
}

var errSelfContact = Errorf(CodeSelfContact, "You cannot ask yourself for an agreement.")

// CheckScopes validates a scope list: 1 to 20 known scopes, no repeats.
func CheckScopes(scopes []string) *Error {
	if len(scopes) == 0 || len(scopes) > MaxScopes {
		return FieldError(CodeInvalidScope, "scopes", "Give 1 to %d scopes: message, task:<skill>, resource:read.", MaxScopes)
	}
	seen := map[string]bool{}
	for _, s := range scopes {
		if !ValidScope(s) {
			return FieldError(CodeInvalidScope, "scopes", "Unknown scope %q: use message, task:<skill> or resource:read.", s)
		}
		if seen[s] {
			return FieldError(CodeInvalidScope, "scopes", "Scope %q is listed twice.", s)
		}
		seen[s] = true
	}
	return nil
}

// ContactsArgs list contact requests.
type ContactsArgs struct {
	Direction *string `json:"direction" check:"enum=incoming|outgoing"`
	Status    *string `json:"status" check:"enum=pending|accepted|declined|cancelled|expired|any"`
	PageArgs  `check:"limit.default=10"`
}

// ContactsResult is a page of requests; Incoming says which side Other is.
type ContactsResult struct {
	Page[ContactItem]
	Incoming bool
}

// Contacts lists the caller's incoming (default) or outgoing requests.
func (s *Service) Contacts(ctx context.Context, c Caller, a ContactsArgs) (ContactsResult, error) {
	agent, err := registered(c, &a)
	if err != nil {
		return ContactsResult{}, err
	}
	incoming := a.Direction == nil || *a.Direction == "incoming"
	status := "pending"
	if a.Status != nil {
		status = *a.Status
	}
	list, total, serr := s.store.Contacts(ctx, agent.ID, incoming, status, *a.Limit, *a.Offset)
	if serr != nil {
		return ContactsResult{}, serr
	}
	return ContactsResult{Page: Page[ContactItem]{Items: list, Total: total, Offset: *a.Offset}, Incoming: incoming}, nil
}

// DecideArgs accept, decline or cancel a request. Only an accept takes
// Scopes and TTLDays, to grant fewer scopes or a shorter ttl.
type DecideArgs struct {
	RequestID *string   `json:"request_id" check:"required,id"`
	Scopes    *[]string `json:"scopes"`
	TTLDays   *int      `json:"ttl_days" check:"range=1-365"`
}

// RequestArgs name a request (DECLINE, CANCEL).
type RequestArgs struct {
	RequestID *string `json:"request_id" check:"required,id"`
}

// decisionErrors are the words of a decision, by the agent or its owner.
var decisionErrors = map[error]*Error{
	ErrNotFound:      Errorf(CodeNotFound, "No such request for you.").Then(NextContacts),
	ErrNotPending:    Errorf(CodeNotPending, "That request was already decided, cancelled, or has expired."),
	ErrNotAuthorized: Errorf(CodeNotAuthorized, "Your policy is owner-decides: your owner decides this request in the owner portal."),
	ErrInvalidGrant:  errInvalidGrant,
}

var errInvalidGrant = Errorf(CodeInvalidArgument, "You may grant fewer scopes or a shorter ttl than requested, never more.")

// decision validates a decision's arguments into what the store decides.
func decision(kind string, a DecideArgs, sizes Sizes) (Decision, *Error) {
	if err := checkArgs(&a, sizes); err != nil {
		return Decision{}, err
	}
	d := Decision{Kind: kind, RequestID: *a.RequestID}
	if a.Scopes != nil {
		if err := CheckScopes(*a.Scopes); err != nil {
			return Decision{}, err
		}
		d.Scopes = *a.Scopes
	}
	if a.TTLDays != nil {
		d.TTLDays = *a.TTLDays
	}
	return d, nil
}

// grantError names which part of an accept exceeded the request.
func grantError(d Decision) *Error {
	e := *errInvalidGrant
	e.Field = "ttl_days"
	if d.Scopes != nil {
		e.Field = "scopes"
	}
	return &e
}

// Accept accepts an incoming request: the agreement is active at once.
func (s *Service) Accept(ctx context.Context, c Caller, a DecideArgs) (DecisionResult, error) {
	return s.decide(ctx, c, DecideAccept, a)
}

// Decline declines an incoming request.
func (s *Service) Decline(ctx context.Context, c Caller, a RequestArgs) (DecisionResult, error) {
	return s.decide(ctx, c, DecideDecline, DecideArgs{RequestID: a.RequestID})
}

// Cancel withdraws the caller's own pending request.
func (s *Service) Cancel(ctx context.Context, c Caller, a RequestArgs) (DecisionResult, error) {
	return s.decide(ctx, c, DecideCancel, DecideArgs{RequestID: a.RequestID})
}

func (s *Service) decide(ctx context.Context, c Caller, kind string, a DecideArgs) (DecisionResult, error) {
	if _, err := c.agent(); err != nil {
		return DecisionResult{}, err
	}
	d, err := decision(kind, a, c.Sizes)
	if err != nil {
		return DecisionResult{}, err
	}
	res, serr := s.store.Decide(ctx, c.actor(), d)
	return decided(d, res, serr, decisionErrors)
}

// decided is a decision's outcome: the store's result with the request's
// status, or the refusal in words (granting more than asked names the field).
func decided(d Decision, res DecisionResult, err error, words map[error]*Error) (DecisionResult, error) {
	if errors.Is(err, ErrInvalidGrant) {
		return DecisionResult{}, grantError(d)
	}
	if err != nil {
		return DecisionResult{}, ruleErrors(err, words)
	}
	res.RequestID, res.Status = d.RequestID, decidedStatus[d.Kind]
	return res, nil
}

// decidedStatus is a request's status after each kind of decision.
var decidedStatus = map[string]string{DecideAccept: "accepted", DecideDecline: "declined", DecideCancel: "cancelled"}

// AgreementsArgs list the caller's agreements.
type AgreementsArgs struct {
	All      *bool `json:"all"`
	PageArgs `check:"limit.default=10"`
}

// Agreements lists the caller's active agreements (All: ended ones too).
func (s *Service) Agreements(ctx context.Context, c Caller, a AgreementsArgs) (Page[AgreementItem], error) {
	agent, err := registered(c, &a)
	if err != nil {
		return Page[AgreementItem]{}, err
	}
	list, total, serr := s.store.Agreements(ctx, agent.ID, a.All != nil && *a.All, *a.Limit, *a.Offset)
	if serr != nil {
		return Page[AgreementItem]{}, serr
	}
	return Page[AgreementItem]{Items: list, Total: total, Offset: *a.Offset}, nil
}

// RevokeArgs name an agreement to end.
type RevokeArgs struct {
	AgreementID *string `json:"agreement_id" check:"required,id"`
}

var revokeErrors = map[error]*Error{
	ErrNotFound:  Errorf(CodeNotFound, "No such agreement of yours.").Then(NextAgreements),
	ErrNotActive: Errorf(CodeNotActive, "That agreement has already ended."),
}

// Revoke ends an agreement for both parties.
func (s *Service) Revoke(ctx context.Context, c Caller, a RevokeArgs) (string, error) {
	if _, err := registered(c, &a); err != nil {
		return "", err
	}
	if err := s.store.Revoke(ctx, c.actor(), *a.AgreementID); err != nil {
		return "", ruleErrors(err, revokeErrors)
	}
	return *a.AgreementID, nil
}

// ruleErrors turns the store's rule errors into protocol errors. An
// operation passes the words that fit it; anything unlisted stays as it is
// (and becomes internal_error if it is not a protocol error).
func ruleErrors(err error, words map[error]*Error) error {
	for sentinel, perr := range words {
		if errors.Is(err, sentinel) {
			// A counted limit waits only until its oldest counted row
			// leaves the window, not the whole window.
			var c *CountLimited
			if errors.As(err, &c) && perr.RetryAfter > 0 && c.Wait > 0 && c.Wait < perr.RetryAfter {
				e := *perr
				e.RetryAfter = c.Wait
				return &e
			}
			return perr
		}
	}
	return err
}

// CountLimited is the store's refusal of a counted limit (threads or
// messages an hour, boards a day, …): Rule is the limit's sentinel, Wait
// the time until the oldest counted row leaves the window, read by the
// statement that counted.
type CountLimited struct {
	Rule error
	Wait time.Duration
}

func (c *CountLimited) Error() string { return c.Rule.Error() }
func (c *CountLimited) Unwrap() error { return c.Rule }
