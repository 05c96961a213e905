package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// TestFindCappedTotalAndPages checks FindAgents' one statement on both sides
// of the cap: the total counted up to MaxFindTotal+1, the page in
// registration order whichever branch fetched it, and the total of an empty
// page past the matches.
func TestFindCappedTotalAndPages(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	s, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	// MaxFindTotal+2 agents with "bulk" (three also "few"), registered one
	// second apart; their ids are random, so an id order would not pass for
	// the registration order.
	many := pircan.MaxFindTotal + 2
	_, err = pool.Exec(ctx, `INSERT INTO agents (name, description, capabilities, capabilities_folded, created_at)
		SELECT 'agent ' || i, CASE WHEN i % 2 = 0 THEN 'even chemical' ELSE 'odd' END,
		       CASE WHEN i IN (7, 500, 1001) THEN ARRAY['Bulk', 'Few'] ELSE ARRAY['Bulk'] END,
		       CASE WHEN i IN (7, 500, 1001) THEN ARRAY['bulk', 'few'] ELSE ARRAY['bulk'] END,
		       timestamptz '2026-01-01' + i * interval '1 second'
		FROM generate_series(1, $1::int) AS i`, many)
	if err != nil {
		t.Fatal(err)
	}
	names := func(agents []pircan.Agent) []string {
		var out []string
		for _, a := range agents {
			out = append(out, a.Name)
		}
		return out
	}
	for _, c := range []struct {
		name  string
		q     pircan.FindQuery
		total int
		want  []string
	}{
		{"many: capped", pircan.FindQuery{Capability: "BULK", Limit: 3},
			pircan.MaxFindTotal + 1, []string{"agent 1", "agent 2", "agent 3"}},
		{"many: a later page", pircan.FindQuery{Capability: "bulk", Limit: 2, Offset: 1000},
			pircan.MaxFindTotal + 1, []string{"agent 1001", "agent 1002"}},
		{"many: past the end", pircan.FindQuery{Capability: "bulk", Limit: 5, Offset: 2000},
			pircan.MaxFindTotal + 1, nil},
		{"few: 501 matches, a later page", pircan.FindQuery{Q: "odd", Limit: 1, Offset: 500},
			(many + 1) / 2, []string{"agent 1001"}},
		{"few", pircan.FindQuery{Capability: "few", Limit: 2},
			3, []string{"agent 7", "agent 500"}},
		{"few: q and capability", pircan.FindQuery{Q: "chemical", Capability: "few", Limit: 5},
			1, []string{"agent 500"}},
		{"few: past the end", pircan.FindQuery{Capability: "few", Limit: 2, Offset: 3},
			3, nil},
		{"none", pircan.FindQuery{Capability: "none", Limit: 5}, 0, nil},
	} {
		got, total, err := s.FindAgents(ctx, c.q)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if g := names(got); total != c.total || len(g) != len(c.want) {
			t.Errorf("%s: total %d, %v; want %d, %v", c.name, total, g, c.total, c.want)
		} else {
			for i := range g {
				if g[i] != c.want[i] {
					t.Errorf("%s: %v, want %v", c.name, g, c.want)
					break
				}
			}
		}
	}
}

// FIND by a capability alone reads agent_capabilities (schema 00014),
// which follows every change of an agent's capabilities: pages in
// registration order, folded case, one row however often an agent names it.
func TestFindByCapabilityFollowsChanges(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	hello := func(account string, caps ...string) pircan.Agent {
		t.Helper()
		a, _, err := s.Hello(ctx, account, account, pircan.Profile{Capabilities: &caps}, 100)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	find := func(capability string, limit, offset int) ([]string, int) {
		t.Helper()
		found, total, err := s.FindAgents(ctx, pircan.FindQuery{Capability: capability, Limit: limit, Offset: offset})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, a := range found {
			names = append(names, a.Name)
		}
		return names, total
	}
	hello("first", "Chem", "chem", "CHEM")
	hello("second", "chem", "bio")
	hello("third", "bio")
	if got, total := find("CHEM", 10, 0); !slices.Equal(got, []string{"first", "second"}) || total != 2 {
		t.Fatalf("chem: %v total %d", got, total)
	}
	if got, total := find("chem", 1, 1); !slices.Equal(got, []string{"second"}) || total != 2 {
		t.Fatalf("chem, second page: %v total %d", got, total)
	}
	if got, total := find("chem", 5, 10); len(got) != 0 || total != 2 {
		t.Fatalf("chem past its last page: %v total %d", got, total)
	}
	hello("first", "bio") // drops chem, takes bio
	if got, total := find("chem", 10, 0); !slices.Equal(got, []string{"second"}) || total != 1 {
		t.Fatalf("chem after first dropped it: %v total %d", got, total)
	}
	if got, _ := find("bio", 10, 0); !slices.Equal(got, []string{"first", "second", "third"}) {
		t.Fatalf("bio in registration order: %v", got)
	}
	hello("second") // no capabilities at all
	if got, total := find("bio", 10, 0); !slices.Equal(got, []string{"first", "third"}) || total != 2 {
		t.Fatalf("bio after second cleared its list: %v total %d", got, total)
	}
	if got, total := find("nobody", 10, 0); len(got) != 0 || total != 0 {
		t.Fatalf("an unused capability: %v total %d", got, total)
	}
}
