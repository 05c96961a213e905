package pircan

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// Operator operations: what an operator does from the CLI (channels,
// reports, owner verification, the audit log). The caller is
// OperatorCaller($USER); every change is audited with that name as actor,
// in the same transaction, as it would be from any other door.

// OperatorStore is the part of the Store behind the operator's operations.
type OperatorStore interface {
	// AddChannel registers a channel: ErrConflict when it exists.
	AddChannel(ctx context.Context, actor Actor, name string, private bool, topic string) error
	ListAllChannels(ctx context.Context) ([]ChannelInfo, error)
	// InviteToChannel lets an agent into a channel: ErrNotFound for an
	// unknown channel or agent.
	InviteToChannel(ctx context.Context, actor Actor, name, agentID string) error
	// RemoveChannel deletes a channel and its memberships (ErrNotFound).
	RemoveChannel(ctx context.Context, actor Actor, name string) error
	// ListReports lists reports of a status ("all": any), newest first,
	// with the number that match.
	ListReports(ctx context.Context, status string, limit int) ([]ReportInfo, int, error)
	ReportByID(ctx context.Context, id string) (ReportInfo, error)
	// ResolveReport closes an open report: ErrNotFound, or ErrNotPending
	// for one already resolved.
	ResolveReport(ctx context.Context, actor Actor, id, resolution, action string) error
	// KnownAccount reports whether PIRCAN has seen account (an agent's, a
	// portal owner's, or named as an owner).
	KnownAccount(ctx context.Context, account string) (bool, error)
	// VerifyOwner records the owner's name as checked; created: it had no
	// owner row yet.
	VerifyOwner(ctx context.Context, actor Actor, account, name string) (created bool, err error)
	// ClearOwnerByOperator removes any binding of the agent and returns it
	// (nil: there was none).
	ClearOwnerByOperator(ctx context.Context, actor Actor, agentID string) (*Binding, error)
	// AuditLatest is the last n entries, oldest first.
	AuditLatest(ctx context.Context, n int) ([]AuditEntry, error)
	// AuditFollow emits every entry after afterID, then each new one, until
	// ctx ends; a lost connection is reported to lost and resumed.
	AuditFollow(ctx context.Context, afterID int64, emit func(AuditEntry) error, lost func(err error, retryIn time.Duration)) error
}

var errNotOperator = Errorf(CodeNotAuthorized, "Only an operator may do this.")

// operating is the prologue of every operator operation: an operator
// calls, and the arguments hold by their check tags.
func operating[A any](c Caller, a *A) *Error {
	if c.Kind != KindOperator || c.Operator == "" {
		return errNotOperator
	}
	return checkArgs(a, c.Sizes)
}

// ChannelInfo is a channel as the operator sees it.
type ChannelInfo struct {
	Name    string `json:"name"`
	Private bool   `json:"private"`
	Topic   string `json:"topic"`
	Members int    `json:"members"`
	Invited int    `json:"invited"`
}

// AddChannelArgs register a channel.
type AddChannelArgs struct {
	Channel *string `json:"channel" check:"required,channel"`
	Private *bool   `json:"private"`
	Topic   *string `json:"topic" check:"text=300,clear"`
}

// AddChannel registers a channel agents may JOIN (a private one by
// invitation only).
func (s *Service) AddChannel(ctx context.Context, c Caller, a AddChannelArgs) (ChannelInfo, error) {
	if err := operating(c, &a); err != nil {
		return ChannelInfo{}, err
	}
	ch := ChannelInfo{Name: *a.Channel, Private: a.Private != nil && *a.Private}
	if a.Topic != nil {
		ch.Topic = *a.Topic
	}
	err := s.store.AddChannel(ctx, c.actor(), ch.Name, ch.Private, ch.Topic)
	return ch, ruleErrors(err, map[error]*Error{
		ErrConflict: FieldError(CodeInvalidArgument, "channel", "%s exists already.", ch.Name),
	})
}

// ChannelArgs name a channel.
type ChannelArgs struct {
	Channel *string `json:"channel" check:"required,text=100"`
}

// InviteArgs let an agent into a channel.
type InviteArgs struct {
	Channel *string `json:"channel" check:"required,text=100"`
	AgentID *string `json:"agent_id" check:"required,id"`
}

// Invited is an agent let into a channel.
type Invited struct{ Channel, AgentID string }

