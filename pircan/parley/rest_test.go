package parley_test

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/creatimus/pircan/internal/mcpclient"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/parley"
)

// The REST mirror and call_api_operation answer the same JSON as the
// tool, refusals included; the public documents come from the same table.

func TestThreeDoorsSameJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pircan.DefaultLimits)
	a := e.line(t, "doors", nil)
	// A board of its own: the lobby's list changes with the tests beside.
	slug := strings.ToLower(unique("doors"))
	_, err := e.svc.AddBoard(t.Context(), pircan.OperatorCaller("operator:test"), pircan.NewBoardArgs{Slug: &slug, Name: strp("Doors")})
	must(t, err)
	opened, err := e.svc.OpenThread(t.Context(), a.Caller, pircan.OpenThreadArgs{ID: keyp(slug),
		EnvelopeArgs: pircan.EnvelopeArgs{Kind: strp("ask"), Body: strp("Same everywhere?")}})
	must(t, err)
	th := pircan.ThreadKey(opened.Thread.ID)

	cases := []struct {
		key    string
		params args
		method string
		path   string
		body   string
		status int
	}{
		{"get_threads_id", args{"id": th}, "GET", "/threads/" + th, "", 200},
		{"get_threads_id", args{"id": "th_999999999"}, "GET", "/threads/th_999999999", "", 404},
		{"get_boards_id_threads", args{"id": slug, "limit": 2}, "GET", "/boards/" + slug + "/threads?limit=2", "", 200},
		{"get_threads", args{"author": "pircan:" + a.Account, "awaiting": true}, "GET", "/threads?author=pircan:" + a.Account + "&awaiting=true", "", 200},
		{"post_inbox_ack", args{"cursor": "0"}, "POST", "/inbox/ack", `{"cursor":"0"}`, 200},
		{"post_threads_id_messages", args{"id": th, "kind": "shout", "body": "x"}, "POST", "/threads/" + th + "/messages", `{"kind":"shout","body":"x"}`, 400},
	}
	var steps []mcpclient.Step
	for _, c := range cases {
		steps = append(steps, call(c.key, c.params), call("call_api_operation", args{"key": c.key, "params": c.params}))
	}
	out := run(t, e, a.Token, steps...)
	for i, c := range cases {
		var tool, viaCatalog, rest any
		if json.Unmarshal([]byte(out[2*i].Text()), &tool) != nil || json.Unmarshal([]byte(out[2*i+1].Text()), &viaCatalog) != nil {
			t.Fatalf("%s: not JSON: %s / %s", c.key, out[2*i].Line, out[2*i+1].Line)
		}
		if out[2*i].IsError() != (c.status != 200) || out[2*i+1].IsError() != (c.status != 200) {
			t.Errorf("%s: isError %v/%v, want %v", c.key, out[2*i].IsError(), out[2*i+1].IsError(), c.status != 200)
		}
		req, err := http.NewRequestWithContext(t.Context(), c.method, e.url(parley.APIPath+c.path), strings.NewReader(c.body))
		must(t, err)
		req.Header.Set("Authorization", "Bearer "+a.Token)
		status, body := do(t, req)
		rest = any(body)
		if status != c.status || !reflect.DeepEqual(tool, viaCatalog) || !reflect.DeepEqual(tool, rest) {
			t.Errorf("%s %s: REST %d\n tool %v\n call_api_operation %v\n REST %v", c.method, c.path, status, tool, viaCatalog, rest)
		}
	}
}

func TestRESTRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pircan.DefaultLimits)
	a := e.line(t, "rest", nil)
	for _, c := range []struct {
		name, method, path, body, token string
		status                          int
		reason, field                   string
	}{
		{"no token", "GET", "/boards", "", "", 401, "unauthenticated", ""},
		{"bad token", "GET", "/boards", "", "pircan_nope", 401, "unauthenticated", ""},
		{"bad JSON", "POST", "/boards", "{", a.Token, 400, "invalid_json", ""},
		{"not an object", "POST", "/boards", "[1]", a.Token, 400, "invalid_json", ""},
		{"too large", "POST", "/boards", `{"name":"` + strings.Repeat("x", 70<<10) + `"}`, a.Token, 413, "payload_too_large", ""},
		{"no such path", "GET", "/nothing", "", a.Token, 404, "unknown_endpoint", ""},
		{"the benchmark's floor is not served", "GET", "/noop", "", a.Token, 404, "unknown_endpoint", ""},
		{"a row's path with another method", "DELETE", "/boards", "", a.Token, 404, "unknown_endpoint", ""},
		{"a query of the wrong type", "GET", "/boards?limit=many", "", a.Token, 400, "invalid_body", "limit"},
		{"an unknown query parameter", "GET", "/boards?colour=red", "", a.Token, 400, "invalid_body", "colour"},
		{"limit out of range", "GET", "/boards?limit=1000", "", a.Token, 400, "invalid_body", "limit"},
		{"no board", "GET", "/boards/99999999", "", a.Token, 404, "board_not_found", ""},
		{"a cursor get_inbox did not give", "POST", "/inbox/ack", `{"cursor":"999999999999"}`, a.Token, 400, "invalid_body", "cursor"},
	} {
		req, err := http.NewRequestWithContext(t.Context(), c.method, e.url(parley.APIPath+c.path), strings.NewReader(c.body))
		must(t, err)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var r refusal
		if resp.StatusCode != c.status || json.Unmarshal(raw, &r) != nil || r.Reason != c.reason || r.Error == "" ||
			(c.field != "" && r.Details["field"] != c.field) {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, raw)
		}
		if c.status == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: no WWW-Authenticate", c.name)
		}
	}
}

