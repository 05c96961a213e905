package a2a

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/creatimus/pircan/internal/httpjson"
	"github.com/creatimus/pircan/pircan"
)

// A2A's JSON-RPC error codes (§5.4, §9.5); JSON-RPC 2.0's own are the
// jsonrpc package's. CodeRefused is PIRCAN's: every refusal the A2A error
// set has no name for (not_authorized, not_registered, rate_limited,
// unknown_agent, self_contact, ...) carries it, with the spec §2 code in
// the error's data.
const (
	CodeRefused               = -32000
	CodeTaskNotFound          = -32001
	CodeTaskNotCancelable     = -32002
	CodePushNotSupported      = -32003
	CodeUnsupportedOperation  = -32004
	CodeContentTypeNotSupport = -32005
	CodeVersionNotSupported   = -32009
)

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int      `json:"code"`
	Message string   `json:"message"`
	Data    []detail `json:"data,omitempty"`
	// name is the metrics label: the spec §2 code, or the JSON-RPC error's.
	name string
}

// detail is one entry of error.data: A2A §9.5 wants an array of ProtoJSON
// Any objects, each with "@type".
type detail map[string]any

const typeErrorInfo = "type.googleapis.com/google.rpc.ErrorInfo"

// errorDomain is ErrorInfo.domain of PIRCAN's refusals.
const errorDomain = "pircan"

// protocolError is a JSON-RPC error of the protocol itself (no spec §2
// code): a malformed request, an unknown or unsupported method.
func protocolError(code int, name, format string, args ...any) *rpcError {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &rpcError{Code: code, Message: msg, name: name}
}

// invalidParams is a -32602 about one field, with a BadRequest detail.
func invalidParams(field, format string, args ...any) *rpcError {
	return refusalOf(pircan.FieldError(pircan.CodeInvalidArgument, field, format, args...))
}

// codes maps the spec §2 codes A2A has its own errors for; every other one
// is CodeRefused.
var codes = map[pircan.Code]int{
	pircan.CodeNotFound:        CodeTaskNotFound,
	pircan.CodeNotPending:      CodeTaskNotCancelable,
	pircan.CodeInvalidArgument: jsonrpc.CodeInvalidParams,
	pircan.CodeTooLong:         jsonrpc.CodeInvalidParams,
	pircan.CodeEmpty:           jsonrpc.CodeInvalidParams,
	pircan.CodeInvalidJSON:     jsonrpc.CodeInvalidParams,
	pircan.CodeInvalidID:       jsonrpc.CodeInvalidParams,
	pircan.CodeInternalError:   jsonrpc.CodeInternalError,
}

// refusalOf is a core refusal as a JSON-RPC error: an ErrorInfo whose
// reason is the spec §2 code and whose metadata holds code, field,
// retry_after (seconds) and ref as strings; a BadRequest for a field; a
// RetryInfo for rate_limited.
// hints are a refusal's next step as an A2A client can take it: A2A has
// no verb to register an agent, so it names the faces that do.
var hints = map[pircan.Next]string{
	pircan.NextRegister: "Register it first (PIRCAN/1 HELLO on IRC, or the MCP register tool).",
}

func refusalOf(e *pircan.Error) *rpcError {
	msg := e.Say(hints)
	code, ok := codes[e.Code]
	if !ok {
		code = CodeRefused
	}
	meta := map[string]string{"code": string(e.Code)}
	info := detail{"@type": typeErrorInfo, "reason": strings.ToUpper(string(e.Code)), "domain": errorDomain, "metadata": meta}
	out := &rpcError{Code: code, Message: msg, Data: []detail{info}, name: string(e.Code)}
	if e.Field != "" {
		meta["field"] = e.Field
		out.Data = append(out.Data, detail{"@type": "type.googleapis.com/google.rpc.BadRequest",
			"fieldViolations": []map[string]string{{"field": e.Field, "description": msg}}})
	}
	if secs := e.RetryAfterSeconds(); secs > 0 {
		meta["retry_after"] = strconv.Itoa(secs)
		out.Data = append(out.Data, detail{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": strconv.Itoa(secs) + "s"})
	}
	if e.Ref != "" {
		meta["ref"] = e.Ref
	}
	return out
}

// writeJSON answers status with v as JSON (httpjson.Write).
func writeJSON(w http.ResponseWriter, status int, v any) { httpjson.Write(w, status, v) }

func nullID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}

func jsonEncode(w http.ResponseWriter, v any) error { return json.NewEncoder(w).Encode(v) }