// InviteToChannel lets an agent into a (private) channel.
func (s *Service) InviteToChannel(ctx context.Context, c Caller, a InviteArgs) (Invited, error) {
	if err := operating(c, &a); err != nil {
		return Invited{}, err
	}
	return Invited{*a.Channel, *a.AgentID}, ruleErrors(s.store.InviteToChannel(ctx, c.actor(), *a.Channel, *a.AgentID), map[error]*Error{
		ErrNotFound: Errorf(CodeNotFound, "No channel %s or no agent %s.", *a.Channel, *a.AgentID),
	})
}

// RemoveChannel deletes a channel and its memberships.
func (s *Service) RemoveChannel(ctx context.Context, c Caller, a ChannelArgs) (string, error) {
	if err := operating(c, &a); err != nil {
		return "", err
	}
	return *a.Channel, ruleErrors(s.store.RemoveChannel(ctx, c.actor(), *a.Channel), map[error]*Error{
		ErrNotFound: FieldError(CodeNotFound, "channel", "No channel %s.", *a.Channel),
	})
}

// AllChannelsArgs list every channel (none yet: the list is short).
type AllChannelsArgs struct{}

// AllChannels lists every channel, private ones with their invitations.
func (s *Service) AllChannels(ctx context.Context, c Caller, a AllChannelsArgs) ([]ChannelInfo, error) {
	if err := operating(c, &a); err != nil {
		return nil, err
	}
	return s.store.ListAllChannels(ctx)
}

// Report statuses and the operator's resolution actions.
const (
	ReportOpen     = "open"
	ReportResolved = "resolved"
)

// ReportActions are what an operator may record on resolving a report.
var ReportActions = []string{"none", "warned", "removed"}

// ReportParty is one agent of a report, as the operator sees it.
type ReportParty struct {
	AgentID  string   `json:"agent_id"`
	Name     string   `json:"name"`
	Accounts []string `json:"accounts,omitempty"`
}

// ReportInfo is a report as the operator sees it. Details, the resolution
// and the accounts are filled in by ShowReport only.
type ReportInfo struct {
	ID         string      `json:"report_id"`
	CreatedAt  time.Time   `json:"created_at"`
	Reporter   ReportParty `json:"reporter"`
	Reported   ReportParty `json:"reported"`
	Category   string      `json:"category"`
	ResourceID string      `json:"resource_id,omitempty"` // the resource reported, while it exists
	Details    string      `json:"details,omitempty"`
	Status     string      `json:"status"`
	ResolvedAt *time.Time  `json:"resolved_at,omitempty"`
	ResolvedBy string      `json:"resolved_by,omitempty"`
	Resolution string      `json:"resolution,omitempty"`
	Action     string      `json:"action,omitempty"`
}

// ReportsArgs list reports, newest first.
type ReportsArgs struct {
	Status *string `json:"status" check:"enum=open|resolved|all"`
	Limit  *int    `json:"limit" check:"range=1-10000,default=50"`
}

// Reports lists the newest reports of a status (open unless given), with
// the exact number that match.
func (s *Service) Reports(ctx context.Context, c Caller, a ReportsArgs) (Page[ReportInfo], error) {
	if err := operating(c, &a); err != nil {
		return Page[ReportInfo]{}, err
	}
	status := ReportOpen
	if a.Status != nil {
		status = *a.Status
	}
	list, total, err := s.store.ListReports(ctx, status, *a.Limit)
	return Page[ReportInfo]{Items: list, Total: total}, err
}

// ReportIDArgs name a report.
type ReportIDArgs struct {
	ReportID *string `json:"report_id" check:"required,id"`
}

func errNoReport(id string) *Error {
	return FieldError(CodeNotFound, "report_id", "No report %s.", id)
}

// ShowReport is everything about one report.
func (s *Service) ShowReport(ctx context.Context, c Caller, a ReportIDArgs) (ReportInfo, error) {
	if err := operating(c, &a); err != nil {
		return ReportInfo{}, err
	}
	r, err := s.store.ReportByID(ctx, *a.ReportID)
	return r, ruleErrors(err, map[error]*Error{ErrNotFound: errNoReport(*a.ReportID)})
}

// MaxResolution is the cap on an operator's resolution text, in characters.
const MaxResolution = 1000

// ResolveReportArgs close a report: what was found and done.
type ResolveReportArgs struct {
	ReportID   *string `json:"report_id" check:"required,id"`
	Resolution *string `json:"resolution" check:"required,text=1000"`
	Action     *string `json:"action" check:"required,enum=none|warned|removed"`
}

// Resolved is a report closed, with what was done.
type Resolved struct{ ReportID, Action string }

