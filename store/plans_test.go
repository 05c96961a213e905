package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// The lists with optional filters are never kept as prepared statements
// (whose generic plan would ignore which filter is given): they run unnamed,
// planned for their values on every call. The rest are prepared once per
// connection. One connection, so pg_prepared_statements sees them all.
func TestFilteredListsArePlannedPerCall(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, pgtest.Database(t)+"&pool_max_conns=1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	a, _, err := s.Hello(ctx, "planner", "planner", pircan.Profile{Capabilities: &[]string{"plans"}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	for range 7 { // past the 5 custom plans after which Postgres may go generic
		for _, q := range []pircan.FindQuery{{Capability: "plans", Limit: 5}, {Q: "plan", Limit: 5}, {Limit: 5}} {
			if _, _, err := s.FindAgents(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := s.Resources(ctx, pircan.ResourceQuery{Viewer: a.ID, Tag: "x", Limit: 5}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AgentByAccount(ctx, "planner"); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := s.Pool().Query(ctx, "SELECT statement FROM pg_prepared_statements", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	prepared, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var byAccount bool
	for _, sql := range prepared {
		if strings.Contains(sql, "capabilities_folded @>") || strings.Contains(sql, "tags_folded @>") {
			t.Errorf("a filtered list is a prepared statement (generic plans): %.80s", sql)
		}
		byAccount = byAccount || strings.Contains(sql, "b.account_folded = $1")
	}
	if !byAccount {
		t.Errorf("AgentByAccount is not prepared; prepared: %d statements", len(prepared))
	}
}
