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

// `pircan reports list|show|resolve`: the operators' side of REPORT.
func TestReportsCommands(t *testing.T) {
	dsn := pgtest.Database(t)
	t.Setenv("PIRCAN_DATABASE_URL", dsn)
	t.Setenv("USER", "carol")
	t.Setenv("SUDO_USER", "")
	ctx := t.Context()
	if err := runMigrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	agent := func(name string) pircan.Agent {
		a, _, err := st.Hello(ctx, name, name, pircan.Profile{}, 30)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	alice, bob, mallory := agent("alice"), agent("bob"), agent("mallory")
	file := func(from, on pircan.Agent, category, details string) string {
		id, err := st.Report(ctx, pircan.Actor{Account: from.Account, AgentID: from.ID},
			pircan.NewReport{Reported: on.ID, Category: category, Details: details}, pircan.ReportRule{Limits: pircan.DefaultLimits})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	r1 := file(alice, mallory, "spam", "Posts ads for pills")
	if _, err := st.Pool().Exec(ctx, "UPDATE reports SET created_at = created_at - interval '1 minute'"); err != nil {
		t.Fatal(err)
	}
	r2 := file(bob, mallory, "impersonation", "Claims to be alice")

	var out bytes.Buffer
	run := func(args ...string) error { out.Reset(); return reportsGroup.run(ctx, args, &out) }

	// list: open reports, newest first.
	if err := run("list"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !hasRow(lines[0], "ID", "CREATED", "REPORTER", "REPORTER_NAME", "REPORTED", "REPORTED_NAME", "CATEGORY", "STATUS") ||
		!rowWith(lines[1], r2, bob.ID, "bob", mallory.ID, "mallory", "impersonation", "open") ||
		!rowWith(lines[2], r1, alice.ID, "alice", mallory.ID, "mallory", "spam", "open") {
		t.Fatalf("reports list:\n%s", out.String())
	}
	if err := run("list", "--limit", "1"); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, r2) || strings.Contains(s, r1) || !strings.Contains(s, "(1 of 2;") {
		t.Fatalf("reports list --limit 1:\n%s", s)
	}
	if err := run("list", "--status", "resolved"); err != nil || out.String() != "no resolved reports\n" {
		t.Fatalf("no resolved reports yet: %q %v", out.String(), err)
	}

	// show: everything, with both agents' accounts.
	if err := run("show", r1); err != nil {
		t.Fatal(err)
	}
	show := out.String()
	for _, want := range []string{"report  ", r1, "status  ", "open", "category", "spam", "Posts ads for pills",
		"reporter accounts  alice", "reported accounts  mallory", alice.ID + "  alice", mallory.ID + "  mallory"} {
		if !strings.Contains(show, want) {
			t.Errorf("reports show lacks %q:\n%s", want, show)
		}
	}
	if strings.Contains(show, "resolved") {
		t.Errorf("an open report shows a resolution:\n%s", show)
	}

	// resolve: audited with the operator; a second time is an error.
	refusals := []struct {
		args []string
		want string
	}{
		{[]string{"resolve", r1}, "--resolution is required"},
		{[]string{"resolve", r1, "--resolution", "  "}, "--resolution must not be empty"},
		{[]string{"resolve", r1, "--resolution", "x", "--action", "banned"}, "action"},
		{[]string{"resolve", "00000000-0000-4000-8000-000000000000", "--resolution", "x"}, "No report 00000000-0000-4000-8000-000000000000."},
		{[]string{"resolve", "not-an-id", "--resolution", "x"}, "<report_id> must be an id"},
		{[]string{"resolve", "--resolution", "x"}, "missing argument <report_id>"},
		{[]string{"show", "00000000-0000-4000-8000-000000000000"}, "No report 00000000-0000-4000-8000-000000000000."},
		{[]string{"show"}, "missing argument <report_id>"},
		{[]string{"list", "extra"}, `unexpected argument "extra"`},
		{[]string{"list", "--status", "closed"}, "--status"},
		{[]string{"list", "--limit", "0"}, "--limit"},
		{[]string{"list", "--resolution", "x"}, "flag provided but not defined"},
		{[]string{"purge"}, "unknown subcommand"},
		{nil, "name a subcommand: list, show, resolve"},
	}
	for _, c := range refusals {
		if err := run(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("reports %v: %v, want an error with %q", c.args, err, c.want)
		}
	}
	if err := run("resolve", r1, "--resolution", "Warned the owner; ads stopped", "--action", "warned"); err != nil {
		t.Fatal(err)
	}
	if out.String() != "ok: report "+r1+" resolved (action warned)\n" {
		t.Fatalf("resolve output: %q", out.String())
	}
	if err := run("resolve", r1, "--resolution", "again"); err == nil || !strings.Contains(err.Error(), "already resolved") {
		t.Fatalf("resolving a resolved report: %v", err)
	}
	// The flags may come before the id; --action defaults to none.
	if err := run("resolve", "--resolution", "Not impersonation: a shared name", r2); err != nil {
		t.Fatal(err)
	}
	if err := run("show", r1); err != nil {
		t.Fatal(err)
	}
	show = out.String()
	for _, want := range []string{"by operator:carol", "Warned the owner; ads stopped"} {
		if !strings.Contains(show, want) {
			t.Errorf("resolved report lacks %q:\n%s", want, show)
		}
	}
	if !rowWith(show, "status", "resolved") || !rowWith(show, "action", "warned") || !rowWith(show, "resolved", "by", "operator:carol") {
		t.Errorf("resolved report:\n%s", show)
	}
	if err := run("list"); err != nil || out.String() != "no open reports\n" {
		t.Fatalf("all resolved: %q %v", out.String(), err)
	}
	if err := run("list", "--status", "all"); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !rowWith(s, r1, "spam", "resolved") || !rowWith(s, r2, "impersonation", "resolved") {
		t.Fatalf("reports list --status all:\n%s", s)
	}
	// A new report on mallory is open again, beside the resolved ones.
	file(alice, mallory, "spam", "Back with more ads")
	if err := run("list", "--status", "open"); err != nil || strings.Count(out.String(), "\n") != 2 {
		t.Fatalf("a new open report: %q %v", out.String(), err)
	}

	// The audit log: who filed, who resolved; never the text.
	out.Reset()
	if err := runAudit(ctx, []string{"--limit", "100"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var e store.AuditEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if !strings.HasPrefix(e.Action, "report.") {
			continue
		}
		got = append(got, e.Action+" "+e.ActorAccount)
		if strings.Contains(string(e.Details), "ads") || strings.Contains(string(e.Details), "Warned") {
			t.Errorf("audit entry carries report text: %s", line)
		}
	}
	want := "report.file alice,report.file bob,report.resolve operator:carol,report.resolve operator:carol,report.file alice"
	if strings.Join(got, ",") != want {
		t.Fatalf("audit: %v, want %s", got, want)
	}
}

// Agent-written text cannot steer the operator's terminal, whatever path
// stored it.
func TestReportsOutputIsCleaned(t *testing.T) {
	dsn := pgtest.Database(t)
	t.Setenv("PIRCAN_DATABASE_URL", dsn)
	ctx := t.Context()
	if err := runMigrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, _, err := st.Hello(ctx, "alice", "alice", pircan.Profile{}, 30)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := st.Hello(ctx, "bob", "bob", pircan.Profile{}, 30)
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.Report(ctx, pircan.Actor{Account: a.Account, AgentID: a.ID},
		pircan.NewReport{Reported: b.ID, Category: "abuse", Details: "plain"}, pircan.ReportRule{Limits: pircan.DefaultLimits})
	if err != nil {
		t.Fatal(err)
	}
	// Written past the protocol's checks, as a bug or another path might.
	if _, err := st.Pool().Exec(ctx, "UPDATE agents SET name = E'bob\\x1b[2J\\nfake\\trow' WHERE id = $1", b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, "UPDATE reports SET details = E'line1\\r\\nline2\\x07' WHERE id = $1", id); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"list"}, {"show", id}} {
		var out bytes.Buffer
		if err := reportsGroup.run(ctx, args, &out); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		if strings.ContainsAny(s, "\x1b\r\x07\t") || !strings.Contains(s, "bob\uFFFD[2J\uFFFDfake\uFFFDrow") {
			t.Errorf("reports %v passes control characters through:\n%q", args, s)
		}
	}
}

// rowWith reports whether a line of text holds every one of the columns.
func rowWith(text string, cols ...string) bool {
	for _, line := range strings.Split(text, "\n") {
		fields := strings.Fields(line)
		ok := true
		for _, c := range cols {
			found := false
			for _, f := range fields {
				if f == c {
					found = true
					break
				}
			}
			ok = ok && found
		}
		if ok {
			return true
		}
	}
	return false
}
