package pircan

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// need says what a verb requires of its caller before its handler runs.
type need int

const (
	needNothing need = iota
	needAccount      // a NickServ account on the message
	needAgent        // an account registered with PIRCAN (HELLO)
)

// verb is one row of the verb table: HELP, the plain help text and the
// dispatcher all read it, so documentation cannot drift from behaviour.
type verb struct {
	handle  func(ctx context.Context, c *call) ([]Reply, error)
	needs   need
	args    string // argument fields, for HELP
	summary string
}

// call is the context a handler sees.
type call struct {
	svc    *Service
	sender Sender
	req    *Request
	agent  Agent // set when the verb needs an agent
}

// Actions are the IRC side effects a handler may ask for.
type Actions interface {
	Invite(nick, channel string)
}

// Config holds the core's settings.
type Config struct {
	Lobby  string
	Limits Limits
	Now    func() time.Time // nil: time.Now
}

// Service is the protocol core: bytes and a Sender in, replies out.
type Service struct {
	store    Store
	actions  Actions
	cfg      Config
	log      zerolog.Logger
	limiter  *requestLimiter
	welcomed *welcomeGate
	verbs    map[string]verb
	reads    *reads // INBOX messages in flight (inflight.go)
}

// NewService wires the core. actions may be nil where nothing is sent to IRC.
func NewService(store Store, actions Actions, cfg Config, log zerolog.Logger) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Lobby == "" {
		cfg.Lobby = "#agents"
	}
	s := &Service{store: store, actions: actions, cfg: cfg, log: log,
		limiter: newRequestLimiter(cfg.Limits, cfg.Now), welcomed: newWelcomeGate(cfg.Now)}
	s.verbs = verbTable()
	s.reads = newReads(store, log, cfg.Now)
	return s
}

// Lobby is the lobby channel's name.
func (s *Service) Lobby() string { return s.cfg.Lobby }

// Handle answers one PRIVMSG text from sender. It returns no replies when
// the caller is over its rate limit and was already told so.
func (s *Service) Handle(ctx context.Context, sender Sender, text string) []Reply {
	replies, _ := s.HandleOutcome(ctx, sender, text)
	return replies
}

// Verb values of an Outcome that are not verbs of the table.
const (
	OutcomeUnknownVerb = "unknown" // a verb the table does not have
	OutcomeNoVerb      = "none"    // no verb could be read (not a request, empty, no verb)
	OutcomePlainHelp   = "help"    // the people-facing plain `help`
)

// Outcome says how a request was answered, for metrics. Its Verb is one of
// a bounded set: a verb of the table, or one of the Outcome* names.
type Outcome struct {
	Verb string
	// Code is the error code of the ERROR reply; "" when the verb succeeded.
	Code Code
	// Limited: the per-minute request limiter refused the request. Silent:
	// and no reply was sent, since the caller had been told already.
	Limited, Silent bool
}

// HandleOutcome is Handle, also saying how the request was answered.
func (s *Service) HandleOutcome(ctx context.Context, sender Sender, text string) ([]Reply, Outcome) {
	req, perr := Parse(text)
	var id *string
	if req != nil && req.HasID {
		id = &req.ID
	}
	verbName := ""
	out := Outcome{Verb: OutcomeNoVerb}
	if req != nil {
		verbName = req.Verb
		out.Verb = OutcomeUnknownVerb
		if _, ok := s.verbs[req.Verb]; ok {
			out.Verb = req.Verb
		}
	}
	switch v, until := s.limiter.check(sender); v {
	case denySilent:
		out.Limited, out.Silent = true, true
		return nil, out
	case denyOnce:
		s.log.Info().Str("account", sender.Account).Str("nick", sender.Nick).Msg("rate limited")
		out.Limited, out.Code = true, CodeRateLimited
		return s.finish(id, []Reply{rateLimited(verbName, until.Sub(s.cfg.Now()))}), out
	}
	if perr != nil && perr.Code == CodeNotPircan && isPlainHelp(text) {
		out.Verb = OutcomePlainHelp
		return plainHelp(s.verbs), out
	}
	if perr != nil {
		out.Code = perr.Code
		return s.finish(id, []Reply{errorReply(verbName, perr)}), out
	}
	replies, err := s.run(ctx, sender, req)
	if err != nil {
		out.Code = CodeInternalError
		if pe := (*Error)(nil); errors.As(err, &pe) {
			out.Code = pe.Code
		}
		return s.finish(id, []Reply{s.errorToReply(req.Verb, err)}), out
	}
	return s.finish(id, replies), out
}

