package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/store"
	"github.com/creatimus/pircan/store/db"
)

// A pipelined write that ends between or in its batches (a refusal after
// the first, its context cancelled between them, its deadline passed while
// the first waits on a lock, a statement failing in the last) stores
// nothing, leaves no transaction open, and the pool's one connection serves
// the next write.
func TestPipeLeavesTheConnectionClean(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	s, err := store.Open(ctx, dsn+"&pool_max_conns=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	other, err := store.Open(ctx, dsn+"&pool_max_conns=2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	rights := func(account string) func(q *db.Queries) error {
		return func(q *db.Queries) error {
			return q.SetForumAccountRights(context.Background(), db.SetForumAccountRightsParams{AccountFolded: account,
				Account: account, Rights: []string{"write"}})
		}
	}
	count := func(sql string, args ...any) int {
		t.Helper()
		var n int
		if err := other.Pool().QueryRow(ctx, sql, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	stored := func(account string) bool {
		return count("SELECT count(*) FROM forum_rights WHERE account_folded = $1", account) > 0
	}
	lock := func(q *db.Queries) error { return q.LockForumLine(context.Background(), "held") }
	none := func() error { return nil }
	refused := errors.New("refused")
	cctx, cancel := context.WithCancel(ctx)

	// The line's lock, held elsewhere for the deadline's case.
	holder, err := other.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('forum:' || 'held', 0))"); err != nil {
		t.Fatal(err)
	}
	var pe *pgconn.PgError
	for _, c := range []struct {
		name  string
		run   func() error
		check func(error) bool
	}{
		{"refused after the first batch", func() error {
			return s.PipeTwoBatches(ctx, rights("refused after the first batch"), func() error { return refused }, rights("x"))
		}, func(err error) bool { return errors.Is(err, refused) }},
		{"cancelled between the batches", func() error {
			return s.PipeTwoBatches(cctx, rights("cancelled between the batches"), func() error { cancel(); return nil },
				rights("cancelled, its last batch"))
		}, func(err error) bool { return errors.Is(err, context.Canceled) }},
		{"past its deadline on a lock", func() error {
			dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			return s.PipeTwoBatches(dctx, rights("past its deadline on a lock"), none, lock)
		}, store.IsTimeout},
		{"failing in the last batch", func() error {
			return s.PipeTwoBatches(ctx, rights("failing in the last batch"), none, func(q *db.Queries) error {
				return q.InsertForumEvent(context.Background(), db.InsertForumEventParams{ThreadID: -1, Type: "state", Origin: "llm", ByIdentity: "x"})
			})
		}, func(err error) bool { return errors.As(err, &pe) && pe.Code == "23503" }},
	} {
		if err := c.run(); !c.check(err) {
			t.Errorf("%s: %v", c.name, err)
		}
		if stored(c.name) || stored("cancelled, its last batch") {
			t.Errorf("%s: its write was stored", c.name)
		}
		if err := s.PipeSteps(ctx, true, rights("after: "+c.name)); err != nil || !stored("after: "+c.name) {
			t.Fatalf("after %s, the next write: %v", c.name, err)
		}
	}
	_ = holder.Rollback(ctx)
	if n := count(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`); n != 0 {
		t.Errorf("%d transactions left open", n)
	}
}
