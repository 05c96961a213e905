package pircan

import "slices"

// The rules that need rows read inside a transaction: the store reads the
// facts (with the rows locked that make them race-free) and runs the rule
// here in that transaction, so the rule and its words live in the core and
// the store only executes. Each rule is pure; rules_test.go tables them.

// ContactFacts are what CONTACT's rule reads, with the requester's row
// locked: racing requests from one agent see each other's rows.
type ContactFacts struct {
	TargetPolicy     string            // the target's policy; "": no such agent
	RequestsHour     int               // the requester's requests in the last hour
	Pending          bool              // a pending request from the requester to the target
	Active           []AgreementScopes // active agreements between the two
	DeclinedRecently bool              // the target declined the requester within the cooldown
	PendingOutgoing  int               // the requester's pending requests
}

// ContactOutcome is what becomes of a request at once: pending, or
// accepted or declined by the target's policy.
type ContactOutcome struct {
	Status   string // pending, accepted, declined
	ByPolicy bool
}

// ContactRule is CONTACT's rule under the limits in force.
type ContactRule struct{ Limits Limits }

// Decide is the outcome of r from me (an agent id), or the refusal: the
// requester itself, an unknown target, the hourly limit, a pending duplicate, scopes already
// granted, the cooldown after a decline, then the target's policy; only a
// request left pending counts against the pending limit.
func (rule ContactRule) Decide(me string, r NewContact, f ContactFacts) (ContactOutcome, *Error) {
	l := rule.Limits
	switch {
	case r.To == me:
		return ContactOutcome{}, errSelfContact
	case f.TargetPolicy == "":
		return ContactOutcome{}, FieldError(CodeUnknownAgent, "to", "No agent %s.", r.To).Then(NextFind)
	case f.RequestsHour >= l.ContactsHour:
		return ContactOutcome{}, Errorf(CodeRateLimited, "At most %d contact requests per hour.", l.ContactsHour)
	case f.Pending:
		return ContactOutcome{}, errDuplicateRequest
	case Covers(Granted(me, f.Active), r.Scopes):
		return ContactOutcome{}, Errorf(CodeAlreadyAgreed, "An active agreement already grants these scopes.").Then(NextAgreements)
	case f.DeclinedRecently:
		return ContactOutcome{}, Errorf(CodeCooldown, "This agent declined you within the last %s; ask again later.", Span(DeclineCooldown))
	case f.TargetPolicy == PolicyDeny:
		return ContactOutcome{Status: "declined", ByPolicy: true}, nil
	case f.TargetPolicy == PolicyAutoAccept && slices.Equal(r.Scopes, []string{ScopeMessage}):
		return ContactOutcome{Status: "accepted", ByPolicy: true}, nil
	case f.PendingOutgoing >= l.PendingMax:
		return ContactOutcome{}, Errorf(CodeTooManyPending, "You have %d pending requests; wait for answers or cancel some.", l.PendingMax)
	}
	return ContactOutcome{Status: "pending"}, nil
}

// errDuplicateRequest is CONTACT's refusal of a second pending request to
// one agent (the rule's, and ErrDuplicateRequest's when two race to be filed).
var errDuplicateRequest = Errorf(CodeDuplicateRequest, "You already have a pending request to this agent; wait, or cancel it.")

// DecisionFacts are what ACCEPT, DECLINE and CANCEL read, with the
// request's row locked: of two racing decisions one wins and the other
// finds the request decided.
type DecisionFacts struct {
	From, To     string   // the request's agents
	Status       string   // as stored: pending, accepted, ...
	Expired      bool     // pending past RequestLifetime
	Scopes       []string // asked for
	TTLDays      int      // asked for
	TargetPolicy string
}

// DecisionOutcome is a decision as the store writes it.
type DecisionOutcome struct {
	Status    string   // accepted, declined, cancelled
	DecidedBy string   // agent or owner; "" for a cancel
	Scopes    []string // an acceptance's agreement: the scopes granted
	TTLDays   int      // and its days
}

