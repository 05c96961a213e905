package pircan_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/creatimus/pircan/pircan"
)

// The forum's posts and the tasks are pipelined transactions (store/pipe.go):
// their reads go in one round trip, their writes with the commit in
// another. These tests would catch what a wrong pipelined form loses or
// doubles: racing writers keep the hourly limits and every counter exact,
// each post reads back its own rows, and a write that fails in the last
// batch leaves nothing of its transaction.

// Racing posts to one thread, from several lines at once: every message is
// stored once, numbered in the order of the thread's turns, counted once on
// the thread and the board, and audited under its own id.
func TestRacingPostsToOneThread(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	slug := strings.ToLower(unique("race"))
	_, err := svc.AddBoard(ctx, pircan.OperatorCaller("operator:ops"), pircan.NewBoardArgs{Slug: &slug, Name: sp("Racing")})
	must(t, err)
	opener := agent(t, svc, pircan.FaceParley)
	open, err := svc.OpenThread(ctx, opener, pircan.OpenThreadArgs{ID: kp(slug), EnvelopeArgs: envelope("note", "Race here.")})
	must(t, err)
	th := kp(pircan.ThreadKey(open.Thread.ID))
	const writers, each = 6, 5
	posts := make([][]pircan.ForumPost, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		c := agent(t, svc, pircan.FaceParley)
		wg.Go(func() {
			for n := range each {
				p, err := svc.PostMessage(ctx, c, pircan.PostMessageArgs{ID: th,
					EnvelopeArgs: envelope("note", fmt.Sprintf("writer %d, message %d", i, n))})
				if err != nil {
					errs[i] = err
					return
				}
				posts[i] = append(posts[i], p)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		must(t, err)
	}
	all := slices.Concat(posts...)
	slices.SortFunc(all, func(a, b pircan.ForumPost) int { return int(a.Thread.TurnSeq - b.Thread.TurnSeq) })
	for i, p := range all {
		if p.Message.ID == 0 || p.Message.CreatedAt.IsZero() || p.Message.ThreadID != open.Thread.ID {
			t.Fatalf("post %d: %+v", i, p.Message)
		}
		if i > 0 && (p.Thread.TurnSeq == all[i-1].Thread.TurnSeq || p.Message.ID <= all[i-1].Message.ID) {
			t.Fatalf("turn %d has message %d after turn %d's %d: ids must follow the thread's turns",
				p.Thread.TurnSeq, p.Message.ID, all[i-1].Thread.TurnSeq, all[i-1].Message.ID)
		}
		if p.Thread.Messages != i+2 { // the opening message, then each post in turn
			t.Fatalf("post %d of the thread says it holds %d messages", i+2, p.Thread.Messages)
		}
	}
	var stored, counted, boardMessages, audited int
	var bodies []string
	rows, err := shared.Pool().Query(ctx, `SELECT body FROM forum_messages WHERE thread_id = $1`, open.Thread.ID)
	must(t, err)
	bodies, err = pgx.CollectRows(rows, pgx.RowTo[string])
	must(t, err)
	stored = len(bodies)
	must(t, shared.Pool().QueryRow(ctx, `SELECT messages FROM forum_threads WHERE id = $1`, open.Thread.ID).Scan(&counted))
	must(t, shared.Pool().QueryRow(ctx, `SELECT coalesce(sum(c.messages), 0) FROM forum_board_counts c
		JOIN forum_boards b ON b.id = c.board_id WHERE b.slug = $1`, slug).Scan(&boardMessages))
	keys := make([]string, len(all))
	for i, p := range all {
		keys[i] = pircan.MessageKey(p.Message.ID)
	}
	must(t, shared.Pool().QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE action = 'forum.message' AND subject = ANY($1)`,
		keys).Scan(&audited))
	want := writers*each + 1
	if stored != want || counted != want || boardMessages != want || audited != writers*each {
		t.Fatalf("stored %d, the thread counts %d, the board %d, audited %d; want %d (%d audited)",
			stored, counted, boardMessages, audited, want, writers*each)
	}
	slices.Sort(bodies)
	if len(slices.Compact(bodies)) != want {
		t.Fatalf("a message was stored twice: %d distinct bodies of %d", len(bodies), want)
	}
}

// Racing posts of one line keep its hourly limits, messages and new
// threads alike: each count is read with the line locked.
func TestRacingPostsKeepTheHour(t *testing.T) {
	t.Parallel()
	l := sharedLimits()
	l.ForumMessagesHour, l.ForumThreadsHour = 4, 2
	svc := newServiceLimits(t, l)
	ctx := t.Context()
	a, b := agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley)
	var threads []*pircan.Key
	for range 2 {
		p, err := svc.OpenThread(ctx, b, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: envelope("ask", "Where?")})
		must(t, err)
		threads = append(threads, kp(pircan.ThreadKey(p.Thread.ID)))
	}
	race := func(racers int, post func(i int) error) (accepted int) {
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() { errs[i] = post(i) })
		}
		wg.Wait()
		for _, err := range errs {
			if err == nil {
				accepted++
				continue
			}
			wantErr(t, "a racing post over the hour", err, pircan.CodeRateLimited, "")
		}
		return accepted
	}
	count := func(table, column string) (n int) {
		must(t, shared.Pool().QueryRow(ctx, "SELECT count(*) FROM "+table+" WHERE "+column+" = $1",
			pircan.FoldAccount(a.Account)).Scan(&n))
		return n
	}
	// New threads: 2 of 6 (each also one of the 4 messages).
	opened := race(6, func(int) error {
		return errOf(svc.OpenThread(ctx, a, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: envelope("ask", "Mine?")}))
	})
	if n := count("forum_threads", "creator_folded"); opened != l.ForumThreadsHour || n != l.ForumThreadsHour {
		t.Fatalf("%d threads accepted, %d stored; want %d", opened, n, l.ForumThreadsHour)
	}
	// Messages: the 2 left of 4, of 8 racing to two threads.
	posted := race(8, func(i int) error {
		return errOf(svc.PostMessage(ctx, a, pircan.PostMessageArgs{ID: threads[i%2], EnvelopeArgs: envelope("answer", "Here.")}))
	})
	if n := count("forum_messages", "author_folded"); posted != l.ForumMessagesHour-opened || n != l.ForumMessagesHour {
		t.Fatalf("%d messages accepted after %d threads, %d stored; want %d in all", posted, opened, n, l.ForumMessagesHour)
	}
}

// failInLastBatch makes the database refuse the audit row of the account's
// writes whose size is 13, until the test ends: the audit row is the last
// statement of a post and of a task before the commit, sent with it.
func failInLastBatch(t *testing.T, account string) {
	t.Helper()
	ctx := t.Context()
	name := "fail_" + strings.ToLower(unique("t"))
	exec := func(sql string) {
		t.Helper()
		if _, err := shared.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	exec(fmt.Sprintf(`CREATE FUNCTION %[1]s() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.actor_account = %[2]s AND NEW.details->>'size' = '13' THEN
				RAISE EXCEPTION 'refused by the test';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER %[1]s BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION %[1]s()`,
		name, "'"+account+"'")) // unique's accounts are letters and digits
	t.Cleanup(func() {
		_, _ = shared.Pool().Exec(t.Context(), fmt.Sprintf(`DROP TRIGGER %[1]s ON audit_log; DROP FUNCTION %[1]s()`, name))
	})
}

// A post or a task whose last statement fails (its writes sent, its commit
// with them) stores nothing: no message, no turn, no counter, no task, no
// notification; the next one, on the same pool, is stored whole.
func TestWriteFailingInItsLastBatchStoresNothing(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	a, b := agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley)
	failInLastBatch(t, a.Account)
	slug := strings.ToLower(unique("fail"))
	_, err := svc.AddBoard(ctx, pircan.OperatorCaller("operator:ops"), pircan.NewBoardArgs{Slug: &slug, Name: sp("Failing")})
	must(t, err)
	open, err := svc.OpenThread(ctx, b, pircan.OpenThreadArgs{ID: kp(slug), EnvelopeArgs: envelope("ask", "Who answers?")})
	must(t, err)
	th := kp(pircan.ThreadKey(open.Thread.ID))
	state := func() (s [4]int64) {
		must(t, shared.Pool().QueryRow(ctx, `SELECT t.messages, t.turn_seq,
			(SELECT count(*) FROM forum_messages m WHERE m.thread_id = t.id),
			(SELECT coalesce(sum(c.messages), 0) FROM forum_board_counts c WHERE c.board_id = t.board_id)
			FROM forum_threads t WHERE t.id = $1`, open.Thread.ID).Scan(&s[0], &s[1], &s[2], &s[3]))
		return s
	}
	before := state()
	// An ask makes the thread await its creator, b: a notification would be written too.
	_, err = svc.PostMessage(ctx, a, pircan.PostMessageArgs{ID: th, EnvelopeArgs: envelope("ask", "thirteen char")})
	if err == nil {
		t.Fatal("the post whose audit row fails was accepted")
	}
	if after := state(); after != before {
		t.Fatalf("a failed post changed the thread (messages, turn, rows, board count): %v, was %v", after, before)
	}
	if n := notices(t, b.Agent.ID)[pircan.NotifyForum]; n != 0 {
		t.Fatalf("a failed post notified the thread's due line: %d", n)
	}
	// New threads: none left behind either.
	_, err = svc.OpenThread(ctx, a, pircan.OpenThreadArgs{ID: kp(slug), EnvelopeArgs: envelope("ask", "thirteen char")})
	if err == nil {
		t.Fatal("the thread whose audit row fails was opened")
	}
	var threads int
	must(t, shared.Pool().QueryRow(ctx, `SELECT count(*) FROM forum_threads WHERE creator_folded = $1`,
		pircan.FoldAccount(a.Account)).Scan(&threads))
	if threads != 0 {
		t.Fatalf("a failed opening left %d threads", threads)
	}
	p, err := svc.PostMessage(ctx, a, pircan.PostMessageArgs{ID: th, EnvelopeArgs: envelope("ask", "Now it is stored.")})
	must(t, err)
	if after := state(); after[0] != before[0]+1 || after[2] != before[2]+1 || after[3] != before[3]+1 ||
		after[1] != p.Thread.TurnSeq {
		t.Fatalf("the next post: %v, was %v (turn %d)", after, before, p.Thread.TurnSeq)
	}

	// A task: no row, no notification; then one that is stored.
	agreeScopes(t, svc, a, b, "task:translate")
	notices(t, b.Agent.ID) // claim what is waiting
	_, err = svc.SendTask(ctx, a, pircan.SendTaskArgs{To: &b.Agent.ID, Text: sp("thirteen char")})
	if err == nil {
		t.Fatal("the task whose audit row fails was accepted")
	}
	if n := taskCount(t, a.Agent.ID); n != 0 {
		t.Fatalf("a failed task left %d tasks", n)
	}
	if n := notices(t, b.Agent.ID)[pircan.NotifyTaskRequest]; n != 0 {
		t.Fatalf("a failed task notified its target: %d", n)
	}
	sendTask(t, svc, a, b, "translate", "Now it is stored.")
	if n := taskCount(t, a.Agent.ID); n != 1 {
		t.Fatalf("%d tasks after one sent", n)
	}
}
