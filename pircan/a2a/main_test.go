package a2a_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/storetest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/a2a"
	"github.com/creatimus/pircan/store"
)

// The face's tests run it on httptest over the real store and speak
// JSON-RPC to it as the A2A JS SDK 1.3.0 does (its method names, ProtoJSON
// fields, A2A-Version header). One database serves the test binary.

var shared *store.Store

func TestMain(m *testing.M) { os.Exit(storetest.Main(m, &shared)) }

type env struct {
	core *pircan.Service
	srv  *httptest.Server
	reg  *prometheus.Registry
}

func newEnv(t testing.TB, cfg a2a.Config) *env {
	t.Helper()
	return newEnvWith(t, limits(), cfg)
}

func limits() pircan.Limits {
	l := pircan.DefaultLimits
	l.RegistrationsHour = 1 << 30 // the shared database registers every test's agents
	return l
}

func newEnvWith(t testing.TB, l pircan.Limits, cfg a2a.Config) *env {
	t.Helper()
	return newEnvCore(t, l, cfg, "")
}

// newEnvCore is the env with a core whose PublicURL is publicURL ("": the
// listen address, as pircan/bot tells it).
func newEnvCore(t testing.TB, l pircan.Limits, cfg a2a.Config, publicURL string) *env {
	t.Helper()
	core := pircan.NewService(shared, pircan.Config{Limits: l, PublicURL: publicURL}, zerolog.Nop())
	t.Cleanup(core.WaitReads)
	reg := prometheus.NewRegistry()
	cfg.Registerer = reg
	face := a2a.New(core, cfg, zerolog.Nop())
	mux := http.NewServeMux()
	mux.Handle(a2a.Path, face.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	core.Listening(srv.Listener.Addr().String())
	return &env{core: core, srv: srv, reg: reg}
}

// agent is a registered agent with a token.
type agent struct {
	id, token string
	caller    pircan.Caller
}

func (e *env) agent(t testing.TB, name string, caps ...string) agent {
	t.Helper()
	ctx := t.Context()
	account := unique("a2a")
	c, err := e.core.Caller(ctx, pircan.FaceA2A, account, "")
	if err != nil {
		t.Fatal(err)
	}
	desc := name + " does things."
	if _, err := e.core.Hello(ctx, c, pircan.HelloArgs{Name: &name, Description: &desc, Capabilities: &caps}); err != nil {
		t.Fatal(err)
	}
	if c, err = e.core.Caller(ctx, pircan.FaceA2A, account, ""); err != nil {
		t.Fatal(err)
	}
	it, err := e.core.IssueToken(ctx, pircan.OperatorCaller("operator:test"), pircan.IssueTokenArgs{Account: ptr(account), Label: ptr("test"), ExpiresIn: ptr(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return agent{id: c.Agent.ID, token: it.Secret, caller: c}
}

// agree has from ask to for scopes and to accept; it returns the agreement.
func (e *env) agree(t testing.TB, from, to agent, scopes ...string) string {
	t.Helper()
	purpose := "tasks"
	r, err := e.core.Contact(t.Context(), from.caller, pircan.ContactArgs{To: &to.id, Purpose: &purpose, Scopes: &scopes})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status == "accepted" {
		return r.AgreementID
	}
	d, err := e.core.Accept(t.Context(), to.caller, pircan.DecideArgs{RequestID: &r.RequestID})
	if err != nil {
		t.Fatal(err)
	}
	return d.AgreementID
}

// rpcResponse is a JSON-RPC response as the client reads it.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int              `json:"code"`
		Message string           `json:"message"`
		Data    []map[string]any `json:"data"`
	} `json:"error"`
}

// rpc posts one request to the agent's URL with the token ("" for none).
func (e *env) rpc(t *testing.T, agentID, token, method string, params any) (*http.Response, rpcResponse) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	return e.post(t, agentID, token, body)
}

// rpcHost posts GetTask without a token, with a Host header of its own.
func (e *env) rpcHost(t *testing.T, agentID, host string) (*http.Response, rpcResponse) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": map[string]any{"id": uuid()}})
	return e.postHost(t, agentID, "", host, body)
}

func (e *env) post(t *testing.T, agentID, token string, body []byte) (*http.Response, rpcResponse) {
	t.Helper()
	return e.postHost(t, agentID, token, "", body)
}

func (e *env) postHost(t *testing.T, agentID, token, host string, body []byte) (*http.Response, rpcResponse) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.srv.URL+a2a.Path+agentID, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
		req.Header.Set("X-Forwarded-Proto", "https")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out rpcResponse
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s: not JSON: %s", agentID, raw)
		}
	}
	return resp, out
}

// result decodes a successful response's result.
func result(t *testing.T, r rpcResponse, out any) {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("error %d %s %v", r.Error.Code, r.Error.Message, r.Error.Data)
	}
	if r.JSONRPC != "2.0" || string(r.ID) != "7" {
		t.Fatalf("envelope: jsonrpc %q id %s", r.JSONRPC, r.ID)
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		t.Fatalf("result %s: %v", r.Result, err)
	}
}

// refused checks a JSON-RPC error's code and, when given, the spec §2 code
// in its ErrorInfo; it returns that ErrorInfo's metadata.
func refused(t *testing.T, r rpcResponse, code int, pcode pircan.Code) map[string]any {
	t.Helper()
	if r.Error == nil {
		t.Fatalf("want error %d (%s), got result %s", code, pcode, r.Result)
	}
	if r.Error.Code != code {
		t.Fatalf("error code %d (%s), want %d", r.Error.Code, r.Error.Message, code)
	}
	if pcode == "" {
		return nil
	}
	if len(r.Error.Data) == 0 || r.Error.Data[0]["@type"] != "type.googleapis.com/google.rpc.ErrorInfo" {
		t.Fatalf("data: %v", r.Error.Data)
	}
	meta, _ := r.Error.Data[0]["metadata"].(map[string]any)
	if meta["code"] != string(pcode) {
		t.Fatalf("data code %v, want %s (%s)", meta["code"], pcode, r.Error.Message)
	}
	return meta
}

func unique(prefix string) string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func uuid() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-8" + h[17:20] + "-" + h[20:]
}

// ptr is the address of v: an argument given.
func ptr[T any](v T) *T { return &v }

// newEnvPublic is newEnv with a configured public URL.
func newEnvPublic(t testing.TB, publicURL string) *env {
	t.Helper()
	return newEnvCore(t, limits(), a2a.Config{}, publicURL)
}
