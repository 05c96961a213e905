package mcp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatimus/pircan/internal/tokenauth"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/mcp"
)

// tools are the tools the face offers, in the manifest's order (tools/list
// sorts them by name). Tasks come with their operations.
var tools = []string{"whoami", "register", "find_agents", "list_channels", "policy", "owner", "contact",
	"list_contacts", "accept_contact", "decline_contact", "cancel_contact", "list_agreements",
	"revoke_agreement", "send_direct_message", "read_inbox", "report_agent", "send_task", "list_tasks",
	"complete_task", "cancel_task", "publish_resource",
	"list_resources", "read_resource", "delete_resource", "register_webhook", "list_webhooks",
	"delete_webhook", "get_manifest"}

const listTools = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`

func TestUnauthorized(t *testing.T) {
	e := newEnv(t, limits())
	_, good := e.token(t)
	revoked, err := e.core.IssueToken(t.Context(), pircan.OperatorCaller("operator:test"), pircan.IssueTokenArgs{Account: ptr(unique("mcp"))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.core.RevokeToken(t.Context(), pircan.OperatorCaller("operator:test"), pircan.TokenArgs{TokenID: ptr(revoked.ID)}); err != nil {
		t.Fatal(err)
	}
	expired, err := e.core.IssueToken(t.Context(), pircan.OperatorCaller("operator:test"), pircan.IssueTokenArgs{Account: ptr(unique("mcp")), ExpiresIn: ptr(time.Nanosecond)})
	if err != nil {
		t.Fatal(err)
	}
	metadata := e.srv.URL + "/.well-known/oauth-protected-resource/mcp"
	invalid := `Bearer error="invalid_token", error_description="` + tokenauth.InvalidTokenDescription +
		`", resource_metadata="` + metadata + `"`
	for _, tc := range []struct{ name, authz, challenge string }{
		// RFC 6750 §3.1: no error code when no credentials came at all
		{"missing", "", `Bearer resource_metadata="` + metadata + `"`},
		{"not bearer", "Basic " + good, invalid},
		{"unknown", "Bearer " + pircan.TokenPrefix + "nosuchtoken", invalid},
		{"not a pircan token", "Bearer abc", invalid},
		{"revoked", "Bearer " + revoked.Secret, invalid},
		{"expired", "Bearer " + expired.Secret, invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, e.srv.URL+mcp.Path, tc.authz, listTools)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", resp.StatusCode)
			}
			if got := resp.Header.Values("WWW-Authenticate"); len(got) != 1 || got[0] != tc.challenge {
				t.Fatalf("WWW-Authenticate %q, want %q", got, tc.challenge)
			}
		})
	}
	// The metadata the challenge names (RFC 9728): the resource is /mcp,
	// the token goes in the header, and no authorization server is named:
	// tokens come from the operator.
	resp, err := http.Get(metadata)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	err = json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("metadata: %d %v", resp.StatusCode, err)
	}
	methods, _ := m["bearer_methods_supported"].([]any)
	if m["resource"] != e.srv.URL+mcp.Path || len(methods) != 1 || methods[0] != "header" ||
		m["authorization_servers"] != nil || !strings.Contains(m["token_issuance"].(string), "operator") {
		t.Fatalf("metadata %v", m)
	}
	if resp := post(t, e.srv.URL+mcp.Path, "Bearer "+good, listTools); resp.StatusCode != http.StatusOK {
		t.Fatalf("a good token: status %d", resp.StatusCode)
	}
}

// A reverse proxy on the same host forwards the public Host header to a
// loopback listener: the face answers it (the token is the guard).
func TestBehindProxy(t *testing.T) {
	e := newEnv(t, limits())
	_, tok := e.token(t)
	resp := postHost(t, e.srv.URL+mcp.Path, "pircan.example.org", "Bearer "+tok, listTools)
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
}

func TestToolsList(t *testing.T) {
	e := newEnv(t, limits())
	_, tok := e.token(t)
	cs := e.session(t, tok)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		in, _ := json.Marshal(tl.InputSchema)
		var s struct {
			Type                 string         `json:"type"`
			AdditionalProperties *bool          `json:"additionalProperties"`
			Properties           map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(in, &s); err != nil || s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s: input schema %s: want an object without additional properties", tl.Name, in)
		}
		out, _ := json.Marshal(tl.OutputSchema)
		if !strings.Contains(string(out), `"type":"object"`) {
			t.Errorf("%s: output schema %s: want an object", tl.Name, out)
		}
		if tl.Description == "" {
			t.Errorf("%s: no description", tl.Name)
		}
	}
	if want := slices.Sorted(slices.Values(tools)); !slices.Equal(names, want) {
		t.Fatalf("tools %v\nwant %v", names, want)
	}
	// The limits come from the core's check tags.
	for _, tl := range res.Tools {
		if tl.Name != "send_direct_message" {
			continue
		}
		in, _ := json.Marshal(tl.InputSchema)
		for _, want := range []string{`"required":["to","text"]`, `"format":"uuid"`, `"maxLength":60000`, `bytes`} {
			if !strings.Contains(string(in), want) {
				t.Errorf("send_direct_message input schema %s lacks %s", in, want)
			}
		}
	}
}

