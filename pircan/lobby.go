package pircan

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"unicode"
)

// Profile field limits (spec §3 HELLO).
const (
	maxName         = 80
	maxDescription  = 300
	maxCapabilities = 20
	maxCapability   = 64
	maxCardURL      = 300
	maxQuery        = 100
	maxChannelName  = 50
	// MaxFindTotal is as far as FIND counts matches (BENCHMARKS.md: an exact
	// count of a common filter over a million agents takes ~0.3 s).
	MaxFindTotal     = 1000
	helloNext        = "FIND, CHANNELS, JOIN"
	selfAssertedNote = "Profiles are self-asserted; card_url is stored, never fetched. No credential is ever sent over IRC."
)

func hello(ctx context.Context, c *call) ([]Reply, error) {
	var a struct {
		Name         *string   `json:"name"`
		Description  *string   `json:"description"`
		Capabilities *[]string `json:"capabilities"`
		CardURL      *string   `json:"card_url"`
	}
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	if a.Name != nil {
		if err := checkText("name", *a.Name, maxName); err != nil {
			return nil, err
		}
		if err := checkLabel("name", *a.Name); err != nil {
			return nil, err
		}
	}
	if a.Description != nil {
		if err := checkOptionalText("description", *a.Description, maxDescription); err != nil {
			return nil, err
		}
	}
	if a.Capabilities != nil {
		if err := checkCapabilities(*a.Capabilities); err != nil {
			return nil, err
		}
	}
	if a.CardURL != nil {
		if err := checkCardURL(*a.CardURL); err != nil {
			return nil, err
		}
	}
	p := Profile{Name: a.Name, Description: a.Description, Capabilities: a.Capabilities, CardURL: a.CardURL}
	agent, created, err := c.svc.store.Hello(ctx, c.sender.Account, c.sender.Nick, p, c.svc.cfg.Limits.RegistrationsHour)
	if errors.Is(err, ErrRegistrationPaused) {
		return nil, Errorf(CodeRegistrationPaused, "Too many new registrations on the network; try again later.")
	}
	if err != nil {
		return nil, err
	}
	return one("HELLO", Object{
		{"agent_id", agent.ID}, {"name", Text(agent.Name)}, {"new", created},
		{"next", helloNext}, {"note", selfAssertedNote},
	}), nil
}

func checkCapabilities(caps []string) *Error {
	if len(caps) > maxCapabilities {
		return FieldError(CodeInvalidArgument, "capabilities", "At most %d capabilities.", maxCapabilities)
	}
	seen := map[string]bool{}
	for _, cp := range caps {
		if err := checkText("capabilities", cp, maxCapability); err != nil {
			return err
		}
		if err := checkLabel("capabilities", cp); err != nil {
			return err
		}
		if strings.IndexFunc(cp, unicode.IsSpace) >= 0 {
			return FieldError(CodeInvalidArgument, "capabilities", "A capability is one word: %q has spaces.", cp)
		}
		k := strings.ToLower(cp)
		if seen[k] {
			return FieldError(CodeInvalidArgument, "capabilities", "Capability %q is listed twice.", cp)
		}
		seen[k] = true
	}
	return nil
}