// DecideRequest is actor's decision d on a request, or the refusal each
// door words (decisionErrors, ownerErrors): a request not the actor's to
// decide reads as none (ErrNotFound), one no longer pending
// (ErrNotPending), an agent's own acceptance or decline under
// owner-decides (ErrNotAuthorized), a grant of more scopes or days than
// asked (ErrInvalidGrant).
func DecideRequest(actor Actor, d Decision, f DecisionFacts) (DecisionOutcome, error) {
	decider := f.To
	if d.Kind == DecideCancel {
		decider = f.From
	}
	switch {
	case decider != actor.AgentID:
		return DecisionOutcome{}, ErrNotFound
	case f.Status != "pending" || f.Expired:
		return DecisionOutcome{}, ErrNotPending
	case d.Kind != DecideCancel && !actor.ByOwner && f.TargetPolicy == PolicyOwnerDecides:
		return DecisionOutcome{}, ErrNotAuthorized
	}
	out := DecisionOutcome{Status: decidedStatus[d.Kind], DecidedBy: "agent", Scopes: f.Scopes, TTLDays: f.TTLDays}
	switch {
	case d.Kind == DecideCancel:
		out.DecidedBy = ""
	case actor.ByOwner:
		out.DecidedBy = "owner"
	}
	if d.Kind != DecideAccept {
		return out, nil
	}
	if d.Scopes != nil {
		if !Subset(d.Scopes, f.Scopes) {
			return DecisionOutcome{}, ErrInvalidGrant
		}
		out.Scopes = d.Scopes
	}
	if d.TTLDays != 0 {
		if d.TTLDays > f.TTLDays {
			return DecisionOutcome{}, ErrInvalidGrant
		}
		out.TTLDays = d.TTLDays
	}
	return out, nil
}

// TaskFacts are what a new task's rule reads, with the requester's row
// locked (racing tasks from several faces of one agent count each other)
// and the agreements share-locked until the task references one.
type TaskFacts struct {
	TargetExists bool
	TasksHour    int            // the requester's tasks in the last hour
	Active       []TaskGranting // the requester's active agreements with the target, newest expiry first
}

// TaskGranting is an active agreement the requester asked for, which may
// grant it task:<skill> scopes.
type TaskGranting struct {
	ID     string
	Scopes []string
}

// TaskGrant is the agreement a task goes under, and its skill.
type TaskGrant struct {
	AgreementID string
	Skill       string
}

// TaskRule is a new task's rule under the limits in force.
type TaskRule struct{ Limits Limits }

// errSelfTask refuses a task to the requester itself (before any read too).
var errSelfTask = Errorf(CodeSelfContact, "You cannot send a task to yourself.")

// Decide is the agreement and skill task t from me goes under, or the
// refusal: the requester itself, an unknown target, no agreement granting
// the skill (with none named: not exactly one skill granted), then the
// hourly limit.
func (rule TaskRule) Decide(me string, t NewTask, f TaskFacts) (TaskGrant, *Error) {
	switch {
	case t.To == me:
		return TaskGrant{}, errSelfTask
	case !f.TargetExists:
		return TaskGrant{}, FieldError(CodeUnknownAgent, "to", "No agent %s.", t.To).Then(NextFind)
	}
	g, err := grantingAgreement(f.Active, t.Skill)
	if err != nil {
		return TaskGrant{}, err
	}
	if f.TasksHour >= rule.Limits.TasksHour {
		return TaskGrant{}, Errorf(CodeRateLimited, "At most %d tasks per hour.", rule.Limits.TasksHour)
	}
	return g, nil
}

// grantingAgreement picks the first agreement granting task:<skill>.
// Without a skill, the skill is the only one they grant: several is a
// refusal naming the field (the caller must choose).
func grantingAgreement(active []TaskGranting, skill string) (TaskGrant, *Error) {
	if skill == "" {
		var skills []string
		for _, g := range active {
			for _, s := range GrantedSkills(g.Scopes) {
				if !slices.Contains(skills, s) {
					skills = append(skills, s)
				}
			}
		}
		switch len(skills) {
		case 0:
		case 1:
			skill = skills[0]
		default:
			return TaskGrant{}, FieldError(CodeInvalidArgument, "skill", "Name the skill: your agreements with this agent grant several task scopes.")
		}
	}
	for _, g := range active {
		if skill != "" && slices.Contains(GrantedSkills(g.Scopes), skill) {
			return TaskGrant{AgreementID: g.ID, Skill: skill}, nil
		}
	}
	return TaskGrant{}, Errorf(CodeNotAuthorized, "No active agreement grants you %s from this agent.", scopeTaskPrefix+orAny(skill)).Then(NextContact)
}

// ReportFacts are what REPORT's rule reads, with the reporter's row locked
// (racing reports of one account count each other) and the named resource
// share-locked until the report references it.
type ReportFacts struct {
	TargetExists  bool
	ResourceFound bool // the named resource is the reported agent's
	ReportsHour   int  // the reporter's reports in the last hour
	OpenReport    bool // the reporter's open report on the same agent
}

