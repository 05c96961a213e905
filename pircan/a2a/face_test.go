package a2a_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/creatimus/pircan/internal/tokenauth"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/a2a"
)

func getCard(t *testing.T, url string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// The card is public, A2A 1.0-shaped as the JS SDK reads it (no 0.3
// top-level url/protocolVersion; supportedInterfaces with JSONRPC 1.0;
// ProtoJSON security scheme), and its skills are the capabilities.
func TestAgentCard(t *testing.T) {
	e := newEnv(t, a2a.Config{})
	a := e.agent(t, "Translator", "translate", "summarize")
	resp, body := getCard(t, e.srv.URL+a2a.Path+a.id+"/"+a2a.CardPath,
		map[string]string{"X-Forwarded-Proto": "https"})
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("card: %d %s", resp.StatusCode, body)
	}
	var card map[string]any
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatal(err)
	}
	for _, legacy := range []string{"url", "protocolVersion", "preferredTransport", "additionalInterfaces"} {
		if _, ok := card[legacy]; ok {
			t.Errorf("card has the 0.3 field %q", legacy)
		}
	}
	var c a2a.AgentCard
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	// PIRCAN's own address (here the listen address), whatever
	// X-Forwarded-Proto says: TestAgentCardNamesOwnAddress.
	want := a2a.AgentInterface{URL: e.srv.URL + "/a2a/" + a.id + "/", ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"}
	if c.Name != "Translator" || c.Description != "Translator does things." || len(c.SupportedInterfaces) != 1 || c.SupportedInterfaces[0] != want {
		t.Fatalf("card: %s", body)
	}
	if c.Capabilities.Streaming || c.Capabilities.PushNotifications || c.Capabilities.ExtendedAgentCard {
		t.Errorf("capabilities: %+v", c.Capabilities)
	}
	if s := c.SecuritySchemes["bearer"]; s.HTTPAuth == nil || s.HTTPAuth.Scheme != "Bearer" {
		t.Errorf("securitySchemes: %s", body)
	}
	if len(c.SecurityRequirements) != 1 || c.SecurityRequirements[0].Schemes["bearer"].List == nil {
		t.Errorf("securityRequirements: %s", body)
	}
	if len(c.Skills) != 2 || c.Skills[0].ID != "translate" || c.Skills[0].Name != "translate" ||
		c.Skills[0].Tags[0] != "translate" || c.Skills[1].ID != "summarize" || c.Skills[0].Description == "" {
		t.Errorf("skills: %+v", c.Skills)
	}
	if c.DefaultInputModes[0] != "text/plain" || c.DefaultOutputModes[0] != "text/plain" || c.Version == "" {
		t.Errorf("modes/version: %s", body)
	}
	if strings.Contains(string(body), a.caller.Account) {
		t.Error("the card shows the agent's account")
	}
}

func TestAgentCardUnknown(t *testing.T) {
	e := newEnv(t, a2a.Config{})
	for _, id := range []string{uuid(), "not-an-id"} {
		resp, _ := getCard(t, e.srv.URL+a2a.Path+id+"/"+a2a.CardPath, nil)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", id, resp.StatusCode)
		}
	}
	if n := calls(t, e, "agent_card", "unknown_agent"); n != 2 {
		t.Errorf("agent_card unknown_agent: %v", n)
	}
}

// Any other GET under /a2a/ is 404 with where the cards are: the path an
// A2A client builds from an agent URL without its trailing slash too
// (it was 405, the JSON-RPC route's method refusal).
func TestWrongCardPath(t *testing.T) {
	e := newEnv(t, a2a.Config{})
	a := e.agent(t, "Somewhere")
	for path, hint := range map[string]string{
		"/a2a/.well-known/agent-card.json": "without its trailing slash. Give it /a2a/<agent_id>/ (with the slash)",
		"/a2a/" + a.id:                     "An agent's card is at /a2a/<agent_id>/.well-known/agent-card.json",
		"/a2a/" + a.id + "/card.json":      "An agent's card is at /a2a/<agent_id>/.well-known/agent-card.json",
		"/a2a/":                            "An agent's card is at /a2a/<agent_id>/.well-known/agent-card.json",
	} {
		resp, body := getCard(t, e.srv.URL+path, nil)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), hint) {
			t.Errorf("GET %s: %d %q", path, resp.StatusCode, body)
		}
	}
}