func TestPublicDocuments(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pircan.DefaultLimits)
	a := e.line(t, "docs", nil)
	status, m := get(t, e.url(parley.ManifestPath), "")
	if status != 200 || m["parley"] != "1" || m["realm"] != "pircan" || m["you"] != nil ||
		sub(m, "limits")["body_chars"] != float64(500) || sub(m, "limits")["requests_per_minute"] != float64(600) ||
		sub(sub(m, "profiles"), "dialectic")["offered"] != true || sub(m, "endpoints")["mcp"] != e.url(parley.MCPPath) ||
		sub(m, "endpoints")["base"] != e.url(parley.Root) || sub(m, "limits")["claims_per_message"] != float64(10) ||
		len(sub(m, "dialectic")["evidence_kinds"].([]any)) != 8 || len(sub(m, "dialectic")["claim_states"].([]any)) != 5 ||
		len(sub(m, "dialectic")["verdicts"].([]any)) != 3 || sub(m, "access")["apply"] != e.url(parley.ApplyPath) {
		t.Fatalf("manifest: %d %v", status, m)
	}
	// Each text limit the manifest names is the one its argument's check
	// enforces.
	for name, arg := range map[string]struct {
		args  any
		field string
	}{
		"body_chars": {pircan.EnvelopeArgs{}, "body"}, "board_name_chars": {pircan.NewBoardArgs{}, "name"},
		"board_description_chars": {pircan.NewBoardArgs{}, "description"},
		"statement_chars":         {pircan.ClaimInArgs{}, "statement"}, "evidence_ref_chars": {pircan.EvidenceArgs{}, "ref"},
		"evidence_note_chars":    {pircan.EvidenceArgs{}, "note"},
		"attestation_note_chars": {pircan.AttestArgs{}, "note"},
		"feature_title_chars":    {pircan.FeatureArgs{}, "title"}, "feature_body_chars": {pircan.FeatureArgs{}, "body"},
	} {
		if checked := pircan.ArgNamed(arg.args, arg.field).Text; checked == 0 || sub(m, "limits")[name] != float64(checked) {
			t.Errorf("manifest limits.%s = %v; %T.%s checks %d", name, sub(m, "limits")[name], arg.args, arg.field, checked)
		}
	}
	var keys []string
	for _, o := range m["operations"].([]any) {
		keys = append(keys, o.(map[string]any)["key"].(string))
	}
	for _, k := range []string{"get_manifest", "get_boards", "get_boards_id", "get_boards_id_threads", "post_boards",
		"post_boards_id_threads", "get_threads", "get_threads_id", "post_threads_id_messages", "get_threads_id_events",
		"post_threads_id_close", "post_threads_id_reopen", "post_threads_id_state", "post_threads_id_pin", "get_inbox",
		"post_inbox_ack", "list_api_operations", "get_api_operation", "call_api_operation",
		"get_claims_id", "get_threads_id_claims", "post_claims_id_attest", "get_token_requests", "get_token_requests_id",
		"post_token_requests_id_review", "post_token_requests_id_withdraw", "post_features", "get_features", "post_features_id_status"} {
		if !contains(keys, k) {
			t.Errorf("manifest lacks %s", k)
		}
	}
	for _, k := range keys { // the benchmark's floor is not offered
		if strings.Contains(k, "noop") {
			t.Errorf("manifest offers %s", k)
		}
	}
	if status, m := get(t, e.url(parley.ManifestPath), a.Token); status != 200 || sub(m, "you")["identity"] != "pircan:"+a.Account {
		t.Fatalf("manifest with a token: %d %v", status, m["you"])
	}
	if status, m := get(t, e.url(parley.ManifestPath), "pircan_nope"); status != 401 || m["reason"] != "unauthenticated" {
		t.Fatalf("manifest with a bad token: %d %v", status, m)
	}
	status, h := get(t, e.url(parley.HealthPath), "")
	if status != 200 || h["database"] != true || h["schema_current"] != true || h["schema_version"].(float64) < 30 || h["version"] != "1" {
		t.Fatalf("health: %d %v", status, h)
	}
	for _, path := range []string{parley.LLMsPath, parley.HTMLPath} {
		resp, err := http.Get(e.url(path))
		must(t, err)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		text := string(raw)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		for _, k := range keys {
			if !strings.Contains(text, k) {
				t.Errorf("%s lacks %s", path, k)
			}
		}
		for _, r := range pircan.ForumReasons {
			if !strings.Contains(text, string(r.Reason)) {
				t.Errorf("%s lacks the reason %s", path, r.Reason)
			}
		}
		if !strings.Contains(text, "500") || !strings.Contains(text, "handover") || !strings.Contains(text, e.url(parley.MCPPath)) {
			t.Errorf("%s lacks the limits or kinds", path)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The MCP door holds the body cap the manifest names (request_body_bytes)
// as the REST mirror does: the same envelope is not taken by one door and
// refused by the other, and the refusal is the forum's JSON.
func TestMCPBodyCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pircan.DefaultLimits)
	a := e.line(t, "cap", nil)
	rpc := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": "post_boards_id_threads", "arguments": map[string]any{"id": "lobby", "kind": "note", "body": strings.Repeat("x", 70<<10)}}}
	status, body := post(t, e.url(parley.MCPPath), a.Token, rpc)
	if status != http.StatusRequestEntityTooLarge || body["reason"] != "payload_too_large" {
		t.Fatalf("%d %v", status, body)
	}
	rest, _ := post(t, e.url(parley.APIPath+"/boards/lobby/threads"), a.Token, rpc["params"].(map[string]any)["arguments"])
	if rest != status {
		t.Fatalf("REST %d, MCP %d", rest, status)
	}
}

// A body that is not JSON is invalid_json on the MCP door as on REST, in
// the forum's JSON.
func TestMCPInvalidJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pircan.DefaultLimits)
	a := e.line(t, "badjson", nil)
	for _, path := range []string{parley.MCPPath, parley.APIPath + "/boards/lobby/threads"} {
		status, body := post(t, e.url(path), a.Token, `{"jsonrpc":`)
		if status != http.StatusBadRequest || body["reason"] != "invalid_json" {
			t.Errorf("%s: %d %v", path, status, body)
		}
	}
	// GET and DELETE carry no body: they stay the go-sdk's 405 (stateless).
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		req, err := http.NewRequestWithContext(t.Context(), method, e.url(parley.MCPPath), nil)
		must(t, err)
		req.Header.Set("Authorization", "Bearer "+a.Token)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d", method, resp.StatusCode)
		}
	}
}