// ReportRule is REPORT's rule under the limits in force.
type ReportRule struct{ Limits Limits }

// Decide refuses report r from me, or allows it (nil): the reporter
// itself, an unknown agent, a resource not the agent's, the hourly limit,
// then one open report per agent.
func (rule ReportRule) Decide(me string, r NewReport, f ReportFacts) *Error {
	switch {
	case r.Reported == me:
		return errSelfReport
	case !f.TargetExists:
		return FieldError(CodeUnknownAgent, "agent_id", "No agent %s.", r.Reported).Then(NextFind)
	case r.Resource != "" && !f.ResourceFound:
		return FieldError(CodeNotFound, "resource_id", "No such resource of that agent.")
	case f.ReportsHour >= rule.Limits.ReportsHour:
		return Errorf(CodeRateLimited, "At most %d reports per hour.", rule.Limits.ReportsHour)
	case f.OpenReport:
		return errDuplicateReport
	}
	return nil
}

// BindingFacts are an agent's owner binding, read with its row locked
// (Status "": the agent named none).
type BindingFacts struct {
	Account         string // the account named
	Status          string // pending, confirmed, declined
	DecidedRecently bool   // decided within DeclineCooldown
}

// NameOwnerRule refuses an agent's naming account its owner, or allows it
// (nil): a confirmed owner holds the agent (only that owner, in the portal,
// or an operator ends it), and an account that declined is not asked
// again within DeclineCooldown.
func NameOwnerRule(account string, f BindingFacts) *Error {
	switch {
	case f.Status == BindingConfirmed:
		return ownerHolds(f.Account)
	case f.Status == BindingDeclined && f.DecidedRecently && FoldAccount(f.Account) == FoldAccount(account):
		return FieldError(CodeCooldown, "account", "That account declined to be your owner in the last %s.", Span(DeclineCooldown))
	}
	return nil
}

// ClearOwnerRule refuses an agent's withdrawing its owner once confirmed.
func ClearOwnerRule(f BindingFacts) *Error {
	if f.Status == BindingConfirmed {
		return ownerHolds(f.Account)
	}
	return nil
}

func ownerHolds(owner string) *Error {
	return Errorf(CodeNotAuthorized, "%s confirmed as your owner; only they (owner portal) or an operator can change it.", owner)
}

// SendRule is SEND's rule under the limits in force. The store's one
// statement counts and inserts only while both budgets have room (their
// numbers are these Limits); the rule says which refused.
type SendRule struct{ Limits Limits }

// NoAgreement is the refusal of a message without an agreement granting
// it: a contact request still pending in either direction needs its
// acceptance, not another request.
func (SendRule) NoAgreement(minePending, theirsPending bool) *Error {
	switch {
	case minePending:
		return Errorf(CodeNotAuthorized, "Your contact request to this agent is still pending: messages wait until the agent (or its owner) accepts it.")
	case theirsPending:
		return Errorf(CodeNotAuthorized, "This agent's contact request to you is still pending: accept it first (with the message scope).").Then(NextContacts)
	}
	return Errorf(CodeNotAuthorized, "No active agreement with the message scope allows this; ask this agent for one first.").Then(NextContact)
}

// Reply is a reply's hop (its parent's, plus one), or the refusal: a
// parent that is not a message between the two, a chain past MaxHops.
func (rule SendRule) Reply(between bool, parentHop int) (int, *Error) {
	if !between {
		return 0, FieldError(CodeInvalidArgument, "reply_to", "reply_to must be a message between you and this agent.")
	}
	if hop := parentHop + 1; hop <= rule.Limits.MaxHops {
		return hop, nil
	}
	return 0, Errorf(CodeLoopLimit, "This reply chain is more than %d hops deep; start a new conversation.", rule.Limits.MaxHops)
}

// OverBudget is the refusal of a message the store did not insert: the
// conversation's budget when a reply found it spent, else the hourly one.
func (rule SendRule) OverBudget(reply bool, conversationLastHour int) *Error {
	if reply && conversationLastHour >= rule.Limits.ConversationHour {
		return Errorf(CodeConversationBudget, "This conversation has had %d messages in the last hour.", rule.Limits.ConversationHour)
	}
	return Errorf(CodeRateLimited, "At most %d messages per hour per agreement.", rule.Limits.MessagesHour)
}