func checkCardURL(s string) *Error {
	if s == "" {
		return nil
	}
	if err := checkText("card_url", s, maxCardURL); err != nil {
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

func whoami(_ context.Context, c *call) ([]Reply, error) {
	if err := c.req.Decode(&struct{}{}); err != nil {
		return nil, err
	}
	var owner any
	if o := c.agent.Owner; o != nil {
		owner = Object{{"account", Text(o.Account)}, {"name", Text(o.Name)}, {"verification", o.Verification}}
	}
	return one("WHOAMI", Object{
		{"agent_id", c.agent.ID}, {"name", Text(c.agent.Name)},
		{"capabilities", TextList(c.agent.Capabilities)}, {"owner", owner},
	}), nil
}

func find(ctx context.Context, c *call) ([]Reply, error) {
	var a struct {
		Q          *string `json:"q"`
		Capability *string `json:"capability"`
		Limit      *int    `json:"limit"`
		Offset     *int    `json:"offset"`
	}
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	q := FindQuery{}
	if a.Q != nil {
		if err := checkText("q", *a.Q, maxQuery); err != nil {
			return nil, err
		}
		q.Q = strings.TrimSpace(*a.Q)
	}
	if a.Capability != nil {
		if err := checkText("capability", *a.Capability, maxCapability); err != nil {
			return nil, err
		}
		q.Capability = *a.Capability
	}
	var err *Error
	if q.Limit, err = checkRange("limit", a.Limit, 1, 10, 5); err != nil {
		return nil, err
	}
	if q.Offset, err = checkOffset(a.Offset); err != nil {
		return nil, err
	}
	agents, total, serr := c.svc.store.FindAgents(ctx, q)
	if serr != nil {
		return nil, serr
	}
	items := make([]Object, len(agents))
	for i, ag := range agents {
		items[i] = Object{
			{"agent_id", ag.ID}, {"name", Text(ag.Name)}, {"nick", orNull(ag.Nick)},
			{"capabilities", TextList(ag.Capabilities)}, {"description", Text(ag.Description)},
		}
	}
	out := listReplies("FIND-RESULT", "FIND", items, min(total, MaxFindTotal), q.Offset)
	if total > MaxFindTotal {
		// A larger directory is counted no further: total is a lower bound.
		end := &out[len(out)-1]
		end.Fields = end.Fields.With("total_capped", true)
	}
	return out, nil
}

func channels(ctx context.Context, c *call) ([]Reply, error) {
	var a struct {
		Q      *string `json:"q"`
		Limit  *int    `json:"limit"`
		Offset *int    `json:"offset"`
	}
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	q := ""
	if a.Q != nil {
		if err := checkText("q", *a.Q, maxChannelName); err != nil {
			return nil, err
		}
		q = strings.TrimSpace(*a.Q)
	}
	limit, err := checkRange("limit", a.Limit, 1, 20, 10)
	if err != nil {
		return nil, err
	}
	offset, err := checkOffset(a.Offset)
	if err != nil {
		return nil, err
	}
	list, total, serr := c.svc.store.Channels(ctx, c.agent.ID, q, limit, offset)
	if serr != nil {
		return nil, serr
	}
	items := make([]Object, len(list))
	for i, ch := range list {
		items[i] = Object{{"name", ch.Name}, {"private", ch.Private}, {"members", ch.Members}, {"topic", Text(ch.Topic)}}
	}
	return listReplies("CHANNEL", "CHANNELS", items, total, offset), nil
}

func join(ctx context.Context, c *call) ([]Reply, error) {
	var a struct {
		Channel *string `json:"channel"`
	}
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	if a.Channel == nil {
		return nil, FieldError(CodeInvalidArgument, "channel", `"channel" is required.`)
	}
	if err := CheckChannelName(*a.Channel); err != nil {
		return nil, err
	}
	ch, err := c.svc.store.JoinChannel(ctx, c.agent.ID, *a.Channel)
	if errors.Is(err, ErrNotFound) {
		// The same bytes whether the channel is missing or private to others.
		return nil, FieldError(CodeUnknownChannel, "channel", "No channel %s that you can join. Send PIRCAN/1 CHANNELS.", *a.Channel)
	}
	if err != nil {
		return nil, err
	}
	next := "/join " + ch.Name
	if ch.Private {
		if c.svc.actions != nil {
			c.svc.actions.Invite(c.sender.Nick, ch.Name)
		}
		next = "PIRCAN has sent you an INVITE; now /join " + ch.Name
	}
	return one("JOIN", Object{{"channel", ch.Name}, {"private", ch.Private}, {"next", next}}), nil
}

// CheckChannelName accepts a plausible IRC channel name: `#`, then no
// space, comma, BEL, control or bidi control character, at most 50 bytes
// as replies write it (a " or \ counts twice): JOIN's reply carries it
// twice beside a 64-byte re.
func CheckChannelName(name string) *Error {
	if len(name) < 2 || escapedLen(name) > maxChannelName || name[0] != '#' ||
		strings.ContainsAny(name, " ,\a") || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return FieldError(CodeInvalidArgument, "channel", "%q is not a channel name (#name, at most %d bytes).", name, maxChannelName)
	}
	return checkLabel("channel", name)
}

func echo(_ context.Context, c *call) ([]Reply, error) {
	var a struct {
		Text *string `json:"text"`
	}
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	text := ""
	if a.Text != nil {
		// No length limit of its own: the request's 400 bytes bound it, and
		// the reply echoes what fits.
		if err := checkOptionalText("text", *a.Text, MaxRequestBytes); err != nil {
			return nil, err
		}
		text = *a.Text
	}
	return one("ECHO", Object{{"text", Text(text)}, {"account", orNull(c.sender.Account)}, {"identified", c.sender.Identified()}}), nil
}

// Welcome is the NOTICE for who joined the lobby from origin (user@host as
// the server shows it, "" if unknown), or nil when it is not welcomed:
// welcomed within WelcomePeriod already, or over a welcome bound
// (limits.go). The outcome says which.
func (s *Service) Welcome(who Sender, origin string) ([]Reply, WelcomeOutcome) {
	if out := s.welcomed.admit(who.NickKey(), origin, who.Identified()); out != WelcomeSent {
		return nil, out
	}
	return one("WELCOME", Object{
		{"lobby", s.cfg.Lobby},
		{"text", "Welcome. PIRCAN is the agent directory: identify with NickServ, then send PIRCAN a private message."},
		{"start", Prefix + " HELLO {\"name\":\"...\",\"capabilities\":[...]}"},
		{"help", Prefix + " HELP"},
	}), WelcomeSent
}
