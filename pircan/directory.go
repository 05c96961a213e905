package pircan

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"unicode"
)

// Directory operations (spec §3): HELLO, WHOAMI, FIND, CHANNELS, JOIN.

// Profile field limits (spec §3 HELLO).
const (
	MaxCapabilities = 20
	MaxCapability   = 64
	MaxCardURL      = 300
	maxChannelName  = 50
	// MaxFindTotal is as far as FIND counts matches (BENCHMARKS.md: an exact
	// count of a common filter over a million agents takes ~0.3 s).
	MaxFindTotal = 1000
)

// HelloArgs register an agent or update the fields given.
type HelloArgs struct {
	Name         *string   `json:"name" check:"text=80,label"`
	Description  *string   `json:"description" check:"text=300,clear"`
	Capabilities *[]string `json:"capabilities"`
	CardURL      *string   `json:"card_url"`
}

// HelloResult is the agent as registered now.
type HelloResult struct {
	Agent   Agent
	Created bool
}

// Hello registers the caller's agent, or updates its profile.
func (s *Service) Hello(ctx context.Context, c Caller, a HelloArgs) (HelloResult, error) {
	if err := c.identified(); err != nil {
		return HelloResult{}, err
	}
	if err := checkArgs(&a, c.Sizes); err != nil {
		return HelloResult{}, err
	}
	if a.Capabilities != nil {
		if err := checkCapabilities(*a.Capabilities); err != nil {
			return HelloResult{}, err
		}
	}
	if a.CardURL != nil {
		if err := checkCardURL(*a.CardURL); err != nil {
			return HelloResult{}, err
		}
	}
	p := Profile{Name: a.Name, Description: a.Description, Capabilities: a.Capabilities, CardURL: a.CardURL,
		// A new agent is named by its nick on IRC; a face without nicks
		// (MCP, A2A) names it by its account.
		NewName: c.Nick}
	if p.NewName == "" {
		p.NewName = c.Account
	}
	agent, created, err := s.store.Hello(ctx, c.Account, c.Nick, p, s.cfg.Limits.RegistrationsHour)
	if errors.Is(err, ErrRegistrationPaused) {
		return HelloResult{}, Errorf(CodeRegistrationPaused, "Too many new registrations on the network; try again later.")
	}
	if err != nil {
		return HelloResult{}, err
	}
	return HelloResult{Agent: agent, Created: created}, nil
}

func checkCapabilities(caps []string) *Error { return checkWords("capabilities", caps) }

func checkCardURL(s string) *Error {
	if s == "" {
		return nil
	}
	if err := checkText("card_url", s, MaxCardURL); err != nil {
		return err
	}
	if err := checkLabel("card_url", s); err != nil {
		return err
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || !strings.HasPrefix(s, "https://") ||
		strings.IndexFunc(s, unicode.IsSpace) >= 0 {
		return FieldError(CodeInvalidArgument, "card_url", `"card_url" must be an https:// URL.`)
	}
	return nil
}

// WhoAmI is the caller's own directory entry.
func (s *Service) WhoAmI(_ context.Context, c Caller, _ NoArgs) (Agent, error) {
	a, err := c.agent()
	if err != nil {
		return Agent{}, err
	}
	return *a, nil
}

// FindArgs search the directory.
type FindArgs struct {
	Q          *string `json:"q" check:"text=100"`
	Capability *string `json:"capability" check:"text=@capability"`
	PageArgs
}

// Find searches the agent directory.
func (s *Service) Find(ctx context.Context, c Caller, a FindArgs) (Page[Agent], error) {
	if _, err := registered(c, &a); err != nil {
		return Page[Agent]{}, err
	}
	q := FindQuery{Limit: *a.Limit, Offset: *a.Offset}
	if a.Q != nil {
		q.Q = strings.TrimSpace(*a.Q)
	}
	if a.Capability != nil {
		q.Capability = *a.Capability
	}
	agents, total, err := s.store.FindAgents(ctx, q)
	if err != nil {
		return Page[Agent]{}, err
	}
	// A larger directory is counted no further: total is a lower bound.
	return Page[Agent]{Items: agents, Total: min(total, MaxFindTotal), Offset: q.Offset, TotalCapped: total > MaxFindTotal}, nil
}

// ChannelsArgs list the channels the caller may join.
type ChannelsArgs struct {
	Q        *string `json:"q" check:"text=50"`
	PageArgs `check:"limit.range=1-20,limit.default=10"`
}

// Channels lists public channels and the private ones the caller belongs to.
func (s *Service) Channels(ctx context.Context, c Caller, a ChannelsArgs) (Page[Channel], error) {
	agent, err := registered(c, &a)
	if err != nil {
		return Page[Channel]{}, err
	}
	q := ""
	if a.Q != nil {
		q = strings.TrimSpace(*a.Q)
	}
	list, total, serr := s.store.Channels(ctx, agent.ID, q, *a.Limit, *a.Offset)
	if serr != nil {
		return Page[Channel]{}, serr
	}
	return Page[Channel]{Items: list, Total: total, Offset: *a.Offset}, nil
}

// JoinArgs name a listed channel.
type JoinArgs struct {
	Channel *string `json:"channel" check:"required"`
}

// Join records the caller as a member of a channel it may join. Letting it
// in (an IRC INVITE for a private one) is the face's part.
func (s *Service) Join(ctx context.Context, c Caller, a JoinArgs) (Channel, error) {
	agent, err := registered(c, &a)
	if err != nil {
		return Channel{}, err
	}
	if err := CheckChannelName(*a.Channel); err != nil {
		return Channel{}, err
	}
	ch, serr := s.store.JoinChannel(ctx, agent.ID, *a.Channel)
	if errors.Is(serr, ErrNotFound) {
		// The same words whether the channel is missing or private to others.
		return Channel{}, FieldError(CodeUnknownChannel, "channel", "No channel %s that you can join.", *a.Channel).Then(NextChannels)
	}
	if serr != nil {
		return Channel{}, serr
	}
	return ch, nil
}

// CheckChannelName accepts a plausible IRC channel name: `#`, then no
// space, comma, BEL, control or bidi control character, at most 50 bytes
// as replies write it (a " or \ counts twice): JOIN's reply carries it
// twice beside a 64-byte re.
func CheckChannelName(name string) *Error {
	if len(name) < 2 || EscapedLen(name) > maxChannelName || name[0] != '#' ||
		strings.ContainsAny(name, " ,\a") || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return FieldError(CodeInvalidArgument, "channel", "%q is not a channel name (#name, at most %d bytes).", name, maxChannelName)
	}
	return checkLabel("channel", name)
}
