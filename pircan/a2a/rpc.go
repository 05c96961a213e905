package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/creatimus/pircan/internal/tokenauth"
	"github.com/creatimus/pircan/pircan"
)

// method is one JSON-RPC method PIRCAN answers.
type method func(ctx context.Context, f *Face, c pircan.Caller, agentID string, params json.RawMessage) (any, error)

var methods = map[string]method{
	"SendMessage": sendMessage,
	"GetTask":     getTask,
	"ListTasks":   listTasks,
	"CancelTask":  cancelTask,
}

// unsupported are the A2A 1.0 methods PIRCAN does not offer, with the error
// A2A §3.3.4 names for each (the card says streaming, pushNotifications
// and extendedAgentCard are false).
var unsupported = map[string]int{
	"SendStreamingMessage":             CodeUnsupportedOperation,
	"SubscribeToTask":                  CodeUnsupportedOperation,
	"GetExtendedAgentCard":             CodeUnsupportedOperation,
	"CreateTaskPushNotificationConfig": CodePushNotSupported,
	"GetTaskPushNotificationConfig":    CodePushNotSupported,
	"ListTaskPushNotificationConfigs":  CodePushNotSupported,
	"DeleteTaskPushNotificationConfig": CodePushNotSupported,
}

// Methods are the JSON-RPC methods the face answers, and those it refuses
// with their A2A error codes, by name (for the protocol reference).
func Methods() (answered []string, refused map[string]int) {
	for m := range methods {
		answered = append(answered, m)
	}
	slices.Sort(answered)
	return answered, maps.Clone(unsupported)
}

// unsupportedNames label the refusals of unsupported in metrics.
var unsupportedNames = map[int]string{CodeUnsupportedOperation: "unsupported_operation", CodePushNotSupported: "push_notification_not_supported"}

// serveRPC is POST /a2a/<agent_id>: the bearer token, then one JSON-RPC
// request (a batch is not supported), then the method.
func (f *Face) serveRPC(w http.ResponseWriter, r *http.Request) {
	account, ok := f.authenticate(w, r)
	if !ok {
		return
	}
	start := time.Now()
	req, rerr := readRequest(w, r)
	// Every authenticated request counts against the per-minute limit, a
	// malformed or unknown one too: each cost a token lookup.
	if err := f.core.Admit(r.Context(), pircan.Caller{Account: account, Face: pircan.FaceA2A}); err != nil {
		rerr = f.refusal(err, req.Method)
	}
	name := "other"
	var out any
	if rerr == nil {
		if _, known := methods[req.Method]; known {
			name = req.Method
		} else if _, known := unsupported[req.Method]; known {
			name = req.Method
		}
		out, rerr = f.call(r.Context(), r, account, req)
	}
	code := "ok"
	if rerr != nil {
		code = rerr.name
	}
	f.observe(name, code, start)
	if rerr == nil && len(req.ID) == 0 { // a notification: no answer (JSON-RPC §4.1)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	resp := response{JSONRPC: "2.0", ID: nullID(req.ID), Result: out, Error: rerr}
	writeJSON(w, http.StatusOK, resp)
}

// authenticate reads the bearer token: a missing or refused one is 401 with
// WWW-Authenticate (tokenauth.Challenge, naming the origin's metadata) and a
// JSON-RPC error body (A2A §7.4), which the
// JS SDK raises as the error it names.
func (f *Face) authenticate(w http.ResponseWriter, r *http.Request) (string, bool) {
	secret, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !found {
		secret, found = strings.CutPrefix(r.Header.Get("Authorization"), "bearer ")
	}
	secret = strings.TrimSpace(secret)
	var account string
	var err error
	if secret == "" {
		err = pircan.ErrUnauthorized
	} else {
		account, err = f.cfg.Auth.TokenAccount(r.Context(), secret)
	}
	if err == nil {
		return account, true
	}
	if errors.Is(err, pircan.ErrUnauthorized) {
		f.observe("other", string(pircan.CodeNotIdentified), time.Now())
		tokenauth.Challenge(w.Header(), r, tokenauth.MetadataURL(f.core.PublicURL(), ""))
		writeJSON(w, http.StatusUnauthorized, response{JSONRPC: "2.0", ID: nullID(nil),
			Error: refusalOf(pircan.Errorf(pircan.CodeNotIdentified, "Send a valid bearer token: Authorization: Bearer <token>."))})
		return "", false
	}
	e := pircan.AsError(err)
	f.log.Error().Err(err).Str("ref", e.Ref).Msg("a2a: token not checked")
	f.observe("other", string(e.Code), time.Now())
	writeJSON(w, http.StatusInternalServerError, response{JSONRPC: "2.0", ID: nullID(nil), Error: refusalOf(e)})
	return "", false
}

// readRequest decodes the envelope; the result's ID is set whenever it
// could be read, so that an error answers the request it is about.
func readRequest(w http.ResponseWriter, r *http.Request) (request, *rpcError) {
	var req request
	body, err := readAll(w, r)
	if err != nil {
		return req, protocolError(jsonrpc.CodeInvalidRequest, "invalid_request", "The request is larger than %d bytes.", maxBody)
	}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		return req, protocolError(jsonrpc.CodeInvalidRequest, "invalid_request", "Batch requests are not supported; send one request per POST.")
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return request{}, protocolError(jsonrpc.CodeParseError, "parse_error", "Invalid JSON payload: %v.", err)
	}
	if pircan.IsNull(req.ID) {
		req.ID = json.RawMessage("null") // an explicit null id is a request, not a notification
	}
	if req.JSONRPC != "2.0" || req.Method == "" {
		return req, protocolError(jsonrpc.CodeInvalidRequest, "invalid_request", `A JSON-RPC 2.0 request has "jsonrpc": "2.0" and a "method".`)
	}
	if v := r.Header.Get("A2A-Version"); v != "" && !supportedVersion(v) {
		return req, protocolError(CodeVersionNotSupported, "version_not_supported", "A2A-Version %q is not supported; this agent speaks A2A 1.0.", v)
	}
	return req, nil
}

