package mcpclient_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/creatimus/pircan/internal/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const token = "s3cret-token"

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Text string `json:"text"`
}

// server is a tiny MCP server on the Go SDK, behind a bearer-token check like
// PIRCAN's: echo (typed, with an output schema), refuse (a refusal result in
// PIRCAN's shape) and bad_output (structuredContent its schema does not admit).
func server(t *testing.T) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "tiny", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echoes text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
			return nil, echoOut(in), nil
		})
	object := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&mcp.Tool{Name: "refuse", InputSchema: object},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text := `{"code":"rate_limited","message":"Too many requests.","field":"text","retry_after":7}`
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "bad_output", InputSchema: object,
		OutputSchema: json.RawMessage(`{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: map[string]any{"n": "not a number"},
				Content: []mcp.Content{&mcp.TextContent{Text: `{"n":"not a number"}`}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func TestPlan(t *testing.T) {
	url := server(t)
	out := mcpclient.Run(t, url, token,
		mcpclient.ListTools(),
		mcpclient.Call("echo", map[string]any{"text": "hi"}),
		mcpclient.Call("refuse", nil),
		mcpclient.Call("bad_output", nil),
		mcpclient.Call("no_such_tool", nil),
		mcpclient.Raw("no/such/method", map[string]any{}),
		mcpclient.Raw("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": 5}}),
	)

	var tools struct {
		Tools []struct {
			Name         string         `json:"name"`
			OutputSchema map[string]any `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := out[0].Decode(&tools); err != nil || len(tools.Tools) != 3 {
		t.Fatalf("list_tools: %v: %s", err, out[0].Line)
	}
	for _, tool := range tools.Tools {
		if tool.Name == "echo" && tool.OutputSchema == nil {
			t.Errorf("echo has no output schema: %s", out[0].Line)
		}
	}

	if o := out[1]; !o.OK || o.IsError() || o.Structured()["text"] != "hi" || o.Text() != `{"text":"hi"}` {
		t.Errorf("echo: structured %v, text %q: %s", o.Structured(), o.Text(), o.Line)
	}

	want := mcpclient.Refusal{Code: "rate_limited", Message: "Too many requests.", Field: "text", RetryAfter: 7}
	if o := out[2]; !o.OK || !o.IsError() || o.Refusal() != want {
		t.Errorf("refuse: IsError %v, refusal %+v, want %+v: %s", o.IsError(), o.Refusal(), want, o.Line)
	}

	// The SDK checks structuredContent against the schema list_tools gave it.
	if o := out[3]; o.OK || o.Err == nil || o.Err.Code != -32602 {
		t.Errorf("bad_output: want the SDK's InvalidParams (-32602): %s", o.Line)
	}
	if o := out[4]; o.OK || o.Err == nil || o.Err.Code == 0 || o.Err.HTTPStatus != 0 {
		t.Errorf("unknown tool: want a JSON-RPC error: %s", o.Line)
	}
	// The Go SDK answers an unknown method with HTTP 400, not a JSON-RPC error.
	if o := out[5]; o.OK || o.Err == nil || o.Err.HTTPStatus != http.StatusBadRequest {
		t.Errorf("unknown method: want HTTP 400: %s", o.Line)
	}
	// A raw request's result is the server's, whatever its shape; the Go SDK's
	// typed tools refuse ill-typed arguments in plain text, no refusal object.
	if o := out[6]; !o.OK || !o.IsError() || o.Refusal() != (mcpclient.Refusal{}) || o.Text() == "" {
		t.Errorf("ill-typed raw tools/call: want an isError result in plain text: %s", o.Line)
	}
	for i, o := range out[:3] {
		if o.Err != nil || o.Skipped {
			t.Errorf("step %d: %s", i, o.Line)
		}
	}
}

func TestWrongToken(t *testing.T) {
	url := server(t)
	for _, bad := range []string{"wrong", ""} {
		out := mcpclient.Run(t, url, bad, mcpclient.ConnectFails(), mcpclient.ListTools())
		if o := out[0]; o.OK || o.Err == nil || o.Err.HTTPStatus != http.StatusUnauthorized {
			t.Errorf("token %q: connect: want HTTP 401: %s", bad, o.Line)
		}
		if o := out[1]; o.OK || !o.Skipped {
			t.Errorf("token %q: the step after a failed connect ran: %s", bad, o.Line)
		}
	}
}

// ConnectFails with a good token reports the connection and goes on.
func TestConnectFailsConnects(t *testing.T) {
	out := mcpclient.Run(t, server(t), token, mcpclient.ConnectFails(), mcpclient.Call("echo", map[string]any{"text": "x"}))
	if o := out[0]; !o.OK || o.Err != nil {
		t.Errorf("connect: %s", o.Line)
	}
	if o := out[1]; o.Structured()["text"] != "x" {
		t.Errorf("echo: %s", o.Line)
	}
}