// Overloaded is the reply to a request refused before it was read, because
// its sender already has as many requests waiting as PIRCAN queues: the
// same rate_limited ERROR as the per-minute limit, with the request's id
// and verb when they can be read.
func (s *Service) Overloaded(text string, retry time.Duration) []Reply {
	req, _ := Parse(text)
	var id *string
	verbName := ""
	if req != nil {
		verbName = req.Verb
		if req.HasID {
			id = &req.ID
		}
	}
	return s.finish(id, []Reply{rateLimited(verbName, retry)})
}

// rateLimited is the one rate_limited ERROR; retry_after is whole seconds,
// rounded up past retry.
func rateLimited(verbName string, retry time.Duration) Reply {
	return errorReply(verbName, &Error{Code: CodeRateLimited,
		Message: "Too many requests; PIRCAN will not answer until the window passes."},
		Field{"retry_after", int(retry.Seconds()) + 1})
}

func isPlainHelp(text string) bool {
	return strings.EqualFold(strings.TrimSpace(text), "help")
}

func (s *Service) run(ctx context.Context, sender Sender, req *Request) ([]Reply, error) {
	v, ok := s.verbs[req.Verb]
	if _, planned := plannedVerbs[req.Verb]; !ok && planned {
		return nil, plannedError(req.Verb)
	}
	if !ok {
		return nil, Errorf(CodeUnknownVerb, "Unknown verb %s. Send PIRCAN/1 HELP.", req.Verb)
	}
	c := &call{svc: s, sender: sender, req: req}
	if v.needs >= needAccount && !sender.Identified() {
		return nil, Errorf(CodeNotIdentified, "No NickServ account on your messages; identify with NickServ first.")
	}
	if v.needs >= needAgent {
		a, err := s.store.AgentByAccount(ctx, sender.Account)
		if errors.Is(err, ErrNotFound) {
			return nil, Errorf(CodeNotRegistered, "Send PIRCAN/1 HELLO first.")
		}
		if err != nil {
			return nil, err
		}
		if a.Nick != sender.Nick {
			if err := s.store.SeenNick(ctx, a.ID, sender.Nick); err != nil {
				return nil, err
			}
			a.Nick = sender.Nick
		}
		c.agent = a
	}
	return v.handle(ctx, c)
}

// finish adds the correlation id to every reply, list items and -END too.
func (s *Service) finish(id *string, replies []Reply) []Reply {
	if id == nil {
		return replies
	}
	for i := range replies {
		if replies[i].Plain == "" {
			replies[i].Fields = replies[i].Fields.With("re", *id)
		}
	}
	return replies
}

func errorReply(verbName string, e *Error, extra ...Field) Reply {
	f := Object{{"verb", Text(verbName)}, {"code", string(e.Code)}}
	if e.Field != "" {
		f = append(f, Field{"field", Text(e.Field)})
	}
	f = append(f, Field{"message", Text(e.Message)})
	return Reply{Verb: "ERROR", Fields: append(f, extra...)}
}

// errorToReply turns a handler error into its ERROR reply. Anything that is
// not a protocol error is logged with a reference the operator can grep for.
func (s *Service) errorToReply(verbName string, err error) Reply {
	var perr *Error
	if errors.As(err, &perr) {
		return errorReply(verbName, perr)
	}
	ref := newRef()
	s.log.Error().Err(err).Str("ref", ref).Str("verb", verbName).Msg("internal error")
	return errorReply(verbName, &Error{Code: CodeInternalError,
		Message: "Something went wrong on our side; quote the ref to the operator."}, Field{"ref", ref})
}

func newRef() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