func TestRegisterThenWhoAmI(t *testing.T) {
	e := newEnv(t, limits())
	account, tok := e.token(t)
	cs := e.session(t, tok)
	// The core's words, with MCP's own hint (IRC's names HELLO instead).
	if r := refused(t, call(t, cs, "whoami", nil), pircan.CodeNotRegistered, ""); r.Message != "This account has no agent yet. Call register first." {
		t.Fatalf("not_registered says %q", r.Message)
	}
	res := call(t, cs, "register", map[string]any{"capabilities": []string{"chemistry"}})
	conforms(t, cs, "register", res)
	var h mcp.Hello
	ok(t, res, &h)
	if !h.New || h.Name != account || !pircan.ValidID(h.AgentID) {
		t.Fatalf("register: %+v, want a new agent named %s", h, account)
	}
	res = call(t, cs, "whoami", nil)
	conforms(t, cs, "whoami", res)
	var w mcp.WhoAmI
	ok(t, res, &w)
	if w.AgentID != h.AgentID || w.Name != account || !slices.Equal(w.Capabilities, []string{"chemistry"}) || w.Owner != nil {
		t.Fatalf("whoami: %+v", w)
	}
	if !strings.Contains(text(t, res), `"owner":null`) {
		t.Fatalf("whoami: owner not null: %s", text(t, res))
	}
}

func TestFindAgentsList(t *testing.T) {
	e := newEnv(t, limits())
	cs, _ := e.agent(t)
	other, _ := e.agent(t)
	capability := unique("cap")
	for _, s := range []*sdk.ClientSession{cs, other} {
		ok(t, call(t, s, "register", map[string]any{"capabilities": []string{capability}}), &mcp.Hello{})
	}
	res := call(t, cs, "find_agents", map[string]any{"capability": capability, "limit": 1})
	conforms(t, cs, "find_agents", res)
	var page mcp.List[mcp.FoundAgent]
	ok(t, res, &page)
	if len(page.Items) != 1 || page.Returned != 1 || page.Total != 2 || page.Offset != 0 || page.TotalCapped {
		t.Fatalf("find_agents: %+v, want 1 of 2", page)
	}
	for _, key := range []string{`"items":[`, `"returned":1`, `"total":2`, `"offset":0`, `"nick":null`} {
		if !strings.Contains(text(t, res), key) {
			t.Errorf("find_agents %s lacks %s", text(t, res), key)
		}
	}
}

func TestBadArguments(t *testing.T) {
	e := newEnv(t, limits())
	cs, _ := e.agent(t)
	refused(t, call(t, cs, "find_agents", map[string]any{"limit": "5"}), pircan.CodeInvalidArgument, "limit")
	refused(t, call(t, cs, "find_agents", map[string]any{"limit": 11}), pircan.CodeInvalidArgument, "limit")
	refused(t, call(t, cs, "find_agents", map[string]any{"bogus": 1}), pircan.CodeInvalidArgument, "bogus")
	refused(t, call(t, cs, "whoami", map[string]any{"id": "x"}), pircan.CodeInvalidArgument, "id")
	refused(t, call(t, cs, "contact", map[string]any{"purpose": "p"}), pircan.CodeInvalidArgument, "to")
	// An unknown tool stays a JSON-RPC error.
	if _, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Fatal("an unknown tool: no error")
	}
}

// agreement has a ask b for the message scope and b accept.
func agreement(t *testing.T, a *sdk.ClientSession, b *sdk.ClientSession, bID string) string {
	t.Helper()
	var c mcp.Contact
	ok(t, call(t, a, "contact", map[string]any{"to": bID, "purpose": "Share spill data"}), &c)
	res := call(t, b, "list_contacts", nil)
	conforms(t, b, "list_contacts", res)
	var d mcp.Decision
	res = call(t, b, "accept_contact", map[string]any{"request_id": c.RequestID})
	conforms(t, b, "accept_contact", res)
	ok(t, res, &d)
	if d.Status != "accepted" || d.AgreementID == "" {
		t.Fatalf("accept_contact: %+v", d)
	}
	return d.AgreementID
}

