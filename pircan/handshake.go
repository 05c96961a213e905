package pircan

import (
	"context"
	"errors"
	"time"
)

const (
	maxPurpose       = 300
	requestLifetime  = 7 * 24 * time.Hour
	defaultTTLDays   = 30
	maxTTLDays       = 365
	listLimitDefault = 10
)

// actor is the caller as the store's rules and audit log see it.
func (c *call) actor() Actor {
	return Actor{Account: c.sender.Account, AgentID: c.agent.ID}
}

// ruleErrors turns the store's rule errors into protocol errors. A handler
// passes the words that fit its verb; anything unlisted stays as it is (and
// becomes internal_error if it is not a protocol error).
func ruleErrors(err error, words map[error]*Error) error {
	for sentinel, perr := range words {
		if errors.Is(err, sentinel) {
			return perr
		}
	}
	return err
}

// timeText renders an instant for replies.
func timeText(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func policy(ctx context.Context, c *call) ([]Reply, error) {
	var a struct {
		Policy *string `json:"policy"`
	}
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	if a.Policy != nil {
		switch *a.Policy {
		case PolicyAgentDecides, PolicyOwnerDecides, PolicyAutoAccept, PolicyDeny:
		default:
			return nil, FieldError(CodeInvalidArgument, "policy", `"policy" is one of agent-decides, owner-decides, auto-accept, deny.`)
		}
		if err := c.svc.store.SetPolicy(ctx, c.actor(), *a.Policy); err != nil {
			return nil, ruleErrors(err, map[error]*Error{
				ErrNotAuthorized: Errorf(CodeNotAuthorized, "Your owner set owner-decides; only your owner can change the policy now."),
			})
		}
	}
	p, locked, err := c.svc.store.Policy(ctx, c.agent.ID)
	if err != nil {
		return nil, err
	}
	return one("POLICY", Object{{"policy", p}, {"locked", locked}}), nil
}

func contact(ctx context.Context, c *call) ([]Reply, error) {
	var a struct {
		To      *string   `json:"to"`
		Purpose *string   `json:"purpose"`
		Scopes  *[]string `json:"scopes"`
		TTLDays *int      `json:"ttl_days"`
	}
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	to, err := requiredID("to", a.To)
	if err != nil {
		return nil, err
	}
	if a.Purpose == nil {
		return nil, FieldError(CodeInvalidArgument, "purpose", `"purpose" is required: say why you ask.`)
	}
	if err := checkText("purpose", *a.Purpose, maxPurpose); err != nil {
		return nil, err
	}
	scopes := []string{ScopeMessage}
	if a.Scopes != nil {
		if scopes, err = checkScopes(*a.Scopes); err != nil {
			return nil, err
		}
	}
	ttl, err := checkRange("ttl_days", a.TTLDays, 1, maxTTLDays, defaultTTLDays)
	if err != nil {
		return nil, err
	}
	if to == c.agent.ID {
		return nil, Errorf(CodeSelfContact, "You cannot ask yourself for an agreement.")
	}
	res, serr := c.svc.store.Contact(ctx, c.actor(), NewContact{To: to, Purpose: *a.Purpose, Scopes: scopes, TTLDays: ttl}, c.svc.cfg.Limits)
	if serr != nil {
		return nil, ruleErrors(serr, map[error]*Error{
			ErrSelfContact:      Errorf(CodeSelfContact, "You cannot ask yourself for an agreement."),
			ErrUnknownAgent:     FieldError(CodeUnknownAgent, "to", "No agent %s. Find agents with PIRCAN/1 FIND.", to),
			ErrDuplicateRequest: Errorf(CodeDuplicateRequest, "You already have a pending request to this agent; wait, or CANCEL it."),
			ErrAlreadyAgreed:    Errorf(CodeAlreadyAgreed, "An active agreement already grants these scopes; see AGREEMENTS."),
			ErrCooldown:         Errorf(CodeCooldown, "This agent declined you within the last 24 hours; ask again later."),
			ErrTooManyPending:   Errorf(CodeTooManyPending, "You have %d pending requests; wait for answers or CANCEL some.", c.svc.cfg.Limits.PendingMax),
			ErrRateLimited:      Errorf(CodeRateLimited, "At most %d contact requests per hour.", c.svc.cfg.Limits.ContactsHour),
		})
	}
	f := Object{{"request_id", res.RequestID}, {"status", res.Status}}
	if res.AgreementID != "" {
		f = append(f, Field{"agreement_id", res.AgreementID})
	}
	return one("CONTACT", f), nil
}

// checkScopes validates a scope list: known scopes only, no repeats.
func checkScopes(scopes []string) ([]string, *Error) {
	if len(scopes) == 0 || len(scopes) > 20 {
		return nil, FieldError(CodeInvalidScope, "scopes", "Give 1 to 20 scopes: message, task:<skill>, resource:read.")
	}
	seen := map[string]bool{}
	for _, s := range scopes {
		if !ValidScope(s) {
			return nil, FieldError(CodeInvalidScope, "scopes", "Unknown scope %q: use message, task:<skill> or resource:read.", s)
		}
		if seen[s] {
			return nil, FieldError(CodeInvalidScope, "scopes", "Scope %q is listed twice.", s)
		}
		seen[s] = true
	}
	return scopes, nil
}

// requiredID reads a required id field.
func requiredID(field string, v *string) (string, *Error) {
	if v == nil {
		return "", FieldError(CodeInvalidArgument, field, "%q is required.", field)
	}
	if !ValidID(*v) {
		return "", FieldError(CodeInvalidArgument, field, "%q must be an id (a UUID).", field)
	}
	return *v, nil
}

func contacts(ctx context.Context, c *call) ([]Reply, error) {
	var a struct {
		Direction *string `json:"direction"`
		Status    *string `json:"status"`
		Limit     *int    `json:"limit"`
		Offset    *int    `json:"offset"`
	}
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	incoming := true
	if a.Direction != nil {
		switch *a.Direction {
		case "incoming":
		case "outgoing":
			incoming = false
		default:
			return nil, FieldError(CodeInvalidArgument, "direction", `"direction" is incoming or outgoing.`)
		}
	}
	status := "pending"
	if a.Status != nil {
		switch *a.Status {
		case "pending", "accepted", "declined", "cancelled", "expired", "any":
			status = *a.Status
		default:
			return nil, FieldError(CodeInvalidArgument, "status", `"status" is pending, accepted, declined, cancelled, expired or any.`)
		}
	}
	limit, err := checkRange("limit", a.Limit, 1, 10, listLimitDefault)
	if err != nil {
		return nil, err
	}
	offset, err := checkOffset(a.Offset)
	if err != nil {
		return nil, err
	}
	list, total, serr := c.svc.store.Contacts(ctx, c.agent.ID, incoming, status, limit, offset)
	if serr != nil {
		return nil, serr
	}
	side := "to"
	if incoming {
		side = "from"
	}
	items := make([]Object, len(list))
	for i, r := range list {
		items[i] = Object{
			{"request_id", r.RequestID},
			{side, Object{{"agent_id", r.Other.AgentID}, {"name", Text(r.Other.Name)}}},
			{"purpose", Text(r.Purpose)}, {"scopes", TextList(r.Scopes)}, {"ttl_days", r.TTLDays},
			{"status", r.Status}, {"expires_at", timeText(r.ExpiresAt)},
		}
	}
	return listReplies("CONTACT-ITEM", "CONTACTS", items, total, offset), nil
}

// decisionErrors are the words for ACCEPT, DECLINE and CANCEL.
var decisionErrors = map[error]*Error{
	ErrNotFound:      Errorf(CodeNotFound, "No such request for you. See PIRCAN/1 CONTACTS."),
	ErrNotPending:    Errorf(CodeNotPending, "That request was already decided, cancelled, or has expired."),
	ErrNotAuthorized: Errorf(CodeNotAuthorized, "Your policy is owner-decides: your owner decides this request in the owner portal."),
}

func decide(kind string) func(context.Context, *call) ([]Reply, error) {
	return func(ctx context.Context, c *call) ([]Reply, error) {
		var a struct {
			RequestID *string   `json:"request_id"`
			Scopes    *[]string `json:"scopes"`
			TTLDays   *int      `json:"ttl_days"`
		}
		if err := c.req.Decode(&a); err != nil {
			return nil, err
		}
		if kind != DecideAccept && (a.Scopes != nil || a.TTLDays != nil) {
			field := "scopes"
			if a.Scopes == nil {
				field = "ttl_days"
			}
			return nil, FieldError(CodeInvalidArgument, field, "Only ACCEPT takes %q.", field)
		}
		id, err := requiredID("request_id", a.RequestID)
		if err != nil {
			return nil, err
		}
		d := Decision{Kind: kind, RequestID: id}
		if a.Scopes != nil {
			if d.Scopes, err = checkScopes(*a.Scopes); err != nil {
				return nil, err
			}
		}
		if a.TTLDays != nil {
			if d.TTLDays, err = checkRange("ttl_days", a.TTLDays, 1, maxTTLDays, 0); err != nil {
				return nil, err
			}
		}
		res, serr := c.svc.store.Decide(ctx, c.actor(), d)
		if errors.Is(serr, ErrInvalidGrant) {
			return nil, FieldError(CodeInvalidArgument, grantField(d), "You may grant fewer scopes or a shorter ttl than requested, never more.")
		}
		if serr != nil {
			return nil, ruleErrors(serr, decisionErrors)
		}
		verb := map[string]string{DecideAccept: "ACCEPT", DecideDecline: "DECLINE", DecideCancel: "CANCEL"}[kind]
		if kind != DecideAccept {
			status := map[string]string{DecideDecline: "declined", DecideCancel: "cancelled"}[kind]
			return one(verb, Object{{"request_id", id}, {"status", status}}), nil
		}
		return one(verb, Object{{"request_id", id}, {"status", "accepted"}, {"agreement_id", res.AgreementID},
			{"scopes", TextList(res.Scopes)}, {"expires_at", timeText(res.ExpiresAt)}}), nil
	}
}

// grantField names which part of an ACCEPT exceeded the request.
func grantField(d Decision) string {
	if d.Scopes != nil {
		return "scopes"
	}
	return "ttl_days"
}

func agreements(ctx context.Context, c *call) ([]Reply, error) {
	var a struct {
		All    *bool `json:"all"`
		Limit  *int  `json:"limit"`
		Offset *int  `json:"offset"`
	}
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	limit, err := checkRange("limit", a.Limit, 1, 10, listLimitDefault)
	if err != nil {
		return nil, err
	}
	offset, err := checkOffset(a.Offset)
	if err != nil {
		return nil, err
	}
	list, total, serr := c.svc.store.Agreements(ctx, c.agent.ID, a.All != nil && *a.All, limit, offset)
	if serr != nil {
		return nil, serr
	}
	items := make([]Object, len(list))
	for i, g := range list {
		items[i] = Object{
			{"agreement_id", g.AgreementID},
			{"with", Object{{"agent_id", g.With.AgentID}, {"name", Text(g.With.Name)}, {"irc_accounts", TextList(g.With.IRCAccounts)}}},
			{"role", g.Role}, {"scopes", TextList(g.Scopes)}, {"status", g.Status}, {"expires_at", timeText(g.ExpiresAt)},
		}
	}
	return listReplies("AGREEMENT", "AGREEMENTS", items, total, offset), nil
}

func revoke(ctx context.Context, c *call) ([]Reply, error) {
	var a struct {
		AgreementID *string `json:"agreement_id"`
	}
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	id, err := requiredID("agreement_id", a.AgreementID)
	if err != nil {
		return nil, err
	}
	if serr := c.svc.store.Revoke(ctx, c.actor(), id); serr != nil {
		return nil, ruleErrors(serr, map[error]*Error{
			ErrNotFound:  Errorf(CodeNotFound, "No such agreement of yours. See PIRCAN/1 AGREEMENTS."),
			ErrNotActive: Errorf(CodeNotActive, "That agreement has already ended."),
		})
	}
	return one("REVOKE", Object{{"agreement_id", id}, {"status", "revoked"}}), nil
}
