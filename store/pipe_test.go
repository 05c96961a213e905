package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/creatimus/pircan/store"
	"github.com/creatimus/pircan/store/db"
)

// A pipelined transaction's results come back to the steps that queued
// their statements, in order; a statement that fails, even in the batch
// sent with COMMIT, or a step that does not repeat its statements over the
// results of a batch before it, rolls the whole transaction back, and the
// pool goes on.
func TestPipe(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := context.Background()
	rights := func(account string) func(q *db.Queries) error {
		return func(q *db.Queries) error {
			return q.SetForumAccountRights(ctx, db.SetForumAccountRightsParams{AccountFolded: account, Account: account,
				Rights: []string{"write"}})
		}
	}
	stored := func(account string) bool {
		t.Helper()
		r, err := s.ForumAccountRights(ctx, account)
		if err != nil {
			t.Fatal(err)
		}
		return r != nil
	}

	// Three ids from one sequence: each step gets its own, in queue order.
	var ids [3]int64
	next := func(i int) func(q *db.Queries) error {
		return func(q *db.Queries) (err error) { ids[i], err = q.NextForumMessageID(ctx); return err }
	}
	if err := s.PipeSteps(ctx, true, next(0), rights("kept"), next(1), next(2)); err != nil {
		t.Fatal(err)
	}
	if ids[0] == 0 || ids[1] != ids[0]+1 || ids[2] != ids[1]+1 || !stored("kept") {
		t.Fatalf("ids %v, rights stored %v", ids, stored("kept"))
	}

	// A failing statement (a foreign key) after a write, with the commit:
	// neither is stored.
	err := s.PipeSteps(ctx, true, rights("lost1"), func(q *db.Queries) error {
		return q.InsertForumEvent(ctx, db.InsertForumEventParams{ThreadID: -1, Type: "state", Origin: "llm", ByIdentity: "x"})
	})
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23503" || stored("lost1") {
		t.Fatalf("a failing statement: %v; the write before it stored: %v", err, stored("lost1"))
	}

	// A step whose statements differ between recording and results.
	recorded := false
	err = s.PipeSteps(ctx, false, rights("lost2"), func(q *db.Queries) error {
		if !recorded {
			recorded = true
			return q.LockForumLine(ctx, "x")
		}
		return nil
	})
	if !errors.Is(err, store.ErrPipeOrder) || stored("lost2") {
		t.Fatalf("a step that changed its statements: %v; the write before it stored: %v", err, stored("lost2"))
	}

	if err := s.PipeSteps(ctx, true, rights("after")); err != nil || !stored("after") {
		t.Fatalf("after the failures: %v", err)
	}
}
