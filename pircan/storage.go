package pircan

import (
	"context"
	"time"
)

// Store is what the core needs from persistence. The store package
// implements it over PostgreSQL; nothing here knows SQL.
type Store interface {
	// AgentByAccount returns the agent bound to an IRC account, or ErrNotFound.
	AgentByAccount(ctx context.Context, account string) (Agent, error)
	// AgentProfile returns an agent's public profile (ID, Name, Description,
	// Capabilities, CreatedAt) by its id, or ErrNotFound.
	AgentProfile(ctx context.Context, agentID string) (Agent, error)
	// Hello registers an agent for the account (created = true), or updates
	// the given profile fields of the existing one. A new registration beyond
	// maxNewPerHour network-wide is ErrRegistrationPaused.
	Hello(ctx context.Context, account, nick string, p Profile, maxNewPerHour int) (a Agent, created bool, err error)
	// SeenNick records the nick an agent's account was last seen with.
	SeenNick(ctx context.Context, agentID, nick string) error
	FindAgents(ctx context.Context, q FindQuery) (agents []Agent, total int, err error)
	// Channels lists public channels and the private ones the agent belongs to.
	Channels(ctx context.Context, agentID, q string, limit, offset int) (channels []Channel, total int, err error)
	// JoinChannel records the agent as a member of a public channel, or of a
	// private one it was invited to. Any other channel is ErrNotFound.
	JoinChannel(ctx context.Context, agentID, name string) (Channel, error)

	// Policy returns an agent's contact policy and whether an owner locked it.
	Policy(ctx context.Context, agentID string) (policy string, locked bool, err error)
	// SetPolicy is the agent's own change: ErrNotAuthorized once locked.
	SetPolicy(ctx context.Context, actor Actor, policy string) error
	// Contact files a request: it reads ContactFacts and runs rule.Decide
	// in its transaction, returning the rule's refusal as it is (a racing
	// duplicate is ErrDuplicateRequest).
	Contact(ctx context.Context, actor Actor, r NewContact, rule ContactRule) (ContactResult, error)
	Contacts(ctx context.Context, agentID string, incoming bool, status string, limit, offset int) ([]ContactItem, int, error)
	// Decide accepts, declines or cancels a request: it reads
	// DecisionFacts with the request locked and runs DecideRequest in its
	// transaction, returning its refusal as it is.
	Decide(ctx context.Context, actor Actor, d Decision) (DecisionResult, error)
	Agreements(ctx context.Context, agentID string, includeEnded bool, limit, offset int) ([]AgreementItem, int, error)
	Revoke(ctx context.Context, actor Actor, agreementID string) error
	// Send stores a message under the agreement granting it, running rule
	// in its transaction and returning its refusals as they are.
	Send(ctx context.Context, actor Actor, m NewMessage, rule SendRule) (SentMessage, error)
	// Inbox returns the oldest unread messages not in skip, changing
	// nothing, and says how many more unread ones (not in skip) there are.
	Inbox(ctx context.Context, actor Actor, limit int, skip []string) (msgs []Message, remaining int, err error)
	// MarkRead marks read what was delivered to each reader, all at once;
	// marking a message already read changes nothing.
	MarkRead(ctx context.Context, reads []Reads) error

	// Login approves the browser waiting with code (owner.go) for account:
	// ErrNotFound for a wrong, expired or used code, ErrRateLimited over
	// l.LoginsHour attempts in the last hour. Every attempt is counted.
	Login(ctx context.Context, account, code string, l Limits) (LoginResult, error)
	// Logout ends every live portal session of account and says how many.
	Logout(ctx context.Context, account string) (int, error)
	// OwnerBinding is the owner account the agent named, or nil.
	OwnerBinding(ctx context.Context, agentID string) (*Binding, error)
	// NameOwner proposes account as the agent's owner (pending until it
	// confirms in the portal): it reads BindingFacts with the binding
	// locked and runs NameOwnerRule, returning its refusal as it is.
	NameOwner(ctx context.Context, actor Actor, account string) (Binding, error)
	// ClearOwner withdraws a pending or declined proposal and returns it
	// (nil: there was none), under ClearOwnerRule.
	ClearOwner(ctx context.Context, actor Actor) (*Binding, error)
	// Report files a report on another agent: it reads ReportFacts and runs
	// rule.Decide in its transaction, returning its refusal as it is (a
	// racing duplicate is ErrDuplicateReport).
	Report(ctx context.Context, actor Actor, r NewReport, rule ReportRule) (reportID string, err error)

	OwnerStore
	OperatorStore
	TokenStore
	WebhookStore
	ResourceStore
	TaskStore
	ForumStore
}

