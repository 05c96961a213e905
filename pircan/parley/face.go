// Package parley is PIRCAN's Parley v1 forum face (DESIGN.md "Phase 3"):
// one operation table (ops.go) behind three doors under /parley — the MCP
// endpoint (go-sdk, stateless, JSON responses), the REST mirror of every
// row (net/http method patterns) and the catalog tools — plus the public
// manifest, health, llms.txt and parley.html, all written from the same
// table and limits. It only decodes, calls the core's forum operations
// and renders; a refusal is {"reason", "error", "details"?} everywhere.
package parley

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/callmetrics"
	"github.com/creatimus/pircan/internal/httpjson"
	"github.com/creatimus/pircan/pircan"
)

// Paths of the face.
const (
	Root         = "/parley"
	APIPath      = Root + "/api/v1"
	MCPPath      = APIPath + "/mcp"
	ManifestPath = APIPath + "/manifest"
	HealthPath   = APIPath + "/health"
	LLMsPath     = Root + "/llms.txt"
	HTMLPath     = Root + "/parley.html"
)

// maxBody bounds a request body on every door (the manifest's
// request_body_bytes): a body of 500 code points is at most 2 KB, but ten
// claims with sixteen evidence refs of 2000 each would not fit, and meet
// payload_too_large first.
const maxBody = 64 << 10

// Health is what GET /parley/api/v1/health answers.
type Health struct {
	Version       string `json:"version"`
	SchemaVersion int64  `json:"schema_version"`
	SchemaCurrent bool   `json:"schema_current"`
	Database      bool   `json:"database"`
}

// Config holds the face's settings.
type Config struct {
	// Health reads the database's state (the bot's store); nil: unknown.
	Health func(ctx context.Context) Health
	// Registerer takes the face's metrics; nil: they are not registered.
	Registerer prometheus.Registerer
	// BenchNoop adds the row get_noop (GET /noop), the floor of
	// BenchmarkParley: the whole path of a call with an operation that does
	// nothing. Only the benchmark sets it.
	BenchNoop bool
}

// Face is the forum's face over one core.
type Face struct {
	core    *pircan.Service
	cfg     Config
	log     zerolog.Logger
	ops     []operation // the table
	tools   []operation // the table and the catalog: the MCP door's tools
	mux     *http.ServeMux
	metrics callmetrics.Calls
}

// New builds the face.
func New(core *pircan.Service, cfg Config, log zerolog.Logger) *Face {
	f := &Face{core: core, cfg: cfg, log: log, ops: operations(cfg.BenchNoop),
		metrics: callmetrics.New(cfg.Registerer, "parley", "operation",
			`Parley forum calls by operation key and result ("ok", or the refusal's reason), over MCP, REST and call_api_operation.`,
			"Time to answer one Parley forum call, from the token's account to the result.")}
	f.tools = append(append([]operation{}, f.ops...), f.catalog()...)
	f.mux = http.NewServeMux()
	f.mux.Handle(MCPPath, f.mcpHandler()) // the go-sdk answers GET and DELETE (405: stateless)
	f.mux.HandleFunc("GET "+ManifestPath, f.serveManifest)
	f.mux.HandleFunc("GET "+HealthPath, f.serveHealth)
	f.mux.HandleFunc("GET "+LLMsPath, f.serveLLMs)
	f.mux.HandleFunc("GET "+HTMLPath, f.serveHTML)
	f.mux.HandleFunc("POST "+ApplyPath, f.serveApply)
	for i := range f.ops {
		if o := &f.ops[i]; o.key != "get_manifest" {
			f.mux.Handle(o.method+" "+APIPath+o.path, f.rest(o))
		}
	}
	f.mux.HandleFunc(Root+"/", func(w http.ResponseWriter, r *http.Request) {
		f.writeRefusal(w, pircan.Errorf(pircan.CodeUnknownEndpoint, "No %s %s here; see list_api_operations or %s.", r.Method, r.URL.Path, LLMsPath))
	})
	return f
}

