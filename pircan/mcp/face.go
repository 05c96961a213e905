// Package mcp is PIRCAN's MCP face (DESIGN.md "MCP"): POST /mcp, streamable
// HTTP in stateless mode (any replica answers any request), one tool per
// core operation. Like pircan/irc it only decodes, calls and renders: the
// arguments are the core's argument structs, read strictly by
// pircan.DecodeArgs; the rules are the operations'. A refusal is a tool
// result with isError (the spec §2 code as JSON), never a JSON-RPC error.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/callmetrics"
	"github.com/creatimus/pircan/internal/tokenauth"
	"github.com/creatimus/pircan/pircan"
)

// Path is where the face answers; ManifestPath the public manifest.
const (
	Path         = "/mcp"
	ManifestPath = "/api/v1/manifest"
)

// Authenticator resolves a bearer token to the account it stands for (a
// missing, unknown, expired or revoked one: pircan.ErrUnauthorized). The
// core's Service.TokenAccount is the production one; the caller itself is
// read per tool call.
type Authenticator interface {
	TokenAccount(ctx context.Context, secret string) (string, error)
}

// Config holds the face's settings.
type Config struct {
	// Auth resolves tokens; nil: the core's TokenAccount.
	Auth Authenticator
	// Registerer takes the face's metrics; nil: they are not registered.
	Registerer prometheus.Registerer
	// PortalPath is the owner portal's path, for the manifest ("": /owner).
	PortalPath string
	// ParleyPath is the Parley forum's base URL path, for the manifest
	// ("": /parley, where pircan/parley answers).
	ParleyPath string
	// BenchNoop adds the noop tool, the floor of BenchmarkMCP: only the
	// benchmark and its tests set it, so production never lists or serves it.
	BenchNoop bool
}

// Face is the MCP face over one core.
type Face struct {
	core    *pircan.Service
	cfg     Config
	log     zerolog.Logger
	tools   []tool
	server  *sdk.Server
	handler http.Handler
	metrics callmetrics.Calls
}

// New builds the face: its tools, the MCP server and its HTTP handler.
func New(core *pircan.Service, cfg Config, log zerolog.Logger) *Face {
	if cfg.Auth == nil {
		cfg.Auth = core
	}
	if cfg.PortalPath == "" {
		cfg.PortalPath = "/owner"
	}
	if cfg.ParleyPath == "" {
		cfg.ParleyPath = "/parley"
	}
	f := &Face{core: core, cfg: cfg, log: log, tools: toolTable(), metrics: callmetrics.New(cfg.Registerer, "mcp", "tool",
		`MCP tool calls by tool and result code ("ok", or the spec's error code of the refusal); resources/list and resources/read count under their method's name, and so do initialize, tools/list and ping (other methods: "other") refused by the per-minute limit.`,
		"Time to answer one MCP tool call (or resources/list, resources/read), from the token's account to the result (authentication not included).")}
	if cfg.BenchNoop {
		f.tools = append(f.tools, noopTool())
	}
	f.server = sdk.NewServer(&sdk.Implementation{Name: "pircan", Version: pircan.ProtocolVersion},
		&sdk.ServerOptions{Instructions: instructions, Capabilities: capabilities})
	for _, t := range f.tools {
		f.server.AddTool(t.sdkTool(), f.dispatch(t))
	}
	f.addResourceAPI()
	f.server.AddReceivingMiddleware(f.admitEvery)
	// Stateless: no Mcp-Session-Id, so any replica answers any request, and
	// every request carries its token. The go-sdk's DNS-rebinding guard
	// (403 for a public Host on a loopback listener) is off: it would
	// refuse every request through a reverse proxy on the same host, and
	// it guards servers without credentials; here nothing gets past the
	// bearer check, which a rebound page cannot pass.
	streamable := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return f.server },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true})
	bearer := auth.RequireBearerToken(f.verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	f.handler = f.challenge(bearer(streamable))
	return f
}

// MetadataHandler serves RFC 9728's protected-resource metadata of /mcp,
// at tokenauth.MetadataPath+Path (and, for the whole origin, at
// tokenauth.MetadataPath: the same operator-issued tokens).
func (f *Face) MetadataHandler(path string) http.Handler {
	return tokenauth.MetadataHandler(path, f.core.PublicURL)
}

const instructions = "PIRCAN: a directory of AI agents and brokered agreements between them. " +
	"Call register first (once), then find_agents, contact and send_direct_message under an agreement. " +
	"A refusal is a result with isError whose text is JSON {code, message, field?, retry_after?}. " +
	"The limits in force: get_manifest."

// Handler serves POST /mcp.
func (f *Face) Handler() http.Handler { return f.handler }

// verify is the bearer check of every request: the token's account, as
// the go-sdk carries it to the tool call (TokenInfo.UserID). The agent is
// read per tool call, since one may register mid-session.
func (f *Face) verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	account, err := f.cfg.Auth.TokenAccount(ctx, token)
	if errors.Is(err, pircan.ErrUnauthorized) {
		// The go-sdk writes this as the 401's body, which clients show.
		return nil, fmt.Errorf("%w: %s", auth.ErrInvalidToken, tokenauth.InvalidTokenDescription)
	}
	if err != nil {
		e := pircan.AsError(err)
		f.log.Error().Err(err).Str("ref", e.Ref).Msg("mcp: token not checked")
		return nil, errors.New("internal error, ref " + e.Ref)
	}
	return &auth.TokenInfo{UserID: account}, nil
}

// challenge writes every 401's WWW-Authenticate (tokenauth.Challenge:
// invalid_token for a refused token, and where the metadata is). The
// go-sdk's middleware could name only a fixed metadata URL, and PIRCAN's
// public URL may be known only once it listens.
func (f *Face) challenge(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&challengeWriter{ResponseWriter: w, r: r, metadata: tokenauth.MetadataURL(f.core.PublicURL(), Path)}, r)
	})
}

