package parley_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/storetest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/parley"
	"github.com/creatimus/pircan/store"
)

// The face's tests run a real core over the real store (one migrated
// database for the binary; every test uses accounts of its own) behind
// an httptest server, and drive it with the official MCP TypeScript SDK
// (internal/mcpclient), plain HTTP for the REST mirror and the public
// documents.

var shared *store.Store

func TestMain(m *testing.M) { os.Exit(storetest.Main(m, &shared)) }

type env struct {
	svc *pircan.Service
	srv *httptest.Server
}

func newEnv(t testing.TB, l pircan.Limits) *env {
	return newEnvWith(t, l, parley.Config{})
}

func newEnvWith(t testing.TB, l pircan.Limits, cfg parley.Config) *env {
	t.Helper()
	l.RegistrationsHour = 1 << 30
	svc := pircan.NewService(shared, pircan.Config{Limits: l}, zerolog.Nop())
	t.Cleanup(svc.WaitReads)
	health := func(ctx context.Context) parley.Health {
		v, current, err := shared.SchemaVersion(ctx)
		return parley.Health{Database: err == nil, SchemaVersion: v, SchemaCurrent: current}
	}
	cfg.Health = health
	srv := httptest.NewServer(parley.New(svc, cfg, zerolog.Nop()).Handler())
	t.Cleanup(srv.Close)
	svc.Listening(srv.Listener.Addr().String())
	return &env{svc: svc, srv: srv}
}

// url is a path of the face.
func (e *env) url(path string) string { return e.srv.URL + path }

var seq atomic.Int64

func unique(base string) string {
	return fmt.Sprintf("%s%d%d", base, time.Now().UnixNano()%1_000_000, seq.Add(1))
}

// line registers an agent for a new account and issues it a token
// (rights: nil for the account's own).
func (e *env) line(t testing.TB, base string, rights []string) agentLine {
	t.Helper()
	ctx := t.Context()
	account := unique(base)
	c, err := e.svc.Caller(ctx, pircan.FaceIRC, account, account)
	must(t, err)
	_, err = e.svc.Hello(ctx, c, pircan.HelloArgs{})
	must(t, err)
	hour := time.Hour
	a := pircan.IssueTokenArgs{Account: &account, ExpiresIn: &hour}
	if rights != nil {
		a.Rights = &rights
	}
	tok, err := e.svc.IssueToken(ctx, pircan.OperatorCaller("operator:test"), a)
	must(t, err)
	c, err = e.svc.Caller(ctx, pircan.FaceParley, account, "")
	must(t, err)
	c.TokenRights = tok.Rights
	return agentLine{Account: account, Token: tok.Secret, Caller: c}
}

// agentLine is an account with a registered agent and a token.
type agentLine struct {
	Account string
	Token   string
	Caller  pircan.Caller
}

// errOf is the error of an operation whose result a test does not need.
func errOf[R any](_ R, err error) error { return err }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// post sends body to url with the token ("" none) and returns the status
// and the decoded JSON answer.
func post(t *testing.T, url, token string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case string:
		rd = bytes.NewReader([]byte(b))
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		must(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, rd)
	must(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return do(t, req)
}

func get(t *testing.T, url, token string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	must(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	must(t, err)
	var out map[string]any
	if len(raw) > 0 && json.Unmarshal(raw, &out) != nil {
		t.Fatalf("%s %s: not JSON (%d): %s", req.Method, req.URL, resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}