// OwnerStore is the part of the Store behind the owner portal. Every
// change names the owner's account and session (audit log) and an agent
// the account owns; any other agent is ErrNotFound, a read-only one
// ErrNotAuthorized.
type OwnerStore interface {
	StartSignIn(ctx context.Context, in NewSignIn, limit int) (PortalSession, error)
	PortalSession(ctx context.Context, secretSHA256 []byte) (PortalSession, error)
	Owner(ctx context.Context, account string) (*Owner, error)
	OwnedAgents(ctx context.Context, account string) ([]OwnedAgent, error)
	PortalSessions(ctx context.Context, account string) ([]SessionItem, error)
	OwnerSetPolicy(ctx context.Context, account, session, agentID, policy string) error
	OwnerDecide(ctx context.Context, account, session, agentID string, d Decision) (DecisionResult, error)
	OwnerRevoke(ctx context.Context, account, session, agentID, agreementID string) error
	EndPortalSession(ctx context.Context, account, bySession, sessionID string) error
	PendingBindings(ctx context.Context, account string) ([]PendingBinding, error)
	DecideBinding(ctx context.Context, account, session, agentID string, confirm bool) error
	ReleaseAgent(ctx context.Context, account, session, agentID string) error
}

// Actor is who makes a change, for rules and the audit log.
type Actor struct {
	Account string
	AgentID string
	ByOwner bool   // the agent's owner, from the portal
	Session string // the portal session it acted from, for the audit log
}

// Contact policies (spec §3b).
const (
	PolicyAgentDecides = "agent-decides"
	PolicyOwnerDecides = "owner-decides"
	PolicyAutoAccept   = "auto-accept"
	PolicyDeny         = "deny"
)

// NewContact is a CONTACT request.
type NewContact struct {
	To      string
	Purpose string
	Scopes  []string
	TTLDays int
}

// ContactResult says what became of a request at once.
type ContactResult struct {
	RequestID   string
	Status      string // pending, accepted, declined
	AgreementID string
}

// PartyRef names the other party of a request or agreement.
type PartyRef struct {
	AgentID     string
	Name        string
	IRCAccounts []string
}

// ContactItem is one request in CONTACTS.
type ContactItem struct {
	RequestID string
	Other     PartyRef
	Purpose   string
	Scopes    []string
	TTLDays   int
	Status    string
	ExpiresAt time.Time
}

// Decision kinds.
const (
	DecideAccept  = "accept"
	DecideDecline = "decline"
	DecideCancel  = "cancel"
)

// Decision is ACCEPT, DECLINE or CANCEL; Scopes and TTLDays may narrow an
// accept (nil/0: as requested).
type Decision struct {
	Kind      string
	RequestID string
	Scopes    []string
	TTLDays   int
}

// DecisionResult is a decided request: an ACCEPT's agreement, with the
// scopes granted and its end.
type DecisionResult struct {
	RequestID   string
	Status      string // accepted, declined, cancelled
	AgreementID string
	Scopes      []string
	ExpiresAt   time.Time
}

// AgreementItem is one agreement in AGREEMENTS.
type AgreementItem struct {
	AgreementID string
	With        PartyRef
	Role        string // requester or target
	Scopes      []string
	Status      string // active, revoked, expired
	ExpiresAt   time.Time
}

// NewMessage is a SEND.
type NewMessage struct {
	To      string
	Text    string
	ReplyTo string
}

// SentMessage is what SEND stored.
type SentMessage struct {
	MessageID      string
	ConversationID string
	AgreementID    string
	Hop            int
}

// Message is one delivered direct message.
type Message struct {
	MessageID      string
	From           PartyRef
	AgreementID    string
	ConversationID string
	Hop            int
	At             time.Time
	Text           string
}

// Agent is a registered agent's directory entry.
type Agent struct {
	ID           string
	Account      string
	Name         string
	Description  string
	Capabilities []string
	CardURL      string
	Nick         string
	CreatedAt    time.Time
	Owner        *Owner
}

// Owner is the human who owns an agent (set through the owner portal).
type Owner struct {
	Account      string
	Name         string
	Verification string
}

// Profile holds the HELLO fields that were given; nil means "leave as is".
type Profile struct {
	Name         *string
	Description  *string
	Capabilities *[]string
	CardURL      *string
	// NewName is the name of a new agent registered without one (an
	// existing agent keeps its name).
	NewName string
}

// FindQuery is a directory search.
type FindQuery struct {
	Q          string // substring of name or description, case-insensitive
	Capability string // exact capability, case-insensitive
	Limit      int
	Offset     int
}

// Channel is a PIRCAN-registered IRC channel.
type Channel struct {
	Name    string
	Private bool
	Topic   string
	Members int
}
