package mcp_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/storetest"
	"github.com/creatimus/pircan/internal/tokenauth"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/mcp"
	"github.com/creatimus/pircan/store"
)

// The face's tests run it on httptest over the real store and drive it
// with the go-sdk's own client, as an MCP client would. One database
// serves the test binary; every test uses accounts of its own.

var shared *store.Store

func TestMain(m *testing.M) { os.Exit(storetest.Main(m, &shared)) }

// env is one face on httptest, with its core and registry.
type env struct {
	core *pircan.Service
	face *mcp.Face
	srv  *httptest.Server
	reg  *prometheus.Registry
}

func limits() pircan.Limits {
	l := pircan.DefaultLimits
	l.RegistrationsHour = 1 << 30 // the shared database registers every test's agents
	return l
}

func newEnv(t *testing.T, l pircan.Limits) *env {
	t.Helper()
	return newEnvWith(t, l, mcp.Config{})
}

// newEnvWith is newEnv with a face configuration of its own (its
// Registerer is the env's).
func newEnvWith(t testing.TB, l pircan.Limits, cfg mcp.Config) *env {
	t.Helper()
	return newEnvOver(t, shared, l, cfg)
}

// newEnvOver is newEnvWith over a store of its own (a fake over shared).
func newEnvOver(t testing.TB, st pircan.Store, l pircan.Limits, cfg mcp.Config) *env {
	t.Helper()
	core := pircan.NewService(st, pircan.Config{Limits: l}, zerolog.Nop())
	t.Cleanup(core.WaitReads)
	reg := prometheus.NewRegistry()
	cfg.Registerer = reg
	face := mcp.New(core, cfg, zerolog.Nop())
	mux := http.NewServeMux()
	mux.Handle("POST "+mcp.Path, face.Handler())
	mux.Handle("GET "+mcp.ManifestPath, face.ManifestHandler())
	mux.Handle("GET "+tokenauth.MetadataPath+mcp.Path, face.MetadataHandler(mcp.Path))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	core.Listening(srv.Listener.Addr().String())
	return &env{core: core, face: face, srv: srv, reg: reg}
}

// token issues a token for a fresh account.
func (e *env) token(t testing.TB) (account, secret string) {
	t.Helper()
	account = unique("mcp")
	it, err := e.core.IssueToken(t.Context(), pircan.OperatorCaller("operator:test"), pircan.IssueTokenArgs{Account: ptr(account), Label: ptr("test"), ExpiresIn: ptr(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return account, it.Secret
}

// bearer adds the Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// session connects the go-sdk's client with token.
func (e *env) session(t testing.TB, token string) *sdk.ClientSession {
	t.Helper()
	return e.sessionVia(t, token, http.DefaultTransport)
}

// sessionVia is session over a transport of its own.
func (e *env) sessionVia(t testing.TB, token string, rt http.RoundTripper) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	tr := &sdk.StreamableClientTransport{Endpoint: e.srv.URL + mcp.Path, HTTPClient: &http.Client{Transport: bearer{token, rt}}}
	cs, err := c.Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// agent is a session of a fresh account that registered.
func (e *env) agent(t *testing.T) (*sdk.ClientSession, string) {
	t.Helper()
	_, tok := e.token(t)
	cs := e.session(t, tok)
	var h mcp.Hello
	ok(t, call(t, cs, "register", map[string]any{}), &h)
	return cs, h.AgentID
}

func call(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("content: %d items, want 1", len(res.Content))
	}
	tc, isText := res.Content[0].(*sdk.TextContent)
	if !isText {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// ok decodes a successful result's structuredContent into out, after
// checking that content carries the same JSON.
func ok(t *testing.T, res *sdk.CallToolResult, out any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("refused: %s", text(t, res))
	}
	sc, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	_ = json.Unmarshal(sc, &a)
	if err := json.Unmarshal([]byte(text(t, res)), &b); err != nil {
		t.Fatalf("text content is not JSON: %v", err)
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("structuredContent %s and text %s differ", sc, text(t, res))
	}
	if err := json.Unmarshal(sc, out); err != nil {
		t.Fatal(err)
	}
}

// refused checks a refusal: isError, code and field in the text's JSON.
func refused(t *testing.T, res *sdk.CallToolResult, code pircan.Code, field string) mcp.Refusal {
	t.Helper()
	if !res.IsError {
		t.Fatalf("not refused: %s", text(t, res))
	}
	var r mcp.Refusal
	if err := json.Unmarshal([]byte(text(t, res)), &r); err != nil {
		t.Fatalf("refusal text is not JSON: %v", err)
	}
	if r.Code != code || r.Field != field || r.Message == "" {
		t.Fatalf("refusal %+v, want code %s field %q", r, code, field)
	}
	return r
}

// conforms checks a result against its tool's output schema, as a client
// that validates structuredContent does.
func conforms(t *testing.T, cs *sdk.ClientSession, name string, res *sdk.CallToolResult) {
	t.Helper()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name != name {
			continue
		}
		var s jsonschema.Schema
		b, _ := json.Marshal(tl.OutputSchema)
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		sc, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(sc, &v)
		if err := rs.Validate(v); err != nil {
			t.Fatalf("%s: result %s does not conform to its output schema: %v", name, sc, err)
		}
		return
	}
	t.Fatalf("no tool %s", name)
}

func uuid() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func unique(prefix string) string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// post sends one raw JSON-RPC request with the given Authorization.
func post(t *testing.T, url, authz, body string) *http.Response {
	return postHost(t, url, "", authz, body)
}

// postHost is post with a Host header of its own ("": the URL's).
func postHost(t *testing.T, url, host, authz, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// ptr is the address of v: an argument given.
func ptr[T any](v T) *T { return &v }