func readAll(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxBody))
	return buf.Bytes(), err
}

// supportedVersion accepts 1.0 (a patch number is ignored, A2A §3.6).
func supportedVersion(v string) bool {
	v = strings.TrimSpace(v)
	return v == "1" || v == "1.0" || strings.HasPrefix(v, "1.0.")
}

// call runs one method: the caller, the operation.
func (f *Face) call(ctx context.Context, r *http.Request, account string, req request) (any, *rpcError) {
	m, ok := methods[req.Method]
	if !ok {
		if code, known := unsupported[req.Method]; known {
			return nil, protocolError(code, unsupportedNames[code], "%s is not supported by PIRCAN agents: poll with GetTask.", req.Method)
		}
		return nil, protocolError(jsonrpc.CodeMethodNotFound, "method_not_found", "Method not found: %s.", req.Method)
	}
	// The URL's id is canonical from here on, as the core's arguments are:
	// the face compares it with the tasks' own.
	out, err := f.run(ctx, account, pircan.CanonicalID(r.PathValue("agent")), req.Params, m)
	if err != nil {
		return nil, f.refusal(err, req.Method)
	}
	return out, nil
}

// refusal is err as the JSON-RPC error of a call of method (an
// internal_error logged with its ref).
func (f *Face) refusal(err error, method string) *rpcError {
	var rerr *rpcError
	if errors.As(err, &rerr) {
		return rerr
	}
	e := pircan.AsError(err)
	if e.Code == pircan.CodeInternalError {
		f.log.Error().Err(err).Str("ref", e.Ref).Str("method", method).Msg("a2a: call failed")
	}
	return refusalOf(e)
}

// run is one method for the caller: its agent, then the operation (the
// per-minute limit was counted by serveRPC).
func (f *Face) run(ctx context.Context, account, agentID string, params json.RawMessage, m method) (any, error) {
	c, err := f.core.Caller(ctx, pircan.FaceA2A, account, "")
	if err != nil {
		return nil, err
	}
	if err := c.RequireAgent(); err != nil {
		return nil, err
	}
	if len(params) == 0 || pircan.IsNull(params) {
		params = json.RawMessage("{}")
	}
	return m(ctx, f, c, agentID, params)
}

func (e *rpcError) Error() string { return e.Message }
