package mcp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/mcpclient"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/a2a"
	"github.com/creatimus/pircan/pircan/mcp"
)

// rateLimited checks that an SDK step threw the JSON-RPC refusal of the
// per-minute limit.
func rateLimited(t *testing.T, what string, o mcpclient.Outcome) {
	t.Helper()
	var data mcpclient.Refusal
	if o.OK || o.Err == nil || o.Err.Code != mcp.CodeRefused || json.Unmarshal(o.Err.Data, &data) != nil ||
		data.Code != string(pircan.CodeRateLimited) || data.RetryAfter < 1 || data.RetryAfter > 60 {
		t.Fatalf("%s: want JSON-RPC error %d with data rate_limited and retry_after: %s", what, mcp.CodeRefused, o.Line)
	}
}

// Every authenticated request counts against the per-minute limit, not
// only tool calls: the TypeScript SDK's tools/list and ping are refused
// once the window is full, and so is the tool call after them.
func TestEveryRequestAdmitted(t *testing.T) {
	l := limits()
	l.HTTPPerMinute = 5
	e := newEnv(t, l)
	_, tok := e.token(t)
	steps := []mcpclient.Step{}
	for range l.HTTPPerMinute + 1 {
		steps = append(steps, mcpclient.ListTools())
	}
	steps = append(steps, mcpclient.Raw("ping", nil), mcpclient.Call("whoami", nil))
	out := mcpclient.Run(t, e.srv.URL+mcp.Path, tok, steps...)
	listed := 0
	for _, o := range out[:l.HTTPPerMinute+1] {
		if o.OK {
			listed++
		}
	}
	// Connecting (initialize) counted too, so fewer than the limit were listed.
	if listed >= l.HTTPPerMinute {
		t.Fatalf("%d tools/list answered of %d, with a limit of %d a minute", listed, l.HTTPPerMinute+1, l.HTTPPerMinute)
	}
	rateLimited(t, "the last tools/list", out[l.HTTPPerMinute])
	rateLimited(t, "ping", out[l.HTTPPerMinute+1])
	if r := out[l.HTTPPerMinute+2].Refusal(); r.Code != string(pircan.CodeRateLimited) {
		t.Fatalf("whoami: %s", out[l.HTTPPerMinute+2].Line)
	}
	// Another account is not held up.
	_, other := e.token(t)
	if o := mcpclient.Run(t, e.srv.URL+mcp.Path, other, mcpclient.ListTools()); !o[0].OK {
		t.Fatalf("another account: %s", o[0].Line)
	}
}

// MCP and A2A share one window per account: what an account spent over
// A2A it cannot spend again over MCP (its SDK cannot even initialize), and
// the reverse.
func TestMCPAndA2AShareOneWindow(t *testing.T) {
	l := limits()
	l.HTTPPerMinute = 3
	e := newEnv(t, l)
	a2aSrv := httptest.NewServer(a2a.New(e.core, a2a.Config{}, zerolog.Nop()).Handler())
	t.Cleanup(a2aSrv.Close)
	a2aCall := func(tok string) string {
		t.Helper()
		resp := post(t, a2aSrv.URL+a2a.Path+uuid(), "Bearer "+tok, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+uuid()+`"}}`)
		var body struct {
			Error struct {
				Data []struct {
					Metadata struct {
						Code string `json:"code"`
					} `json:"metadata"`
				} `json:"data"`
			} `json:"error"`
		}
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil || len(body.Error.Data) == 0 {
			t.Fatalf("A2A GetTask: HTTP %d", resp.StatusCode)
		}
		return body.Error.Data[0].Metadata.Code
	}

	_, tok := e.token(t)
	for i := range l.HTTPPerMinute {
		if code := a2aCall(tok); code == string(pircan.CodeRateLimited) {
			t.Fatalf("A2A request %d: rate_limited", i+1)
		}
	}
	out := mcpclient.Run(t, e.srv.URL+mcp.Path, tok, mcpclient.ConnectFails())
	rateLimited(t, "initialize after the A2A requests", out[0])

	_, tok = e.token(t)
	cs := e.session(t, tok) // initialize counts one
	refused(t, call(t, cs, "whoami", nil), pircan.CodeNotRegistered, "")
	refused(t, call(t, cs, "whoami", nil), pircan.CodeNotRegistered, "")
	refused(t, call(t, cs, "whoami", nil), pircan.CodeRateLimited, "")
	if code := a2aCall(tok); code != string(pircan.CodeRateLimited) {
		t.Fatalf("A2A after MCP's requests: %s, want rate_limited", code)
	}
}
