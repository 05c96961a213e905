package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// openStore opens a fresh, migrated database of the test's own: the tests
// that use it share nothing, so they run in parallel (t.Parallel), which
// makes the package's many migrations overlap instead of queueing.
func openStore(t testing.TB) *store.Store {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func strp(s string) *string { return &s }

func TestHelloRegistersOnceAndUpdates(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := context.Background()
	a, created, err := s.Hello(ctx, "Alice", "alice", pircan.Profile{Capabilities: &[]string{"Hazmat", "chem"}}, 30)
	if err != nil || !created {
		t.Fatalf("first hello: %v created=%v", err, created)
	}
	if a.Name != "alice" {
		t.Errorf("name defaults to the nick: got %q", a.Name)
	}
	b, created, err := s.Hello(ctx, "alice", "alice2", pircan.Profile{Description: strp("chemical release")}, 30)
	if err != nil || created || b.ID != a.ID {
		t.Fatalf("second hello (account case-folded): %v created=%v id %s vs %s", err, created, b.ID, a.ID)
	}
	got, err := s.AgentByAccount(ctx, "ALICE")
	if err != nil || got.Description != "chemical release" || got.Nick != "alice2" || len(got.Capabilities) != 2 {
		t.Fatalf("after update: %+v %v", got, err)
	}
	found, total, err := s.FindAgents(ctx, pircan.FindQuery{Capability: "HAZMAT", Limit: 5})
	if err != nil || total != 1 || found[0].ID != a.ID {
		t.Fatalf("find by capability: %v %d %v", found, total, err)
	}
	found, total, err = s.FindAgents(ctx, pircan.FindQuery{Q: "CAL REL", Limit: 5})
	if err != nil || total != 1 {
		t.Fatalf("find by text: %v %d %v", found, total, err)
	}
	if _, total, _ = s.FindAgents(ctx, pircan.FindQuery{Q: "%", Limit: 5}); total != 0 {
		t.Fatalf("%% must match itself only, got %d", total)
	}
	entries, err := s.AuditLatest(ctx, 10)
	if err != nil || len(entries) != 2 || entries[0].Action != "agent.register" || entries[1].Action != "agent.update" {
		t.Fatalf("audit: %+v %v", entries, err)
	}
}

func TestRegistrationLimitHoldsUnderRace(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, paused := 0, 0
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, c, err := s.Hello(ctx, "acct"+string(rune('a'+i)), "n", pircan.Profile{}, 5)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, pircan.ErrRegistrationPaused):
				paused++
			case err != nil:
				t.Error(err)
			case c:
				created++
			}
		}(i)
	}
	wg.Wait()
	if created != 5 || paused != 7 {
		t.Fatalf("created %d paused %d, want 5 and 7", created, paused)
	}
}

func TestAuditLogIsAppendOnly(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := context.Background()
	if _, _, err := s.Hello(ctx, "bob", "bob", pircan.Profile{}, 30); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{"UPDATE audit_log SET action = 'x'", "DELETE FROM audit_log", "TRUNCATE audit_log"} {
		if _, err := s.Pool().Exec(ctx, stmt); err == nil {
			t.Errorf("%s: succeeded on an append-only table", stmt)
		}
	}
}

func TestChannelsPrivacy(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := context.Background()
	a, _, _ := s.Hello(ctx, "alice", "alice", pircan.Profile{}, 30)
	b, _, _ := s.Hello(ctx, "bob", "bob", pircan.Profile{}, 30)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.AddChannel(ctx, pircan.Actor{Account: "op"}, "#Public", false, "open"))
	must(s.AddChannel(ctx, pircan.Actor{Account: "op"}, "#secret", true, "hidden"))
	if err := s.AddChannel(ctx, pircan.Actor{Account: "op"}, "#PUBLIC", false, ""); !errors.Is(err, pircan.ErrConflict) {
		t.Fatalf("duplicate channel (case-folded): %v", err)
	}
	must(s.InviteToChannel(ctx, pircan.Actor{Account: "op"}, "#secret", a.ID))
	list, total, err := s.Channels(ctx, b.ID, "", 10, 0)
	if err != nil || total != 1 || list[0].Name != "#Public" {
		t.Fatalf("bob sees %v (%d) %v", list, total, err)
	}
	if _, total, _ = s.Channels(ctx, a.ID, "", 10, 0); total != 2 {
		t.Fatalf("alice sees %d channels, want 2", total)
	}
	if _, err := s.JoinChannel(ctx, b.ID, "#secret"); !errors.Is(err, pircan.ErrNotFound) {
		t.Fatalf("bob joins #secret: %v", err)
	}
	ch, err := s.JoinChannel(ctx, a.ID, "#SECRET")
	if err != nil || !ch.Private || ch.Members != 1 {
		t.Fatalf("alice joins #secret: %+v %v", ch, err)
	}
	if _, total, _ = s.Channels(ctx, b.ID, "", 10, 5); total != 1 {
		t.Fatalf("past the end the total is still known, got %d", total)
	}
}
