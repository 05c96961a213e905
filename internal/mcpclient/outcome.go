package mcpclient

import (
	"encoding/json"
	"strings"
)

// Outcome is what one step came to. A step the SDK completed is OK with the
// SDK's result object in Result, a tool's refusal (isError) included; one
// that threw (a JSON-RPC error, an HTTP status, a result failing its output
// schema) has Err.
type Outcome struct {
	OK      bool            `json:"ok"`
	Skipped bool            `json:"skipped,omitempty"` // after a failed ConnectFails
	Result  json.RawMessage `json:"result,omitempty"`
	Err     *Error          `json:"error,omitempty"`
	// Line is the outcome as client.mjs printed it, for failure messages.
	Line string `json:"-"`
}

// Error is what the SDK threw. Code is the JSON-RPC error code (0 when the
// error is not one) and HTTPStatus the status of a refused HTTP request
// (0 when none: the SDK exposes it for a POST it could not deliver).
type Error struct {
	Code       int             `json:"code"`
	Message    string          `json:"message"`
	HTTPStatus int             `json:"http_status,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
	Name       string          `json:"name,omitempty"`  // the JS error class, when not plain Error
	Cause      string          `json:"cause,omitempty"` // e.g. ECONNREFUSED under "fetch failed"
}

// Refusal is PIRCAN's refusal object, the JSON text of an isError result.
type Refusal struct {
	Code       string `json:"code"`
	Message    string `json:"message"`
	Field      string `json:"field,omitempty"`
	RetryAfter int    `json:"retry_after,omitempty"` // seconds
}

// toolResult is the part of an MCP CallToolResult the helpers read.
type toolResult struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

func (o Outcome) tool() toolResult {
	var r toolResult
	if o.OK {
		_ = json.Unmarshal(o.Result, &r) // a result of another shape reads as empty
	}
	return r
}

// IsError says whether the step is a tool result with isError: true, that is
// a refusal; a thrown error is Err, not this.
func (o Outcome) IsError() bool { return o.tool().IsError }

// Structured returns the result's structuredContent as an object (nil when
// there is none, or it is not an object).
func (o Outcome) Structured() map[string]any {
	var m map[string]any
	if sc := o.tool().StructuredContent; len(sc) > 0 {
		_ = json.Unmarshal(sc, &m)
	}
	return m
}

// Text returns the result's text content items, joined by newlines.
func (o Outcome) Text() string {
	var parts []string
	for _, c := range o.tool().Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Refusal parses an isError result's text as a refusal object; the zero
// Refusal (Code "") means the outcome is no refusal or its text is not one.
func (o Outcome) Refusal() Refusal {
	var r Refusal
	if o.IsError() {
		_ = json.Unmarshal([]byte(o.Text()), &r)
	}
	return r
}

// Decode unmarshals the raw result (any step) into v.
func (o Outcome) Decode(v any) error { return json.Unmarshal(o.Result, v) }
