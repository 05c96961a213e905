package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// FIND by a text counts its total by a first look, a walk or the index
// (store/find.go), whichever is cheaper for that text. Whichever way it
// takes, the total and every page must be what one plain query says: the
// matches counted up to MaxFindTotal+1, the page in registration order.
// The directory is built so that each way is taken, and the test says
// which one each filter took.
func TestFindTextCountsAgreeEachWay(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	pool := s.Pool()
	// A first look at 100 agents, a walk of at most 1,500: a text is walked
	// when 67 of the 100 match; a capability of up to 500 holders is walked
	// whole.
	store.SetFindThresholds(t, 100, 1500, 500)
	// 3,000 agents, one second apart, in one insert: the table lies in
	// registration order, so "the first look" is at agents 1–100.
	_, err := pool.Exec(ctx, `INSERT INTO agents (name, description, capabilities, capabilities_folded, created_at)
		SELECT 'agent ' || i,
		       concat_ws(' ',
		           CASE WHEN i % 5 <> 0 THEN 'most' END,   -- everywhere: 2,400
		           CASE WHEN i % 2 = 0 THEN 'alpha' END,   -- 1,500
		           CASE WHEN i <= 600 THEN 'early' END,    -- only at first: 600
		           CASE WHEN i > 1500 THEN 'late' END,     -- only later: 1,500
		           CASE WHEN i IN (10, 2000, 2999) THEN 'rare' END,
		           CASE WHEN i = 7 THEN '50% off' ELSE '50 off' END),
		       c, c,
		       timestamptz '2026-01-01' + i * interval '1 second'
		FROM generate_series(1, 3000) AS i,
		     LATERAL (SELECT array_remove(ARRAY['wide',
		                  CASE WHEN i <= 400 THEN 'narrow' END,
		                  CASE WHEN i % 60 = 0 THEN 'tiny' END], NULL) AS c) AS caps`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "ANALYZE agents, agent_capabilities"); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		q, capability string
		way           string // how the total is counted
	}{
		{"most", "", "walk"},   // common in the first look, and it goes on
		{"alpha", "", "index"}, // too rare in the first look to walk for
		{"early", "", "index"}, // common in the first look, not after: the walk falls short
		{"late", "", "index"},  // absent from the first look
		{"rare", "", "index"},
		{"50%", "", "index"}, // % matches itself
		{"al", "", "index"},  // no trigram: the index cannot narrow it, the planner walks
		{"MOST", "wide", "walk"},
		{"late", "wide", "index"},
		{"early", "WIDE", "index"},
		{"nothing", "wide", "index"},
		{"alpha", "narrow", "walk"}, // 400 holders: walked whole
		{"late", "narrow", "walk"},
		{"al", "narrow", "walk"},
		{"al", "wide", "walk"},      // a short text: walked whole, past the 1,500
		{"alpha", "tiny", "sample"}, // 50 holders: the first look saw them all
	} {
		t.Run(c.q+"+"+c.capability, func(t *testing.T) {
			want := oracleFind(t, pool, c.q, c.capability)
			before := s.FindCountStats()
			for _, page := range [][2]int{{3, 0}, {3, 2}, {5, 598}, {2, 999}, {4, 1499}, {10, 3000}} {
				got, total, err := s.FindAgents(ctx, pircan.FindQuery{Q: c.q, Capability: c.capability, Limit: page[0], Offset: page[1]})
				if err != nil {
					t.Fatal(err)
				}
				if wantTotal := min(len(want), pircan.MaxFindTotal+1); total != wantTotal {
					t.Errorf("limit %d offset %d: total %d, want %d", page[0], page[1], total, wantTotal)
				}
				end := min(page[1]+page[0], len(want))
				var wantPage []string
				if page[1] < len(want) {
					wantPage = want[page[1]:end]
				}
				var names []string
				for _, a := range got {
					names = append(names, a.Name)
				}
				if !slices.Equal(names, wantPage) {
					t.Errorf("limit %d offset %d: %v, want %v", page[0], page[1], names, wantPage)
				}
			}
			after := s.FindCountStats()
			ways := map[string]uint64{"sample": after.Sample - before.Sample, "walk": after.Walk - before.Walk,
				"index": after.Index - before.Index}
			if ways[c.way] != 6 {
				t.Errorf("counted %v, want all 6 by %s", ways, c.way)
			}
		})
	}
}

// oracleFind is every agent FIND by q and capability matches, in
// registration order, by one plain query.
func oracleFind(t *testing.T, pool interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, q, capability string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT name FROM agents
		WHERE strpos(lower(name || ' ' || description), lower($1)) > 0
		  AND ($2 = '' OR lower($2) = ANY (capabilities_folded))
		ORDER BY created_at, id`, q, capability)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// agent_capabilities holds one row per agent and capability, with the
// agent's search text, through every change: registration, a new profile,
// capabilities dropped and taken, and the agent's deletion.
func TestAgentCapabilitiesFollowEveryChange(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	pool := s.Pool()
	check := func(when string) {
		t.Helper()
		var wrong int
		// Both directions: every (capability, agent) of agents has its row
		// with the same text and registration time, and no other row exists.
		err := pool.QueryRow(ctx, `SELECT count(*) FROM (
			(SELECT DISTINCT c, a.created_at, a.id, a.search FROM agents a, unnest(a.capabilities_folded) AS c
			 EXCEPT SELECT capability, created_at, agent_id, search FROM agent_capabilities)
			UNION ALL
			(SELECT capability, created_at, agent_id, search FROM agent_capabilities
			 EXCEPT SELECT DISTINCT c, a.created_at, a.id, a.search FROM agents a, unnest(a.capabilities_folded) AS c)) AS d`).Scan(&wrong)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM agent_capabilities").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if wrong != 0 {
			t.Fatalf("%s: %d rows of agent_capabilities differ from agents (%d rows)", when, wrong, n)
		}
	}
	hello := func(account string, p pircan.Profile) {
		t.Helper()
		if _, _, err := s.Hello(ctx, account, account, p, 100); err != nil {
			t.Fatal(err)
		}
	}
	caps := func(c ...string) *[]string { return &c }
	for i := range 3 {
		hello(fmt.Sprintf("agent%d", i), pircan.Profile{Description: strp("chemical safety"), Capabilities: caps("Hazmat", "chem", "CHEM")})
	}
	check("registered")
	hello("agent0", pircan.Profile{Description: strp("maps and charts")})
	check("a new description")
	hello("agent1", pircan.Profile{Name: strp("Renamed"), Capabilities: caps("chem", "bio")})
	check("a new name, hazmat dropped, bio taken")
	hello("agent2", pircan.Profile{Capabilities: caps()})
	check("every capability dropped")
	hello("agent2", pircan.Profile{Capabilities: caps("hazmat")})
	check("one taken again")
	if _, err := pool.Exec(ctx, "DELETE FROM agents WHERE name = 'agent0'"); err != nil {
		t.Fatal(err)
	}
	check("an agent deleted")

	found, total, err := s.FindAgents(ctx, pircan.FindQuery{Q: "maps", Capability: "hazmat", Limit: 5})
	if err != nil || total != 0 || len(found) != 0 {
		t.Fatalf("the deleted agent's text is still found: %v total %d %v", found, total, err)
	}
	found, total, err = s.FindAgents(ctx, pircan.FindQuery{Q: "renamed chemical", Capability: "bio", Limit: 5})
	if err != nil || total != 1 || len(found) != 1 {
		t.Fatalf("the renamed agent by its new name and a new capability: %v total %d %v", found, total, err)
	}
}