func TestLongMessageWhole(t *testing.T) {
	e := newEnv(t, limits())
	a, _ := e.agent(t)
	b, bID := e.agent(t)
	agreementID := agreement(t, a, b, bID)
	res := call(t, a, "list_agreements", nil)
	conforms(t, a, "list_agreements", res)

	long := strings.Repeat("é", pircan.MaxStoredText/2) // 60,000 bytes, 30,000 characters
	res = call(t, a, "send_direct_message", map[string]any{"to": bID, "text": long})
	conforms(t, a, "send_direct_message", res)
	var sent mcp.Sent
	ok(t, res, &sent)
	if sent.AgreementID != agreementID {
		t.Fatalf("sent under %s, want %s", sent.AgreementID, agreementID)
	}
	refused(t, call(t, a, "send_direct_message", map[string]any{"to": bID, "text": long + "x"}), pircan.CodeTooLong, "text")

	res = call(t, b, "read_inbox", nil)
	conforms(t, b, "read_inbox", res)
	var inbox mcp.List[mcp.Message]
	ok(t, res, &inbox)
	if len(inbox.Items) != 1 || inbox.Returned != 1 || inbox.Total != 1 {
		t.Fatalf("read_inbox: %d items, returned %d, total %d", len(inbox.Items), inbox.Returned, inbox.Total)
	}
	if m := inbox.Items[0]; m.Text != long || m.MessageID != sent.MessageID || m.Hop != sent.Hop {
		t.Fatalf("read_inbox: message %s (%d bytes), want %s whole", m.MessageID, len(m.Text), sent.MessageID)
	}
	if strings.Contains(text(t, res), "truncated") {
		t.Fatal("read_inbox: truncated")
	}
	e.core.WaitReads()
	ok(t, call(t, b, "read_inbox", nil), &inbox)
	if len(inbox.Items) != 0 {
		t.Fatalf("read_inbox again: %d items, want none (marked read)", len(inbox.Items))
	}
}

func TestRateLimited(t *testing.T) {
	l := limits()
	l.HTTPPerMinute = 3 // connecting counts one: initialize
	e := newEnv(t, l)
	_, tok := e.token(t)
	cs := e.session(t, tok)
	refused(t, call(t, cs, "whoami", nil), pircan.CodeNotRegistered, "")
	refused(t, call(t, cs, "whoami", nil), pircan.CodeNotRegistered, "")
	r := refused(t, call(t, cs, "whoami", nil), pircan.CodeRateLimited, "")
	if r.RetryAfter < 1 || r.RetryAfter > 60 {
		t.Fatalf("retry_after %d, want 1-60 seconds", r.RetryAfter)
	}
	// Another account has its own window.
	_, other := e.token(t)
	refused(t, call(t, e.session(t, other), "whoami", nil), pircan.CodeNotRegistered, "")
	if n := counter(t, e, "whoami", "rate_limited"); n != 1 {
		t.Fatalf("pircan_mcp_calls_total{tool=whoami,code=rate_limited} = %v, want 1", n)
	}
	if n := counter(t, e, "whoami", "not_registered"); n != 3 {
		t.Fatalf("pircan_mcp_calls_total{tool=whoami,code=not_registered} = %v, want 3", n)
	}
}

func counter(t *testing.T, e *env, tool, code string) float64 {
	t.Helper()
	families, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "pircan_mcp_calls_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			if labels["tool"] == tool && labels["code"] == code {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func TestManifestAgrees(t *testing.T) {
	l := limits()
	l.HTTPPerMinute = 77
	e := newEnv(t, l)
	_, tok := e.token(t)
	cs := e.session(t, tok)
	res := call(t, cs, "get_manifest", nil)
	conforms(t, cs, "get_manifest", res)
	var viaTool mcp.Manifest
	ok(t, res, &viaTool)

	resp, err := http.Get(e.srv.URL + mcp.ManifestPath) // public: no token
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET %s: %d %s", mcp.ManifestPath, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var viaHTTP mcp.Manifest
	if err := json.Unmarshal(body, &viaHTTP); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(viaTool)
	b, _ := json.Marshal(viaHTTP)
	if string(a) != string(b) {
		t.Fatalf("get_manifest %s\nGET manifest %s", a, b)
	}
	if viaHTTP.Limits["http_requests_per_minute"] != 77 || viaHTTP.Limits["message_text_bytes"] != pircan.MaxStoredText ||
		viaHTTP.Limits["resources_per_hour"] != l.ResourcesHour || viaHTTP.Limits["resource_bytes_per_agent"] != l.ResourceBytes ||
		viaHTTP.Limits["resource_content_bytes"] != pircan.MaxResourceBytes {
		t.Fatalf("limits %v: want the configured ones", viaHTTP.Limits)
	}
	if viaHTTP.Protocol != pircan.ProtocolVersion || viaHTTP.Endpoints != (mcp.Endpoints{MCP: e.srv.URL + "/mcp", Manifest: e.srv.URL + "/api/v1/manifest",
		Portal: e.srv.URL + "/owner", A2A: e.srv.URL + "/a2a/<agent_id>/", A2ACard: e.srv.URL + "/a2a/<agent_id>/.well-known/agent-card.json",
		Parley: e.srv.URL + "/parley"}) || viaHTTP.Limits["tasks_per_hour"] != l.TasksHour {
		t.Fatalf("manifest: %s", b)
	}
	var names []string
	for _, tl := range viaHTTP.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, tools) {
		t.Fatalf("manifest tools %v", names)
	}
}