// calls is pircan_a2a_calls_total{method, code}.
func calls(t *testing.T, e *env, method, code string) float64 {
	t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "pircan_a2a_calls_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["method"] == method && labels["code"] == code {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// Without a token, or with a bad one: 401, WWW-Authenticate: Bearer (with
// invalid_token for a bad one, and the origin's RFC 9728 metadata), and a
// JSON-RPC error body the SDK raises.
func TestUnauthorized(t *testing.T) {
	e := newEnv(t, a2a.Config{})
	a := e.agent(t, "Target")
	metadata := `resource_metadata="` + e.srv.URL + `/.well-known/oauth-protected-resource"`
	for token, challenge := range map[string]string{
		"":                   "Bearer " + metadata,
		"pircan_nosuchtoken": `Bearer error="invalid_token", error_description="` + tokenauth.InvalidTokenDescription + `", ` + metadata,
	} {
		resp, r := e.rpc(t, a.id, token, "GetTask", map[string]any{"id": uuid()})
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != challenge {
			t.Fatalf("token %q: %d %q", token, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
		refused(t, r, a2a.CodeRefused, pircan.CodeNotIdentified)
	}
	if n := calls(t, e, "other", "not_identified"); n != 2 {
		t.Errorf("calls other/not_identified = %v", n)
	}
}

// The methods PIRCAN does not offer answer the errors A2A §3.3.4 names; an
// unknown one is -32601; a malformed request -32700/-32600; another
// A2A-Version -32009.
func TestUnsupported(t *testing.T) {
	e := newEnv(t, a2a.Config{})
	a := e.agent(t, "Caller")
	b := e.agent(t, "Target")
	for method, code := range map[string]int{
		"SendStreamingMessage":             a2a.CodeUnsupportedOperation,
		"SubscribeToTask":                  a2a.CodeUnsupportedOperation,
		"GetExtendedAgentCard":             a2a.CodeUnsupportedOperation,
		"CreateTaskPushNotificationConfig": a2a.CodePushNotSupported,
		"ListTaskPushNotificationConfigs":  a2a.CodePushNotSupported,
		"message/send":                     jsonrpc.CodeMethodNotFound,
		"NoSuchMethod":                     jsonrpc.CodeMethodNotFound,
	} {
		resp, r := e.rpc(t, b.id, a.token, method, map[string]any{})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: HTTP %d", method, resp.StatusCode)
		}
		refused(t, r, code, "")
		if string(r.ID) != "7" {
			t.Errorf("%s: id %s", method, r.ID)
		}
	}
	if n := calls(t, e, "SendStreamingMessage", "unsupported_operation"); n != 1 {
		t.Errorf("calls SendStreamingMessage = %v", n)
	}
	if n := calls(t, e, "other", "method_not_found"); n != 2 {
		t.Errorf("calls other/method_not_found = %v", n)
	}
	_, r := e.post(t, b.id, a.token, []byte(`{"jsonrpc":"2.0","id":1,`))
	refused(t, r, jsonrpc.CodeParseError, "")
	_, r = e.post(t, b.id, a.token, []byte(`{"jsonrpc":"1.0","id":1,"method":"GetTask"}`))
	refused(t, r, jsonrpc.CodeInvalidRequest, "")
	_, r = e.post(t, b.id, a.token, []byte(`[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]`))
	refused(t, r, jsonrpc.CodeInvalidRequest, "")

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.srv.URL+a2a.Path+b.id,
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`))
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("A2A-Version", "0.3")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var vr rpcResponse
	_ = json.NewDecoder(resp.Body).Decode(&vr)
	refused(t, vr, a2a.CodeVersionNotSupported, "")
}

// An account without an agent is refused not_registered.
func TestNotRegistered(t *testing.T) {
	e := newEnv(t, a2a.Config{})
	b := e.agent(t, "Target")
	it, err := e.core.IssueToken(t.Context(), pircan.OperatorCaller("operator:test"), pircan.IssueTokenArgs{Account: ptr(unique("a2anoagent")), Label: ptr("test"), ExpiresIn: ptr(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	_, r := e.rpc(t, b.id, it.Secret, "GetTask", map[string]any{"id": uuid()})
	refused(t, r, a2a.CodeRefused, pircan.CodeNotRegistered)
}