// ResolveReport closes an open report. The action records what the
// operator did; it changes nothing else.
func (s *Service) ResolveReport(ctx context.Context, c Caller, a ResolveReportArgs) (Resolved, error) {
	if err := operating(c, &a); err != nil {
		return Resolved{}, err
	}
	return Resolved{*a.ReportID, *a.Action}, ruleErrors(s.store.ResolveReport(ctx, c.actor(), *a.ReportID, *a.Resolution, *a.Action), map[error]*Error{
		ErrNotFound:   errNoReport(*a.ReportID),
		ErrNotPending: FieldError(CodeNotPending, "report_id", "Report %s is already resolved.", *a.ReportID),
	})
}

// VerifyOwnerArgs record who owns an account, as an operator checked it.
// Force verifies an account PIRCAN has never seen.
type VerifyOwnerArgs struct {
	Account *string `json:"account" check:"required,account"`
	Name    *string `json:"name" check:"required,text=80"`
	Force   *bool   `json:"force"`
}

// VerifyOwnerResult says whether the owner row is new (the owner has not
// signed in to the portal yet).
type VerifyOwnerResult struct {
	Account, Name string
	Created       bool
}

// VerifyOwner records an account's owner as verified: WHOAMI then shows
// the name with "verification":"verified". An account PIRCAN has never
// seen is refused unless forced: whoever registers it later would be shown
// as verified.
func (s *Service) VerifyOwner(ctx context.Context, c Caller, a VerifyOwnerArgs) (VerifyOwnerResult, error) {
	if err := operating(c, &a); err != nil {
		return VerifyOwnerResult{}, err
	}
	res := VerifyOwnerResult{Account: *a.Account, Name: strings.TrimSpace(*a.Name)}
	if a.Force == nil || !*a.Force {
		known, err := s.store.KnownAccount(ctx, res.Account)
		if err != nil {
			return res, err
		}
		if !known {
			return res, FieldError(CodeNotFound, "account", "PIRCAN has never seen account %s (no agent, no portal sign-in, no agent naming it as owner); check the spelling, or force the verification to make it before the account is used.", res.Account)
		}
	}
	var err error
	res.Created, err = s.store.VerifyOwner(ctx, c.actor(), res.Account, res.Name)
	return res, err
}

// AgentArgs name an agent.
type AgentArgs struct {
	AgentID *string `json:"agent_id" check:"required,id"`
}

// UnbindOwner removes an agent's owner binding, even a confirmed one (the
// way out when an owner is gone), and returns the binding removed.
func (s *Service) UnbindOwner(ctx context.Context, c Caller, a AgentArgs) (Binding, error) {
	if err := operating(c, &a); err != nil {
		return Binding{}, err
	}
	old, err := s.store.ClearOwnerByOperator(ctx, c.actor(), *a.AgentID)
	if err != nil {
		return Binding{}, err
	}
	if old == nil {
		return Binding{}, FieldError(CodeNotFound, "agent_id", "Agent %s has no owner binding.", *a.AgentID)
	}
	return *old, nil
}

// AuditEntry is one row of the audit log.
type AuditEntry struct {
	ID           int64           `json:"id"`
	At           time.Time       `json:"at"`
	ActorAccount string          `json:"actor_account,omitempty"`
	ActorAgent   *string         `json:"actor_agent,omitempty"`
	Action       string          `json:"action"`
	Subject      string          `json:"subject,omitempty"`
	Details      json.RawMessage `json:"details"`
}

// AuditArgs read the audit log: the latest entries, and with Follow every
// new one as it is appended.
type AuditArgs struct {
	Limit  *int  `json:"limit" check:"range=1-100000,default=50"`
	Follow *bool `json:"follow"`
}

// Audit emits the latest entries of the audit log, oldest first, and with
// Follow each new one until ctx ends; a lost database connection is
// reported to lost and resumed without a gap. It streams, so it takes
// emit instead of returning a result.
func (s *Service) Audit(ctx context.Context, c Caller, a AuditArgs, emit func(AuditEntry) error, lost func(err error, retryIn time.Duration)) error {
	if err := operating(c, &a); err != nil {
		return err
	}
	entries, err := s.store.AuditLatest(ctx, *a.Limit)
	if err != nil {
		return err
	}
	if a.Follow == nil || !*a.Follow {
		for _, e := range entries {
			if err := emit(e); err != nil {
				return err
			}
		}
		return nil
	}
	// The follow emits the latest entries too: it waits for transactions
	// that may still commit a lower id, which a plain print of the latest
	// would leave behind. With none to show, it starts after the newest.
	var after int64
	if len(entries) > 0 {
		after = entries[0].ID - 1
	} else if newest, err := s.store.AuditLatest(ctx, 1); err != nil {
		return err
	} else if len(newest) > 0 {
		after = newest[0].ID
	}
	return s.store.AuditFollow(ctx, after, emit, lost)
}