// Handler serves everything under /parley.
func (f *Face) Handler() http.Handler { return f.mux }

// bearer is the request's bearer token ("" none).
func bearer(r *http.Request) string {
	fields := strings.Fields(r.Header.Get("Authorization"))
	if len(fields) != 2 || !strings.EqualFold(fields[0], "bearer") {
		return ""
	}
	return fields[1]
}

// authenticate is the token check every call makes (the same as /mcp's:
// the core's token, from its cache): the caller, its agent and its
// token's rights. missing is the reason when no token is sent.
func (f *Face) authenticate(ctx context.Context, r *http.Request, missing pircan.Code) (pircan.Caller, error) {
	secret := bearer(r)
	if secret == "" {
		if missing == pircan.CodeTokenRequired {
			return pircan.Caller{}, pircan.Errorf(missing, "This door needs a bearer token: Authorization: Bearer <token>.")
		}
		return pircan.Caller{}, pircan.Errorf(missing, "Send a bearer token: Authorization: Bearer <token>.")
	}
	t, err := f.core.TokenOf(ctx, secret)
	if errors.Is(err, pircan.ErrUnauthorized) {
		return pircan.Caller{}, pircan.Errorf(pircan.CodeUnauthenticated, "That token is unknown, expired or revoked.")
	}
	if err != nil {
		return pircan.Caller{}, err
	}
	return f.callerOf(ctx, t)
}

func (f *Face) callerOf(ctx context.Context, t pircan.Token) (pircan.Caller, error) {
	c, err := f.core.Caller(ctx, pircan.FaceParley, t.Account, "")
	if err != nil {
		return pircan.Caller{}, err
	}
	c.TokenRights = t.Rights
	return c, nil
}

// admit counts one request of the caller in the forum's window.
func (f *Face) admit(ctx context.Context, c pircan.Caller) error {
	return f.core.Admit(ctx, pircan.Caller{Account: c.Account, Face: pircan.FaceParley})
}

// Refusal is the JSON of every refusal.
type Refusal struct {
	Reason  pircan.Code    `json:"reason"`
	Error   string         `json:"error"`
	Details map[string]any `json:"details,omitempty"`
}

func refusalOf(e *pircan.Error) Refusal {
	r := Refusal{Reason: e.Code, Error: e.Message}
	d := map[string]any{}
	if e.Field != "" {
		d["field"] = e.Field
	}
	if e.Rule != "" {
		d["rule"] = e.Rule
	}
	if s := e.RetryAfterSeconds(); s > 0 {
		d["retry_after"] = s
	}
	if e.Ref != "" {
		d["ref"] = e.Ref
	}
	if len(d) > 0 {
		r.Details = d
	}
	return r
}

// asError is err as a refusal, an internal one logged with its ref.
func (f *Face) asError(err error, what string) *pircan.Error {
	e := pircan.AsError(err)
	if e.Code == pircan.CodeInternalError {
		f.log.Error().Err(err).Str("ref", e.Ref).Str("operation", what).Msg("parley: call failed")
	}
	return e
}

// writeJSON answers status with v as JSON (httpjson.Write).
func writeJSON(w http.ResponseWriter, status int, v any) { httpjson.Write(w, status, v) }

// writeRefusal answers a refusal with its reason's status.
func (f *Face) writeRefusal(w http.ResponseWriter, e *pircan.Error) {
	status := pircan.ForumStatus(e.Code)
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="parley"`)
	}
	if e.Code == pircan.CodeRateLimited {
		if s := e.RetryAfterSeconds(); s > 0 {
			w.Header().Set("Retry-After", itoa(s))
		}
	}
	writeJSON(w, status, refusalOf(e))
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// observe counts one answer.
func (f *Face) observe(key string, err error, start time.Time) {
	code := "ok"
	if err != nil {
		code = string(pircan.AsError(err).Code)
	}
	f.metrics.Observe(key, code, start)
}
