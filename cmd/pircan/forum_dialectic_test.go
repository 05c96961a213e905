package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/parley"
	"github.com/creatimus/pircan/store"
)

// `pircan forum seal` and `pircan forum requests list|review`, run as the
// real binary against a real database: a client without a token applies
// over the forum's HTTP door, the operator approves on the CLI, and the
// same token writes.
func TestForumSealAndRequests(t *testing.T) {
	dsn := pgtest.Database(t)
	ctx := t.Context()
	if err := runMigrateDSN(t, dsn); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	core := pircan.NewService(st, pircan.Config{Limits: pircan.DefaultLimits}, zerolog.Nop())
	agent := func(account string) pircan.Caller {
		c, err := core.Caller(ctx, pircan.FaceMCP, account, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := core.Hello(ctx, c, pircan.HelloArgs{}); err != nil {
			t.Fatal(err)
		}
		c, _ = core.Caller(ctx, pircan.FaceParley, account, "")
		return c
	}
	alice, bob := agent("alice"), agent("bob")
	e := pircan.EnvelopeArgs{Kind: ptr("note"), Body: ptr("A finding."), Claims: &[]pircan.ClaimInArgs{{Statement: ptr("Water boils at 90 °C here.")}}}
	open, err := core.OpenThread(ctx, alice, pircan.OpenThreadArgs{ID: key("lobby"), EnvelopeArgs: e})
	if err != nil {
		t.Fatal(err)
	}
	cl := pircan.ClaimKey(open.Claims[0].ID)
	if _, err := core.AttestClaim(ctx, bob, pircan.AttestArgs{ID: key(cl), Verdict: ptr("supports")}); err != nil {
		t.Fatal(err)
	}

	run := func(args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, binary(t), args...)
		cmd.Env = append(os.Environ(), "PIRCAN_DATABASE_URL="+dsn, "USER=dora", "SUDO_USER=", "PIRCAN_SASL_ACCOUNT=", "PIRCAN_CONFIG=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stdout.String(), stderr.String()
	}
	ok := func(want string, args ...string) string {
		t.Helper()
		code, out, errOut := run(args...)
		if code != 0 || errOut != "" || !strings.Contains(out, want) {
			t.Fatalf("pircan %v: %d\n%s\n%s\nwant %q", args, code, out, errOut, want)
		}
		return out
	}
	refused := func(want string, args ...string) {
		t.Helper()
		code, out, errOut := run(args...)
		if code != 1 || out != "" || !strings.Contains(errOut, want) {
			t.Fatalf("pircan %v: %d\n%s\n%s\nwant the refusal %q", args, code, out, errOut, want)
		}
	}

	// show names the claims a message made (what seal takes).
	ok("    claims: "+cl+"\n", "forum", "show", pircan.ThreadKey(open.Thread.ID))
	// Seal: the operator's sealed refutation overrides bob's support.
	ok("ok: "+cl+" sealed refutes by you; the claim is refuted", "forum", "seal", cl, "refutes")
	refused(`A seal is "supports" or "refutes".`, "forum", "seal", cl, "maybe")
	refused("No claim cl_999999", "forum", "seal", "cl_999999", "supports")
	got, err := core.ForumClaim(ctx, bob, pircan.ClaimArgs{ID: key(cl)})
	if err != nil || got.State != pircan.ClaimRefuted {
		t.Fatalf("sealed: %+v %v", got, err)
	}
	if i := slices.IndexFunc(got.Attestations, func(a pircan.Attestation) bool { return a.By == "human:dora" }); i < 0 || !got.Attestations[i].Sealed {
		t.Fatalf("the operator's seal: %+v", got.Attestations)
	}

	// Requests: a client's application listed (its purpose as text),
	// reviewed by the operator; the same token upgraded.
	srv := httptest.NewServer(parley.New(core, parley.Config{}, zerolog.Nop()).Handler())
	defer srv.Close()
	httpPost := func(path, token string, body any) (int, map[string]any) {
		t.Helper()
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+path, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	status, app := httpPost(parley.ApplyPath, "", map[string]string{"label": "scout", "purpose": "Read and\nsummarise.",
		"model": "m-1", "client": "c/2", "provider": "p", "contact": "a@example.org"})
	if status != 200 || app["token"] == nil {
		t.Fatalf("application: %d %v", status, app)
	}
	secret, tr := app["token"].(string), app["request_id"].(string)
	account := strings.TrimPrefix(app["request"].(map[string]any)["identity"].(string), "pircan:")
	thread := map[string]string{"kind": "ask", "body": "May I write?"}
	if status, r := httpPost(parley.APIPath+"/boards/lobby/threads", secret, thread); status != 403 || r["reason"] != "token_read_only" {
		t.Fatalf("before the review: %d %v", status, r)
	}
	out := ok(tr+"  pending", "forum", "requests", "list")
	for _, want := range []string{"pircan:" + account, "a@example.org", "  | Read and\n  | summarise."} {
		if !strings.Contains(out, want) {
			t.Errorf("list: no %q in\n%s", want, out)
		}
	}
	refused("A rejection gives its reason.", "forum", "requests", "review", tr, "rejected")
	ok("ok: "+tr+" approved (pircan:"+account+", rights write,pin,lock)", "forum", "requests", "review", tr, "approved", "--lock")
	refused("is approved already", "forum", "requests", "review", tr, "deferred")
	refused("No application tr_999999.", "forum", "requests", "review", "tr_999999", "approved")
	tok, err := core.TokenOf(ctx, secret)
	if err != nil || !slices.Equal(tok.Rights, []string{"write", "pin", "lock"}) {
		t.Fatalf("the same token after the approval: %+v %v", tok, err)
	}
	if status, r := httpPost(parley.APIPath+"/boards/lobby/threads", secret, thread); status != 200 || r["thread"] == nil {
		t.Fatalf("after the operator's approval: %d %v", status, r)
	}
	if out := ok("0 of 0 requests", "forum", "requests", "list"); strings.Contains(out, tr) {
		t.Fatalf("an approved request is still open:\n%s", out)
	}
	ok(tr+"  approved", "forum", "requests", "list", "--state", "approved")
}

// A feature request reaches the operator at once: `pircan audit --follow`
// prints its row as it commits.
func TestFeatureRequestFollowed(t *testing.T) {
	dsn := pgtest.Database(t)
	t.Setenv("PIRCAN_DATABASE_URL", dsn)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := runMigrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	core := pircan.NewService(st, pircan.Config{Limits: pircan.DefaultLimits}, zerolog.Nop())
	c, _ := core.Caller(ctx, pircan.FaceMCP, "fiona", "")
	if _, err := core.Hello(ctx, c, pircan.HelloArgs{}); err != nil {
		t.Fatal(err)
	}
	c, _ = core.Caller(ctx, pircan.FaceParley, "fiona", "")
	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = runAudit(ctx, []string{"--follow"}, pw, io.Discard)
		pw.Close()
	}()
	dec := json.NewDecoder(pr)
	var e store.AuditEntry
	// The agent's registration is printed first: the follow has read the
	// log and listens, so the feature request can come only by notification.
	if err := dec.Decode(&e); err != nil || e.Action != "agent.register" {
		t.Fatalf("the entry from before: %+v %v", e, err)
	}
	f, err := core.AddFeature(ctx, c, pircan.FeatureArgs{Title: ptr("Images"), Body: ptr("Screenshots.")})
	if err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(&e); err != nil || e.Action != "forum.feature_requested" || e.Subject != pircan.FeatureKey(f.ID) || e.ActorAccount != "fiona" {
		t.Fatalf("followed: %+v %v", e, err)
	}
	cancel()
	go io.Copy(io.Discard, pr)
	wg.Wait()
}

func runMigrateDSN(t *testing.T, dsn string) error {
	t.Setenv("PIRCAN_DATABASE_URL", dsn)
	return runMigrate(t.Context(), nil)
}
