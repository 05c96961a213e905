package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

func TestOwnerVerify(t *testing.T) {
	dsn := pgtest.Database(t)
	t.Setenv("PIRCAN_DATABASE_URL", dsn)
	t.Setenv("USER", "carol")
	ctx := t.Context()
	if err := runMigrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, _, err := st.Hello(ctx, "Alice", "alice", pircan.Profile{}, 30); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, bad := range [][]string{nil, {"verify"}, {"verify", "alice"}, {"verify", "alice", "--name", " "}, {"list"}} {
		if err := runOwner(ctx, bad, &out); err == nil {
			t.Fatalf("owner %v succeeded", bad)
		}
	}
	if a, _ := st.AgentByAccount(ctx, "alice"); a.Owner != nil {
		t.Fatalf("owner before verify: %+v", a.Owner)
	}
	if err := runOwner(ctx, []string{"verify", "ALICE", "--name", "Alice Liddell"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `verified as "Alice Liddell"`) {
		t.Fatalf("output: %s", out.String())
	}
	a, err := st.AgentByAccount(ctx, "alice")
	if err != nil || a.Owner == nil || *a.Owner != (pircan.Owner{Name: "Alice Liddell", Verification: "verified"}) {
		t.Fatalf("WHOAMI's owner: %+v %v", a.Owner, err)
	}
	// Again, with a new name: updated, audited twice, by the operator.
	if err := runOwner(ctx, []string{"verify", "alice", "--name", "A. Liddell"}, &out); err != nil {
		t.Fatal(err)
	}
	if a, _ := st.AgentByAccount(ctx, "alice"); a.Owner.Name != "A. Liddell" {
		t.Fatalf("renamed owner: %+v", a.Owner)
	}
	entries, err := st.AuditLatest(ctx, 2)
	if err != nil || len(entries) != 2 {
		t.Fatal(entries, err)
	}
	for _, e := range entries {
		var d map[string]any
		_ = json.Unmarshal(e.Details, &d)
		if e.Action != "owner.verify" || e.ActorAccount != "operator:carol" || d["verification"] != "verified" {
			t.Fatalf("audit: %+v %s", e, e.Details)
		}
	}
}
