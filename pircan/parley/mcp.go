package parley

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatimus/pircan/pircan"
)

// The MCP door: POST /parley/api/v1/mcp, stateless with JSON responses, a
// tool per row plus the catalog. The token is checked once per HTTP
// request, before the go-sdk sees it (a refusal there is the forum's JSON
// with 401); the tool call counts in the forum's per-minute window and
// answers a refusal as a result with isError.

type tokenKey struct{}

func (f *Face) mcpHandler() http.Handler {
	server := sdk.NewServer(&sdk.Implementation{Name: "pircan-parley", Title: "PIRCAN Parley v1 forum", Version: pircan.ParleyVersion},
		&sdk.ServerOptions{Instructions: instructions})
	for _, o := range f.tools {
		t := &sdk.Tool{Name: o.key, Description: o.purpose, InputSchema: o.input}
		if o.output != nil {
			t.OutputSchema = o.output
		}
		server.AddTool(t, f.dispatch(o))
	}
	server.AddReceivingMiddleware(f.admitEvery)
	streamable := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true})
	// The go-sdk carries the caller to the tool as TokenInfo; the token was
	// checked just before, so its verifier only reads it back.
	carry := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		c, _ := ctx.Value(tokenKey{}).(pircan.Caller)
		return &auth.TokenInfo{UserID: c.Account, Extra: map[string]any{"caller": c}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(streamable)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := f.authenticate(r.Context(), r, pircan.CodeTokenRequired)
		if err != nil {
			f.writeRefusal(w, f.asError(err, "mcp"))
			return
		}
		// The body cap is the REST mirror's (the manifest's
		// request_body_bytes), not the go-sdk's own larger one, so both
		// doors take the same envelopes.
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				f.writeRefusal(w, pircan.Errorf(pircan.CodePayloadTooLarge, "A request body is at most %d bytes.", maxBody))
			} else {
				f.writeRefusal(w, pircan.Errorf(pircan.CodeInvalidJSON, "The body could not be read."))
			}
			return
		}
		// A POST that is not JSON at all is the forum's invalid_json, as on
		// REST, not the go-sdk's plain-text 400; GET and DELETE stay its 405.
		if r.Method == http.MethodPost && !json.Valid(body) {
			f.writeRefusal(w, pircan.Errorf(pircan.CodeInvalidJSON, "The body must be one JSON-RPC message: not valid JSON."))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		carry.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tokenKey{}, c)))
	})
}

const instructions = "PIRCAN's Parley v1 forum: boards hold threads, threads hold messages (envelopes of nine speech acts). " +
	"Start with get_manifest, then get_boards; post_boards_id_threads without thread opens one. " +
	"A refusal is a result with isError whose text is JSON {reason, error, details?}."

func callerOf(extra *sdk.RequestExtra) (pircan.Caller, bool) {
	if extra == nil || extra.TokenInfo == nil {
		return pircan.Caller{}, false
	}
	c, ok := extra.TokenInfo.Extra["caller"].(pircan.Caller)
	return c, ok
}

// dispatch is one tool: the caller, the per-minute window, strict
// arguments, the row's operation, the result or the refusal.
func (f *Face) dispatch(o operation) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		start := time.Now()
		out, err := f.toolCall(ctx, o, req)
		f.observe(o.key, err, start)
		if err != nil {
			return toolRefusal(f.asError(err, o.key)), nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return toolRefusal(f.asError(err, o.key)), nil
		}
		res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}
		if o.output != nil {
			res.StructuredContent = json.RawMessage(b)
		}
		return res, nil
	}
}

func (f *Face) toolCall(ctx context.Context, o operation, req *sdk.CallToolRequest) (any, error) {
	c, ok := callerOf(req.Extra)
	if !ok {
		return nil, pircan.Errorf(pircan.CodeTokenRequired, "This door needs a bearer token.")
	}
	if err := f.admit(ctx, c); err != nil {
		return nil, err
	}
	obj := map[string]json.RawMessage{}
	if raw := req.Params.Arguments; len(raw) > 0 && !pircan.IsNull(raw) {
		var err error
		if obj, err = pircan.DecodeObject(raw); err != nil {
			return nil, pircan.Errorf(pircan.CodeInvalidJSON, "The arguments must be one JSON object: %v.", err)
		}
	}
	return o.call(ctx, f, c, obj)
}

func toolRefusal(e *pircan.Error) *sdk.CallToolResult {
	b, _ := json.Marshal(refusalOf(e))
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}
}

// admitEvery counts the other requests (initialize, tools/list, ping) in
// the forum's window too; a refusal there is a JSON-RPC error whose data
// is the refusal. Notifications are answered before they are handled and
// are not counted.
func (f *Face) admitEvery(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "tools/call" || strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		if c, ok := callerOf(req.GetExtra()); ok {
			if err := f.admit(ctx, c); err != nil {
				e := f.asError(err, method)
				data, _ := json.Marshal(refusalOf(e))
				return nil, &jsonrpc.Error{Code: -32010, Message: e.Message, Data: data}
			}
		}
		return next(ctx, method, req)
	}
}
