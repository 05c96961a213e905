// Package a2a is PIRCAN's A2A face (DESIGN.md "Tasks and A2A"; A2A 1.0,
// JSON-RPC binding): a public Agent Card per registered agent at
// GET /a2a/<agent_id>/.well-known/agent-card.json, and POST /a2a/<agent_id>
// answering SendMessage, GetTask, ListTasks and CancelTask for the tasks the
// caller (by its bearer token) asked of that agent. Like the other faces it
// only decodes, calls the core and renders; a refusal is a JSON-RPC error.
// docs/protocol-notes.md "A2A" records the choices the specification left.
package a2a

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/callmetrics"
	"github.com/creatimus/pircan/pircan"
)

// Path is the prefix the face answers under.
const Path = "/a2a/"

// CardPath is the Agent Card's path below an agent's URL (A2A §8.2).
const CardPath = ".well-known/agent-card.json"

// maxBody bounds one request: a 60,000-byte text, JSON-escaped at worst
// (\u00XX for each byte), with room for the envelope.
const maxBody = 6*pircan.MaxStoredText + 64<<10

// Authenticator resolves a bearer token to the account it stands for (a
// missing, unknown, expired or revoked one: pircan.ErrUnauthorized); the
// core's Service.TokenAccount is the production one.
type Authenticator interface {
	TokenAccount(ctx context.Context, secret string) (string, error)
}

// Config holds the face's settings.
type Config struct {
	// Auth resolves tokens; nil: the core's TokenAccount.
	Auth Authenticator
	// Registerer takes the face's metrics; nil: they are not registered.
	Registerer prometheus.Registerer
}

// Face is the A2A face over one core.
type Face struct {
	core    *pircan.Service
	cfg     Config
	log     zerolog.Logger
	mux     *http.ServeMux
	metrics callmetrics.Calls
}

// New builds the face.
func New(core *pircan.Service, cfg Config, log zerolog.Logger) *Face {
	if cfg.Auth == nil {
		cfg.Auth = core
	}
	f := &Face{core: core, cfg: cfg, log: log, mux: http.NewServeMux(), metrics: callmetrics.New(cfg.Registerer, "a2a", "method",
		`A2A calls by method (a JSON-RPC method, "agent_card", or "other" for an unknown one) and result code ("ok", or the spec's error code of the refusal, or the JSON-RPC error's name).`,
		"Time to answer one A2A call, from the token's account to the response (authentication not included).")}
	f.mux.HandleFunc("GET "+Path+"{agent}/"+CardPath, f.serveCard)
	f.mux.HandleFunc("GET "+Path, f.serveNoCard)
	f.mux.HandleFunc("POST "+Path+"{agent}", f.serveRPC)
	f.mux.HandleFunc("POST "+Path+"{agent}/", f.serveRPC)
	return f
}

// Handler serves everything under /a2a/.
func (f *Face) Handler() http.Handler { return f.mux }

// observe counts one answer: a JSON-RPC method (or "agent_card") and its
// code ("ok", or the spec §2 code of the refusal).
func (f *Face) observe(method, code string, start time.Time) { f.metrics.Observe(method, code, start) }
