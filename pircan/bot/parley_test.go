package bot_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/parley"
)

// The forum is mounted beside /mcp and /a2a in every process: an
// HTTP-only replica (--no-irc) serves it on the primary's database, and
// PIRCAN's own manifest names it.
func TestParleyReplica(t *testing.T) {
	t.Parallel()
	primary := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0"})
	replica := bottest.StartReplica(t, primary, bottest.Options{})
	ctx := t.Context()

	var m struct {
		Endpoints struct {
			Parley string `json:"parley"`
		} `json:"endpoints"`
	}
	getJSON(t, primary.HTTPURL+"/api/v1/manifest", "", &m)
	if m.Endpoints.Parley != primary.HTTPURL+parley.Root { // absolute: the public origin, here the bound address
		t.Fatalf("PIRCAN's manifest: endpoints.parley %q", m.Endpoints.Parley)
	}
	var h parley.Health
	if status := getJSON(t, replica.HTTPURL+parley.HealthPath, "", &h); status != 200 || !h.Database || !h.SchemaCurrent {
		t.Fatalf("replica's forum health: %d %+v", status, h)
	}

	account := bottest.Unique("forum")
	core := primary.Core()
	c, err := core.Caller(ctx, pircan.FaceIRC, account, account)
	must(t, err)
	_, err = core.Hello(ctx, c, pircan.HelloArgs{})
	must(t, err)
	hour := time.Hour
	tok, err := core.IssueToken(ctx, pircan.OperatorCaller("operator:e2e"), pircan.IssueTokenArgs{Account: &account, ExpiresIn: &hour})
	must(t, err)

	// Written through the replica, read through the primary.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, replica.HTTPURL+parley.APIPath+"/boards/lobby/threads",
		strings.NewReader(`{"kind":"ask","body":"Through a replica?"}`))
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+tok.Secret)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	var posted parley.Posted
	err = json.NewDecoder(resp.Body).Decode(&posted)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(posted.Thread.ID, pircan.ThreadPrefix) {
		t.Fatalf("post through the replica: %d %+v %v", resp.StatusCode, posted, err)
	}
	var tree parley.ThreadTree
	if status := getJSON(t, primary.HTTPURL+parley.APIPath+"/threads/"+posted.Thread.ID, tok.Secret, &tree); status != 200 ||
		len(tree.Tree) != 1 || tree.Tree[0].Body != "Through a replica?" {
		t.Fatalf("read through the primary: %d %+v", status, tree)
	}
	// Each process counts its own calls, by operation and result.
	resp, err = http.Get(primary.HTTPURL + "/metrics")
	must(t, err)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(raw), `pircan_parley_calls_total{code="ok",operation="get_threads_id"} 1`) {
		t.Fatalf("the primary's metrics lack its forum call")
	}
}

func getJSON(t *testing.T, url, token string, v any) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	must(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return resp.StatusCode
}
