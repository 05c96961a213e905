package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// A turn drawn lower cannot commit after a reader was handed a higher one
// as its cursor (the inbox would skip it for good): bob's message on
// thread x draws its turn for alice and then waits on its board-shard
// counter row, held by another transaction; carol's on thread y (another
// shard) gives alice a turn meanwhile; alice reads her inbox and
// acknowledges its cursor; then bob's commits. Alice's next inbox without
// since lists x.
func TestForumInboxCursorLateCommit(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := context.Background()
	ask := func(account string, thread int64) (pircan.ForumPost, error) {
		actor := pircan.ForumActor{Line: pircan.Line{Account: account}, Identity: "pircan:" + account}
		return s.PostForumMessage(ctx, actor, pircan.NewForumMessage{Board: 1, Thread: thread, Kind: "ask", Body: "x",
			RelatesTo: []string{}, Provenance: map[string]string{}}, pircan.DefaultLimits, awaitAlice)
	}
	alice := pircan.ForumActor{Line: pircan.Line{Account: "alice"}, Identity: "pircan:alice"}
	// inbox reads alice's inbox from her acknowledged cursor and
	// acknowledges the cursor get_inbox gives (the newest turn listed).
	inbox := func() []int64 {
		t.Helper()
		since, err := s.ForumInboxCursor(ctx, "alice", "")
		if err != nil {
			t.Fatal(err)
		}
		list, _, err := s.ForumInbox(ctx, pircan.InboxQuery{Account: "alice", Since: since, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, th := range list {
			ids = append(ids, th.ID)
		}
		if len(list) > 0 {
			if err := s.AckForumInbox(ctx, alice, "", list[0].TurnSeq); err != nil {
				t.Fatal(err)
			}
		}
		return ids
	}
	x, err := ask("bob", 0)
	if err != nil {
		t.Fatal(err)
	}
	y, err := ask("carol", 0)
	if err != nil {
		t.Fatal(err)
	}
	if x.Thread.ID%16 == y.Thread.ID%16 {
		t.Fatalf("threads %d and %d share a board shard", x.Thread.ID, y.Thread.ID)
	}
	if got := inbox(); len(got) != 2 {
		t.Fatalf("alice's inbox: %v, want both threads", got)
	}

	hold, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hold.Rollback(context.Background()) }()
	if _, err := hold.Exec(ctx, "SELECT 1 FROM forum_board_counts WHERE board_id = 1 AND shard = $1 FOR UPDATE",
		int16(x.Thread.ID%16)); err != nil {
		t.Fatal(err)
	}
	late, early := make(chan error, 1), make(chan error, 1)
	go func() { _, err := ask("bob", x.Thread.ID); late <- err }()
	// waiting: at least n of the store's transactions wait on a lock.
	waiting := func(n int) bool {
		t.Helper()
		return countRows(t, s, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock'`) >= n
	}
	// bob's message has drawn its turn once it waits on the counter row
	// (UpdateForumThreadTurn comes before ForumBoardMessageCounted).
	awaitState(t, func() bool { return waiting(1) }, late, "bob's message waiting on the counter row")
	go func() { _, err := ask("carol", y.Thread.ID); early <- err }()
	carolDone := false
	awaitState(t, func() bool {
		select {
		case err := <-early:
			if err != nil {
				t.Fatal(err)
			}
			carolDone = true
			return true
		default:
			return waiting(2)
		}
	}, late, "carol's message committed or waiting")
	first := inbox() // between the two commits
	if err := hold.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-late; err != nil {
		t.Fatal(err)
	}
	if !carolDone {
		if err := <-early; err != nil {
			t.Fatal(err)
		}
	}
	second := inbox()
	if !slices.Contains(append(first, second...), x.Thread.ID) || !slices.Contains(append(first, second...), y.Thread.ID) {
		t.Fatalf("alice's inbox listed %v, then %v: want threads %d and %d among them", first, second, x.Thread.ID, y.Thread.ID)
	}
}

// awaitState polls cond (a state of the database, not a time) until it
// holds; a message sent on failed first fails the test.
func awaitState(t *testing.T, cond func() bool, failed chan error, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		select {
		case err := <-failed:
			t.Fatalf("%s: the held message ended first: %v", what, err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 10 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
