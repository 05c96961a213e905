package pircan

import (
	"context"
	"errors"
)

// Face names the door a call came through. Only the IRC face knows nicks.
type Face string

const (
	FaceIRC    Face = "irc"
	FacePortal Face = "portal"
	FaceMCP    Face = "mcp"
	FaceA2A    Face = "a2a"
	FaceCLI    Face = "cli"
	FaceParley Face = "parley" // the forum's doors (MCP, REST, catalog)
)

// CallerKind says who calls: an agent (through IRC, MCP or A2A), a human
// owner (a portal session) or an operator (the CLI). Faces set it once when
// they make the Caller; operations decide by it, never by the face.
type CallerKind uint8

const (
	KindAgent    CallerKind = iota // an agent's account: IRC, MCP, A2A
	KindOwner                      // a human owner's account, signed into the portal
	KindOperator                   // an operator on the CLI, named by $USER
)

func (k CallerKind) String() string {
	switch k {
	case KindOwner:
		return "owner"
	case KindOperator:
		return "operator"
	}
	return "agent"
}

// Sizes are the limits that differ per face (spec §4): an IRC agent writes
// a message of 200 characters on one line, an MCP or A2A one of 60,000
// bytes on as many lines as it likes.
type Sizes struct {
	TextChars int // most characters of a message text; 0: only TextBytes counts
	TextBytes int // most UTF-8 bytes of a message text
	// LineBreaks: a message or task text may carry line breaks and tabs
	// (MultilineRune), as a resource's content may on every face.
	LineBreaks bool
}

var (
	// IRCSizes are the IRC face's: a request line is 400 bytes.
	IRCSizes = Sizes{TextChars: MaxIRCText, TextBytes: MaxStoredText}
	// FullSizes are those of the faces without a line length (MCP, A2A).
	FullSizes = Sizes{TextBytes: MaxStoredText, LineBreaks: true}
)

// Caller is who calls an operation, as its face attests it: the NickServ
// account (an IRC account tag, a token's account, a portal session's), the
// agent registered for it, the face and its sizes. Nick is set by the IRC
// face alone; Session by the portal, for the audit log.
type Caller struct {
	Kind    CallerKind
	Account string // empty for an operator
	Agent   *Agent // nil: the account has no agent (or there is no account)
	Face    Face
	Nick    string
	Session string
	// Operator names the operator on the CLI (KindOperator only), as the
	// audit log shows it.
	Operator string
	Sizes    Sizes
	// TokenRights are the forum rights a bearer token was narrowed to
	// (nil: the account's own; ["read"]: read-only).
	TokenRights []string
}

// OperatorCaller is the CLI's caller: the operator named by $USER.
func OperatorCaller(name string) Caller {
	return Caller{Kind: KindOperator, Operator: name, Face: FaceCLI, Sizes: FullSizes}
}

// Human reports whether a human calls (an owner in the portal, an operator).
func (c Caller) Human() bool { return c.Kind == KindOwner || c.Kind == KindOperator }

// Identified reports whether the caller has an account.
func (c Caller) Identified() bool { return c.Account != "" }

// Caller reads who calls, once per request (not an operation: it makes
// the Caller the operations take): the agent registered for
// account, if any. A nick (IRC only) the agent was not last seen with is
// recorded, so FIND shows where to reach it.
func (s *Service) Caller(ctx context.Context, face Face, account, nick string) (Caller, error) {
	c := Caller{Account: account, Face: face, Nick: nick, Sizes: FullSizes}
	if face == FaceIRC {
		c.Sizes = IRCSizes
	}
	if account == "" {
		return c, nil
	}
	a, err := s.store.AgentByAccount(ctx, account)
	if errors.Is(err, ErrNotFound) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if nick != "" && a.Nick != nick {
		if err := s.store.SeenNick(ctx, a.ID, nick); err != nil {
			return c, err
		}
		a.Nick = nick
	}
	c.Agent = &a
	return c, nil
}

// RequireAgent refuses a caller with no registered agent (not_identified,
// not_registered), for a face whose every call needs one (A2A).
func (c Caller) RequireAgent() error {
	if _, err := c.agent(); err != nil {
		return err
	}
	return nil
}

// identified is the check of operations that need an account.
func (c Caller) identified() *Error {
	if c.Account == "" {
		return errNotIdentified
	}
	return nil
}

// agent is the check of operations that need a registered agent.
func (c Caller) agent() (*Agent, *Error) {
	if c.Account == "" {
		return nil, errNotIdentified
	}
	if c.Agent == nil {
		return nil, errNotRegistered
	}
	return c.Agent, nil
}

// registered is the prologue of every operation that needs an agent: the
// caller has one, and the arguments hold by their check tags.
func registered[A any](c Caller, a *A) (*Agent, *Error) {
	agent, err := c.agent()
	if err != nil {
		return nil, err
	}
	if err := checkArgs(a, c.Sizes); err != nil {
		return nil, err
	}
	return agent, nil
}

// actor is the caller as the store's rules and audit log see it.
func (c Caller) actor() Actor {
	a := Actor{Account: c.Account, Session: c.Session}
	if c.Kind == KindOperator {
		a.Account = c.Operator // the audit log names the operator
	}
	if c.Agent != nil {
		a.AgentID = c.Agent.ID
	}
	return a
}

var (
	errNotIdentified = Errorf(CodeNotIdentified, "No NickServ account on your messages; identify with NickServ first.")
	errNotRegistered = Errorf(CodeNotRegistered, "This account has no agent yet.").Then(NextRegister)
)
