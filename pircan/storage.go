package pircan

import (
	"context"
	"errors"
	"time"
)

// Store is what the core needs from persistence. The store package
// implements it over PostgreSQL; nothing here knows SQL.
type Store interface {
	// AgentByAccount returns the agent bound to an IRC account, or ErrNotFound.
	AgentByAccount(ctx context.Context, account string) (Agent, error)
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
}

// ErrRegistrationPaused: too many new registrations in the last hour.
var ErrRegistrationPaused = errors.New("registration paused")

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
	Name         string
	Verification string
}

// Profile holds the HELLO fields that were given; nil means "leave as is".
type Profile struct {
	Name         *string
	Description  *string
	Capabilities *[]string
	CardURL      *string
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