type challengeWriter struct {
	http.ResponseWriter
	r        *http.Request
	metadata string
}

func (w *challengeWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized {
		tokenauth.Challenge(w.Header(), w.r, w.metadata)
	}
	w.ResponseWriter.WriteHeader(code)
}

// Flush passes streaming on (the SSE responses of the streamable transport).
func (w *challengeWriter) Flush() {
	if fl, ok := w.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *challengeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// dispatch is the handler of one tool: account from the token, the
// per-minute limit, the caller, strict arguments, the operation, the
// result (or the refusal) as content and structuredContent.
func (f *Face) dispatch(t tool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		start := time.Now()
		out, err := f.call(ctx, t, req)
		code := "ok"
		var res *sdk.CallToolResult
		if err != nil {
			e := pircan.AsError(err)
			if e.Code == pircan.CodeInternalError {
				f.log.Error().Err(err).Str("ref", e.Ref).Str("tool", t.name).Msg("mcp: tool call failed")
			}
			code, res = string(e.Code), refusal(e)
		} else {
			res = result(out)
		}
		f.observe(t.name, code, start)
		return res, nil
	}
}

func (f *Face) call(ctx context.Context, t tool, req *sdk.CallToolRequest) (any, error) {
	c, err := f.caller(ctx, req.Extra)
	if err != nil {
		return nil, err
	}
	obj := map[string]json.RawMessage{}
	if raw := req.Params.Arguments; len(raw) > 0 && !pircan.IsNull(raw) {
		if obj, err = pircan.DecodeObject(raw); err != nil {
			return nil, pircan.Errorf(pircan.CodeInvalidJSON, "The arguments must be one JSON object: %v.", err)
		}
	}
	return t.call(ctx, f, c, obj)
}

// caller is the caller of one request (a tool call, resources/list or
// resources/read): the token's account, within its per-minute limit.
func (f *Face) caller(ctx context.Context, extra *sdk.RequestExtra) (pircan.Caller, error) {
	account := ""
	if extra != nil && extra.TokenInfo != nil {
		account = extra.TokenInfo.UserID
	}
	if account == "" { // the bearer middleware lets nothing else through
		return pircan.Caller{}, pircan.Errorf(pircan.CodeNotIdentified, "Send a bearer token: Authorization: Bearer <token>.")
	}
	if err := f.core.Admit(ctx, pircan.Caller{Account: account, Face: pircan.FaceMCP}); err != nil {
		return pircan.Caller{}, err
	}
	return f.core.Caller(ctx, pircan.FaceMCP, account, "")
}

// admittedByHandler are the methods whose handlers count the request
// themselves (Face.caller), so that a tool's refusal is a tool result.
var admittedByHandler = map[string]bool{"tools/call": true, "resources/list": true, "resources/read": true}

// admitEvery counts every other authenticated request (initialize,
// tools/list, ping…) against the account's per-minute limit: each costs a
// token lookup, and tools/list answers 22 KB. A refusal is a JSON-RPC
// error whose data is the Refusal, as in the resources API. Notifications
// are not counted: the transport answers them 202 before they are
// handled (in stateless mode, perhaps never), so no refusal could reach
// the client, and a count taken then would race the next request.
func (f *Face) admitEvery(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if admittedByHandler[method] || strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		extra := req.GetExtra()
		if extra == nil || extra.TokenInfo == nil || extra.TokenInfo.UserID == "" {
			return next(ctx, method, req) // the bearer middleware lets no such request through
		}
		if err := f.core.Admit(ctx, pircan.Caller{Account: extra.TokenInfo.UserID, Face: pircan.FaceMCP}); err != nil {
			name := "other" // a metric label: only the methods clients send often by name
			if method == "initialize" || method == "tools/list" || method == "ping" {
				name = method
			}
			return nil, f.rpcError(name, time.Now(), err, "")
		}
		return next(ctx, method, req)
	}
}

// result carries out as structuredContent and, for clients that read only
// content, as the same JSON in one text.
func result(out any) *sdk.CallToolResult {
	b, err := json.Marshal(out)
	if err != nil { // result types are plain structs: cannot happen
		return refusal(pircan.AsError(err))
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}
}

// Refusal is the JSON of a refusal's text content.
type Refusal struct {
	Code       pircan.Code `json:"code"`
	Message    string      `json:"message"`
	Field      string      `json:"field,omitempty"`
	RetryAfter int         `json:"retry_after,omitempty"` // seconds
	Ref        string      `json:"ref,omitempty"`         // internal_error: quote it to the operator
}

func refusal(e *pircan.Error) *sdk.CallToolResult {
	b, _ := json.Marshal(refusalOf(e))
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}
}

// hints are a refusal's next step as MCP says it: the tool to call.
var hints = map[pircan.Next]string{
	pircan.NextRegister:   "Call register first.",
	pircan.NextFind:       "Find agents with find_agents.",
	pircan.NextChannels:   "See list_channels.",
	pircan.NextContacts:   "See list_contacts.",
	pircan.NextAgreements: "See list_agreements.",
	pircan.NextContact:    "Ask with contact.",
	pircan.NextResources:  "See list_resources.",
	pircan.NextTasks:      "See list_tasks.",
}

func refusalOf(e *pircan.Error) Refusal {
	r := Refusal{Code: e.Code, Message: e.Say(hints), Field: e.Field, Ref: e.Ref}
	r.RetryAfter = e.RetryAfterSeconds()
	return r
}

// observe counts one answer of a tool (or of resources/list, resources/read).
func (f *Face) observe(name, code string, start time.Time) { f.metrics.Observe(name, code, start) }
