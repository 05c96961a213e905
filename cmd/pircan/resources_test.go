package main

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// The operators' side of the library: list and show what agents
// published, remove one (audited, the publisher told, content-free).
func TestResourcesCommands(t *testing.T) {
	dsn := pgtest.Database(t)
	t.Setenv("PIRCAN_DATABASE_URL", dsn)
	t.Setenv("SUDO_USER", "")
	t.Setenv("USER", "dana")
	ctx := t.Context()
	if code, out, errOut := cli(t, "migrate"); code != 0 {
		t.Fatalf("migrate: %d %s %s", code, out, errOut)
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := pircan.NewService(st, pircan.Config{Limits: pircan.DefaultLimits}, zerolog.Nop())
	c, err := svc.Caller(ctx, pircan.FaceMCP, "publisher", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Hello(ctx, c, pircan.HelloArgs{}); err != nil {
		t.Fatal(err)
	}
	if c, err = svc.Caller(ctx, pircan.FaceMCP, "publisher", ""); err != nil {
		t.Fatal(err)
	}
	title, content := "Sample\x1b[31m data", "line one\n\tline two \x1b[2J"
	r, err := svc.PublishResource(ctx, c, pircan.PublishResourceArgs{Title: &title, Content: &content})
	if err == nil {
		t.Fatalf("a title with an escape sequence was published: %+v", r)
	}
	title, content = "Sample data", "line one\n\tline two"
	if r, err = svc.PublishResource(ctx, c, pircan.PublishResourceArgs{Title: &title, Content: &content}); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := cli(t, "resources", "list")
	if code != 0 || errOut != "" || !strings.Contains(out, r.ID) || !strings.Contains(out, "Sample data") || !strings.Contains(out, c.Agent.ID) {
		t.Fatalf("list: %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := cli(t, "resources", "list", "--by", "00000000-0000-4000-8000-000000000000"); code != 0 || !strings.Contains(out, "no resources") {
		t.Fatalf("list --by another agent: %d\n%s", code, out)
	}
	code, out, errOut = cli(t, "resources", "show", r.ID)
	if code != 0 || errOut != "" || !strings.Contains(out, "line one\n\tline two") || !strings.Contains(out, "size        18 bytes") {
		t.Fatalf("show: %d\n%s\n%s", code, out, errOut)
	}
	for _, args := range [][]string{{"resources", "show", "nope"}, {"resources", "remove"}, {"resources", "list", "--by", "x"}} {
		if code, _, _ := cli(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)", args, code)
		}
	}

	code, out, errOut = cli(t, "resources", "remove", r.ID, "--reason", "copyright")
	if code != 0 || !strings.Contains(out, "removed") {
		t.Fatalf("remove: %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "resources", "remove", r.ID); code != 1 || !strings.Contains(errOut, "No such resource") {
		t.Fatalf("second remove: %d %s", code, errOut)
	}
	notes, err := st.ClaimNotices(ctx, c.Agent.ID)
	if err != nil || len(notes) != 1 || notes[0].Type != pircan.NotifyResourceUpdate {
		t.Fatalf("the publisher is not told: %+v %v", notes, err)
	}
	entries, err := st.AuditLatest(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		if e.Action == "resource.removed" {
			found = strings.Contains(e.ActorAccount, "dana") && strings.Contains(string(e.Details), "copyright") &&
				!strings.Contains(string(e.Details), "line one") && !strings.Contains(string(e.Details), "Sample")
		}
	}
	if !found {
		t.Fatalf("no resource.removed audit row by dana with the reason and without content: %+v", entries)
	}
}
