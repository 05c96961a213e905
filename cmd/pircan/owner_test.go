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
	for _, bad := range [][]string{nil, {"verify"}, {"verify", "alice"}, {"verify", "alice", "--name", " "}, {"list"},
		{"verify", "nosuchaccount", "--name", "X"}} {
		if err := ownerGroup.run(ctx, bad, &out); err == nil {
			t.Fatalf("owner %v succeeded", bad)
		}
	}
	if err := ownerGroup.run(ctx, []string{"verify", "nosuchaccount", "--name", "X"}, &out); err == nil ||
		!strings.Contains(err.Error(), "never seen account nosuchaccount") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("an unknown account: %v", err)
	}
	if o, err := st.Owner(ctx, "nosuchaccount"); err != nil || o != nil {
		t.Fatalf("an unknown account was verified: %+v %v", o, err)
	}
	if a, _ := st.AgentByAccount(ctx, "alice"); a.Owner != nil {
		t.Fatalf("owner before verify: %+v", a.Owner)
	}
	if err := ownerGroup.run(ctx, []string{"verify", "ALICE", "--name", "Alice Liddell"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `verified as "Alice Liddell"`) {
		t.Fatalf("output: %s", out.String())
	}
	a, err := st.AgentByAccount(ctx, "alice")
	if err != nil || a.Owner == nil || a.Owner.Name != "Alice Liddell" || a.Owner.Verification != "verified" || !strings.EqualFold(a.Owner.Account, "alice") {
		t.Fatalf("WHOAMI's owner: %+v %v", a.Owner, err)
	}
	// Again, with a new name: updated, audited twice, by the operator.
	if err := ownerGroup.run(ctx, []string{"verify", "alice", "--name", "A. Liddell"}, &out); err != nil {
		t.Fatal(err)
	}
	if a, _ := st.AgentByAccount(ctx, "alice"); a.Owner.Name != "A. Liddell" {
		t.Fatalf("renamed owner: %+v", a.Owner)
	}
	// An account PIRCAN has never seen only with --force; one an agent
	// named as its owner is known.
	if err := ownerGroup.run(ctx, []string{"verify", "nosuchaccount", "--name", "X", "--force"}, &out); err != nil {
		t.Fatal(err)
	}
	bob, _, err := st.Hello(ctx, "bob", "bob", pircan.Profile{}, 30)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.NameOwner(ctx, pircan.Actor{Account: "bob", AgentID: bob.ID}, "carol"); err != nil {
		t.Fatal(err)
	}
	if err := ownerGroup.run(ctx, []string{"verify", "carol", "--name", "Carol"}, &out); err != nil {
		t.Fatalf("a named owner: %v", err)
	}
	if err := ownerGroup.run(ctx, []string{"clear", bob.ID}, &out); err != nil || !strings.Contains(out.String(), "no longer bound to owner carol (was pending)") {
		t.Fatalf("owner clear: %v %s", err, out.String())
	}
	if err := ownerGroup.run(ctx, []string{"clear", bob.ID}, &out); err == nil {
		t.Fatal("clearing no binding succeeded")
	}
	entries, err := st.AuditLatest(ctx, 5)
	if err != nil || len(entries) != 5 {
		t.Fatal(entries, err)
	}
	if entries[4].Action != "owner.cleared" || !strings.Contains(string(entries[4].Details), `"by": "operator"`) || entries[4].ActorAccount != "operator:carol" {
		t.Fatalf("owner clear's audit: %+v %s", entries[4], entries[4].Details)
	}
	for _, e := range entries[:1] {
		var d map[string]any
		_ = json.Unmarshal(e.Details, &d)
		if e.Action != "owner.verify" || e.ActorAccount != "operator:carol" || d["verification"] != "verified" {
			t.Fatalf("audit: %+v %s", e, e.Details)
		}
	}
}
