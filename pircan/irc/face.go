// Package irc is PIRCAN's IRC face: the request grammar (request.go), the
// verb table (verbs.go), and for each verb group the decoding of its JSON
// arguments and the rendering of the core's results as one-line replies
// (350 bytes, re, truncation, MESSAGE-MORE). The connection itself is
// pircan/irc/transport.
package irc

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
)

// Inviter performs the IRC side of JOIN for a private channel.
type Inviter interface {
	Invite(nick, channel string)
}

// Config holds the face's settings.
type Config struct {
	Lobby  string
	Limits pircan.Limits    // the per-minute request limits are the face's
	Now    func() time.Time // nil: time.Now
}

// Face answers IRC requests: grammar → arguments → operation → replies.
type Face struct {
	svc      *pircan.Service
	inviter  Inviter
	cfg      Config
	log      zerolog.Logger
	limiter  *requestLimiter
	welcomed *welcomeGate
	verbs    map[string]verb
}

// New builds the face over the core. inviter may be nil where nothing is
// sent to IRC.
func New(svc *pircan.Service, inviter Inviter, cfg Config, log zerolog.Logger) *Face {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Lobby == "" {
		cfg.Lobby = "#agents"
	}
	return &Face{svc: svc, inviter: inviter, cfg: cfg, log: log,
		limiter: newRequestLimiter(cfg.Limits, cfg.Now), welcomed: newWelcomeGate(cfg.Now), verbs: verbTable()}
}

// Core is the core the face calls.
func (f *Face) Core() *pircan.Service { return f.svc }

// Lobby is the lobby channel's name.
func (f *Face) Lobby() string { return f.cfg.Lobby }

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
	Code pircan.Code
	// Limited: the per-minute request limiter refused the request. Silent:
	// and no reply was sent, since the caller had been told already.
	Limited, Silent bool
}

// call is what a verb's handler sees.
type call struct {
	face   *Face
	sender Sender
	caller pircan.Caller
	req    *Request
}

// Handle answers one PRIVMSG text from sender, and says how. It returns no
// replies when the caller is over its rate limit and was already told so.
func (f *Face) Handle(ctx context.Context, sender Sender, text string) ([]Reply, Outcome) {
	req, perr := Parse(text)
	var id *string
	var v verb
	known := false
	out := Outcome{Verb: OutcomeNoVerb}
	if req != nil {
		if req.HasID {
			id = &req.ID
		}
		if req.Verb != "" {
			out.Verb = OutcomeUnknownVerb
		}
		if v, known = f.verbs[req.Verb]; known {
			out.Verb = req.Verb
		}
	}
	verbName := ""
	if req != nil {
		verbName = req.Verb
	}
	switch vd, until := f.limiter.check(sender); vd {
	case denySilent:
		out.Limited, out.Silent = true, true
		return nil, out
	case denyOnce:
		f.log.Info().Str("account", sender.Account).Str("nick", sender.Nick).Msg("rate limited")
		out.Limited, out.Code = true, pircan.CodeRateLimited
		return finish(id, []Reply{rateLimited(verbName, until.Sub(f.cfg.Now()))}), out
	}
	if perr != nil && perr.Code == pircan.CodeNotPircan && isPlainHelp(text) {
		out.Verb = OutcomePlainHelp
		return plainHelp(f.verbs), out
	}
	if perr != nil {
		out.Code = perr.Code
		return finish(id, []Reply{errorReply(verbName, perr)}), out
	}
	replies, err := f.run(ctx, sender, req, v, known)
	if err != nil {
		out.Code = pircan.CodeInternalError
		if pe := (*pircan.Error)(nil); errors.As(err, &pe) {
			out.Code = pe.Code
		}
		return finish(id, []Reply{f.errorToReply(req.Verb, err)}), out
	}
	return finish(id, replies), out
}

func (f *Face) run(ctx context.Context, sender Sender, req *Request, v verb, known bool) ([]Reply, error) {
	if !known {
		return nil, pircan.Errorf(pircan.CodeUnknownVerb, "Unknown verb %s. Send PIRCAN/1 HELP.", req.Verb)
	}
	if v.needs == needNothing { // HELP, ECHO: no operation, so no store
		return v.handle(ctx, &call{face: f, sender: sender, req: req})
	}
	caller, err := f.svc.Caller(ctx, pircan.FaceIRC, sender.Account, sender.Nick)
	if err != nil {
		return nil, err
	}
	return v.handle(ctx, &call{face: f, sender: sender, caller: caller, req: req})
}

// Overloaded is the reply to a request refused before it was read, because
// its sender already has as many requests waiting as PIRCAN queues: the
// same rate_limited ERROR as the per-minute limit, with the request's id
// and verb when they can be read.
func (f *Face) Overloaded(text string, retry time.Duration) []Reply {
	req, _ := Parse(text)
	var id *string
	verbName := ""
	if req != nil {
		verbName = req.Verb
		if req.HasID {
			id = &req.ID
		}
	}
	return finish(id, []Reply{rateLimited(verbName, retry)})
}

// rateLimited is the rate_limited ERROR of the per-minute window.
func rateLimited(verbName string, retry time.Duration) Reply {
	return errorReply(verbName, &pircan.Error{Code: pircan.CodeRateLimited,
		Message: "Too many requests; PIRCAN will not answer until the window passes.", RetryAfter: max(retry, time.Nanosecond)})
}

func isPlainHelp(text string) bool {
	return strings.EqualFold(strings.TrimSpace(text), "help")
}

// finish adds the correlation id to every reply, list items and -END too.
func finish(id *string, replies []Reply) []Reply {
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

// hints are a refusal's next step as IRC says it: the verb to send.
var hints = map[pircan.Next]string{
	pircan.NextRegister:   "Send PIRCAN/1 HELLO first.",
	pircan.NextFind:       "Find agents with PIRCAN/1 FIND.",
	pircan.NextChannels:   "Send PIRCAN/1 CHANNELS.",
	pircan.NextContacts:   "See PIRCAN/1 CONTACTS.",
	pircan.NextAgreements: "See PIRCAN/1 AGREEMENTS.",
	pircan.NextContact:    "Ask with PIRCAN/1 CONTACT.",
	pircan.NextResources:  "See PIRCAN/1 RESOURCES.",
	pircan.NextTasks:      "See PIRCAN/1 TASKS.",
}

func errorReply(verbName string, e *pircan.Error) Reply {
	f := Object{{"verb", Text(verbName)}, {"code", string(e.Code)}}
	if e.Field != "" {
		f = append(f, Field{"field", Text(e.Field)})
	}
	f = append(f, Field{"message", Text(e.Say(hints))})
	if secs := e.RetryAfterSeconds(); secs > 0 {
		f = append(f, Field{"retry_after", secs})
	}
	if e.Ref != "" {
		f = append(f, Field{"ref", e.Ref})
	}
	return Reply{Verb: "ERROR", Fields: f}
}

// errorToReply turns an operation's error into its ERROR reply; an
// internal error is logged with the ref its reply carries.
func (f *Face) errorToReply(verbName string, err error) Reply {
	perr := pircan.AsError(err)
	if perr.Ref != "" {
		f.log.Error().Err(err).Str("ref", perr.Ref).Str("verb", verbName).Msg("internal error")
	}
	return errorReply(verbName, perr)
}
