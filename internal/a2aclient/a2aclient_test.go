package a2aclient_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/creatimus/pircan/internal/a2aclient"
)

const token = "s3cret-token"

// rpc is one JSON-RPC request as the SDK sent it.
type rpc struct {
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	ID      json.RawMessage `json:"id"`
	Version string          `json:"-"` // the A2A-Version header
}

// agent is a tiny A2A 1.0 JSON-RPC server behind a bearer-token check like
// PIRCAN's: SendMessage makes task t1 (submitted), which GetTask shows
// completed from its third call on; CancelTask cancels t2; any other task id
// is TaskNotFound (-32001).
type agent struct {
	url string
	mu  sync.Mutex
	got []rpc
	// gets counts GetTask calls for t1.
	gets int
}

func (a *agent) card() map[string]any {
	return map[string]any{
		"name":        "tiny",
		"description": "a tiny agent",
		"version":     "1",
		"supportedInterfaces": []any{
			map[string]any{"url": a.url + "/a2a/tiny", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
		},
		"capabilities":       map[string]any{"streaming": false, "pushNotifications": false},
		"defaultInputModes":  []string{"text/plain"},
		"defaultOutputModes": []string{"text/plain"},
		"skills": []any{
			map[string]any{"id": "translate", "name": "translate", "description": "translates", "tags": []string{"task"}},
		},
		"securitySchemes":      map[string]any{"bearer": map[string]any{"httpAuthSecurityScheme": map[string]any{"scheme": "Bearer"}}},
		"securityRequirements": []any{map[string]any{"schemes": map[string]any{"bearer": map[string]any{}}}},
	}
}

func task(id, state string, answer string) map[string]any {
	t := map[string]any{"id": id, "contextId": "ctx-" + id, "status": map[string]any{"state": state}}
	if answer != "" {
		t["artifacts"] = []any{map[string]any{"artifactId": "a1", "parts": []any{map[string]any{"text": answer}}}}
	}
	return t
}

func (a *agent) answer(req rpc) (result any, code int, message string, data any) {
	var p struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(req.Params, &p)
	switch req.Method {
	case "SendMessage":
		return map[string]any{"task": task("t1", "TASK_STATE_SUBMITTED", "")}, 0, "", nil
	case "GetTask":
		if p.ID == "t1" {
			a.gets++
			if a.gets >= 3 {
				return task("t1", "TASK_STATE_COMPLETED", "bonjour"), 0, "", nil
			}
			return task("t1", "TASK_STATE_WORKING", ""), 0, "", nil
		}
	case "CancelTask":
		if p.ID == "t2" {
			return task("t2", "TASK_STATE_CANCELED", ""), 0, "", nil
		}
	case "ListTasks":
		return map[string]any{"tasks": []any{task("t1", "TASK_STATE_SUBMITTED", "")}, "nextPageToken": "", "pageSize": 50, "totalSize": 1}, 0, "", nil
	default:
		return nil, -32601, "Method not found", nil
	}
	return nil, -32001, "Task not found", map[string]any{"task_id": p.ID}
}

func (a *agent) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/a2a/tiny/.well-known/agent-card.json":
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(a.card())
		return
	case r.Method != http.MethodPost || r.URL.Path != "/a2a/tiny":
		http.NotFound(w, r)
		return
	case r.Header.Get("Authorization") != "Bearer "+token:
		w.Header().Set("WWW-Authenticate", "Bearer")
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	var req rpc
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req.Version = r.Header.Get("A2A-Version")
	a.mu.Lock()
	a.got = append(a.got, req)
	result, code, message, data := a.answer(req)
	a.mu.Unlock()
	resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	if code != 0 {
		e := map[string]any{"code": code, "message": message}
		if data != nil {
			e["data"] = data
		}
		resp["error"] = e
	} else {
		resp["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func server(t *testing.T) *agent {
	a := &agent{}
	srv := httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(srv.Close)
	a.url = srv.URL
	return a
}

func (a *agent) cardURL() string { return a.url + "/a2a/tiny/.well-known/agent-card.json" }

func TestPlan(t *testing.T) {
	a := server(t)
	out := a2aclient.Run(t, a.cardURL(), token,
		a2aclient.Card(""),
		a2aclient.Send("translate hello", "translate"),
		a2aclient.Get("t1"),
		a2aclient.Poll("t1"),
		a2aclient.List(),
		a2aclient.Cancel("t2"),
		a2aclient.Get("nope"),
		a2aclient.Cancel("nope"),
	)
	for i, o := range out[:6] {
		if !o.OK || o.Err != nil {
			t.Errorf("step %d: %s", i, o.Line)
		}
	}
	var card struct {
		Name   string `json:"name"`
		Skills []struct {
			ID string `json:"id"`
		} `json:"skills"`
	}
	if err := out[0].Decode(&card); err != nil || card.Name != "tiny" || len(card.Skills) != 1 || card.Skills[0].ID != "translate" {
		t.Errorf("card: %v: %s", err, out[0].Line)
	}
	if o := out[1]; o.TaskID() != "t1" || o.State() != "submitted" || o.WireState() != "TASK_STATE_SUBMITTED" {
		t.Errorf("send: task %q state %q: %s", o.TaskID(), o.State(), o.Line)
	}
	if o := out[2]; o.State() != "working" {
		t.Errorf("get: state %q: %s", o.State(), o.Line)
	}
	if o := out[3]; o.State() != "completed" || o.ArtifactText() != "bonjour" {
		t.Errorf("poll: state %q, artifact %q: %s", o.State(), o.ArtifactText(), o.Line)
	}
	if o := out[4]; len(o.Tasks()) != 1 || o.Tasks()[0]["id"] != "t1" {
		t.Errorf("list: %s", o.Line)
	}
	if o := out[5]; o.TaskID() != "t2" || o.State() != "canceled" {
		t.Errorf("cancel: %s", o.Line)
	}
	for _, o := range out[6:] {
		if o.OK || o.Err == nil || o.Err.Code != -32001 || string(o.Err.Data) != `{"task_id":"nope"}` || o.Err.Message != "Task not found" || o.Err.HTTPStatus != 0 {
			t.Errorf("unknown task: want -32001 with its data: %s", o.Line)
		}
	}

	// What the SDK sent, which PIRCAN's A2A face must accept.
	a.mu.Lock()
	defer a.mu.Unlock()
	var methods []string
	for _, r := range a.got {
		methods = append(methods, r.Method)
		if r.Version != "1.0" {
			t.Errorf("%s: A2A-Version %q", r.Method, r.Version)
		}
		t.Logf("%s %s", r.Method, r.Params)
	}
	want := "SendMessage GetTask GetTask GetTask ListTasks CancelTask GetTask CancelTask"
	if got := strings.Join(methods, " "); got != want {
		t.Errorf("methods:\n got %s\nwant %s", got, want)
	}
	var send struct {
		Message struct {
			MessageID string `json:"messageId"`
			Role      string `json:"role"`
			Parts     []struct {
				Text string `json:"text"`
			} `json:"parts"`
			Metadata map[string]any `json:"metadata"`
		} `json:"message"`
	}
	if err := json.Unmarshal(a.got[0].Params, &send); err != nil || send.Message.MessageID == "" || send.Message.Role != "ROLE_USER" ||
		len(send.Message.Parts) != 1 || send.Message.Parts[0].Text != "translate hello" || send.Message.Metadata["skill"] != "translate" {
		t.Errorf("SendMessage params: %v: %s", err, a.got[0].Params)
	}
	if p := string(a.got[1].Params); p != `{"id":"t1"}` {
		t.Errorf("GetTask params: %s", p)
	}
}

// Send without a skill has no metadata; a poll that never sees its state
// times out with the last task in its data.
func TestNoSkillPollTimeout(t *testing.T) {
	a := server(t)
	poll := a2aclient.Poll("t1", "rejected")
	poll.TimeoutMS = 300
	out := a2aclient.Run(t, a.cardURL(), token, a2aclient.Send("x", ""), poll)
	if o := out[0]; o.TaskID() != "t1" {
		t.Errorf("send: %s", o.Line)
	}
	a.mu.Lock()
	first := string(a.got[0].Params)
	a.mu.Unlock()
	if strings.Contains(first, "metadata") {
		t.Errorf("SendMessage without a skill has metadata: %s", first)
	}
	if o := out[1]; o.OK || o.Err == nil || o.Err.Code != 0 || !strings.Contains(string(o.Err.Data), `"TASK_STATE_COMPLETED"`) {
		t.Errorf("poll: want a timeout with the last task: %s", o.Line)
	}
}

func TestWrongToken(t *testing.T) {
	a := server(t)
	for _, bad := range []string{"wrong", ""} {
		out := a2aclient.Run(t, a.cardURL(), bad, a2aclient.Card(""), a2aclient.Get("t1"))
		if o := out[0]; !o.OK {
			t.Errorf("token %q: the card is public: %s", bad, o.Line)
		}
		if o := out[1]; o.OK || o.Err == nil || o.Err.HTTPStatus != http.StatusUnauthorized {
			t.Errorf("token %q: want HTTP 401: %s", bad, o.Line)
		}
	}
}

func TestMissingCard(t *testing.T) {
	a := server(t)
	out := a2aclient.Run(t, a.url+"/a2a/nobody/.well-known/agent-card.json", token, a2aclient.Card(""), a2aclient.Send("x", ""))
	for i, o := range out {
		if o.OK || o.Err == nil || o.Err.HTTPStatus != http.StatusNotFound {
			t.Errorf("step %d: want HTTP 404: %s", i, o.Line)
		}
	}
}
