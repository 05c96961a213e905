package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// The forum's store beyond what the core's tests drive: the remembered
// extensions' bound and order, what hides a thread where AI reactions are
// forbidden from the inbox, and what remembering costs a post.

// keep is a message rule that changes nothing but the message.
func keep(v pircan.ThreadView, _ *pircan.Line) (pircan.Change, error) {
	return pircan.Change{Thread: v.Thread}, nil
}

// awaitAlice is a message rule that leaves the thread awaiting alice.
func awaitAlice(v pircan.ThreadView, _ *pircan.Line) (pircan.Change, error) {
	th := v.Thread
	th.Awaiting, th.Due = true, &pircan.Line{Account: "alice"}
	return pircan.Change{Thread: th}, nil
}

// post stores a note by account under ext on thread (0: a new thread on the lobby).
func post(t *testing.T, s *store.Store, account, ext string, thread int64) pircan.ForumPost {
	t.Helper()
	actor := pircan.ForumActor{Line: pircan.Line{Account: account, Extension: ext}, Identity: "pircan:" + account}
	p, err := s.PostForumMessage(context.Background(), actor, pircan.NewForumMessage{Board: 1, Thread: thread, Kind: "note",
		Body: "x", RelatesTo: []string{}, Provenance: map[string]string{}}, pircan.DefaultLimits, keep)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func extensionNames(list []pircan.RecentExtension) []string {
	out := []string{}
	for _, e := range list {
		out = append(out, e.Extension)
	}
	return out
}

// A message remembers its extension for its account: the newest
// MaxRecentExtensions, newest first, an extension used again moving to the
// front; a message without one remembers nothing; accounts apart, folded.
func TestForumExtensionsRemembered(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := context.Background()
	th := post(t, s, "Alice", "", 0).Thread.ID
	if got, err := s.RecentExtensions(ctx, "alice"); err != nil || len(got) != 0 {
		t.Fatalf("no extension used: %v %v", got, err)
	}
	for i := 1; i <= pircan.MaxRecentExtensions+2; i++ {
		post(t, s, "Alice", fmt.Sprintf("w%d", i), th)
	}
	post(t, s, "alice", "w5", th) // used again: newest
	post(t, s, "Alice", "", th)   // no extension: nothing changes
	post(t, s, "bob", "w1", th)   // another account's own list
	got, err := s.RecentExtensions(ctx, "ALICE")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"w5", "w12", "w11", "w10", "w9", "w8", "w7", "w6", "w4", "w3"}
	if names := extensionNames(got); !slices.Equal(names, want) {
		t.Fatalf("remembered %v, want %v", names, want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].LastUsed.After(got[i-1].LastUsed) || got[i].LastUsed.IsZero() {
			t.Fatalf("not newest first: %+v", got)
		}
	}
	if b, err := s.RecentExtensions(ctx, "bob"); err != nil || !slices.Equal(extensionNames(b), []string{"w1"}) {
		t.Fatalf("bob: %v %v", b, err)
	}
	if n := countRows(t, s, "SELECT count(*) FROM forum_extensions WHERE account_folded = 'alice'"); n != pircan.MaxRecentExtensions {
		t.Fatalf("alice keeps %d rows, want %d", n, pircan.MaxRecentExtensions)
	}
}

func countRows(t *testing.T, s *store.Store, sql string) int {
	t.Helper()
	var n int
	if err := s.Pool().QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A thread where a human forbade AI reactions is in nobody's inbox and
// counts in no NOTIFY forum; allowing them again gives it a new turn (past
// an acknowledged cursor) and tells the due line's agent.
func TestForumLLMForbiddenInbox(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := context.Background()
	alice, _, err := s.Hello(ctx, "alice", "alice", pircan.Profile{}, 30)
	if err != nil {
		t.Fatal(err)
	}
	bob := pircan.ForumActor{Line: pircan.Line{Account: "bob"}, Identity: "pircan:bob"}
	p, err := s.PostForumMessage(ctx, bob, pircan.NewForumMessage{Board: 1, Kind: "ask", Body: "x", RelatesTo: []string{},
		Provenance: map[string]string{}}, pircan.DefaultLimits, awaitAlice)
	if err != nil {
		t.Fatal(err)
	}
	th := p.Thread.ID
	inbox := func() []int64 {
		t.Helper()
		list, total, err := s.ForumInbox(ctx, pircan.InboxQuery{Account: "alice", Since: 0, Limit: 10})
		if err != nil || total != len(list) {
			t.Fatalf("inbox: %v %d %v", list, total, err)
		}
		var ids []int64
		for _, x := range list {
			ids = append(ids, x.ID)
		}
		return ids
	}
	forumCount := func() int {
		t.Helper()
		n, err := s.ClaimNotices(ctx, alice.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range n {
			if x.Type == pircan.NotifyForum {
				return x.Count
			}
		}
		return -1 // no notification waiting
	}
	if got := inbox(); !slices.Equal(got, []int64{th}) || forumCount() != 1 {
		t.Fatalf("before: inbox %v", got)
	}
	ops := pircan.ForumActor{Line: pircan.Line{Human: "ops"}, Identity: "human:ops", Operator: "ops"}
	set := func(forbid, newTurn bool) pircan.Thread {
		t.Helper()
		out, err := s.ChangeThread(ctx, ops, th, func(v pircan.ThreadView) (pircan.Change, error) {
			x := v.Thread
			x.LLMForbidden = forbid
			typ := pircan.EventLLMForbidden
			if !forbid {
				typ = pircan.EventLLMAllowed
			}
			return pircan.Change{Thread: x, NewTurn: newTurn, Events: []pircan.ForumEvent{{ThreadID: x.ID, Type: typ,
				Origin: pircan.OriginUser, Confirmed: true, By: ops.Identity}}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	set(true, false)
	if got, err := s.ForumThread(ctx, th); err != nil || !got.LLMForbidden || !got.Awaiting || got.Due == nil {
		t.Fatalf("forbidden thread: %+v %v", got, err)
	}
	if got := inbox(); len(got) != 0 || forumCount() != -1 {
		t.Fatalf("forbidden: inbox %v", got)
	}
	before, _ := s.ForumThread(ctx, th)
	set(false, true)
	after, err := s.ForumThread(ctx, th)
	if err != nil || after.LLMForbidden || after.TurnSeq <= before.TurnSeq {
		t.Fatalf("allowed: turn %d after %d: %+v %v", after.TurnSeq, before.TurnSeq, after, err)
	}
	list, _, err := s.ForumInbox(ctx, pircan.InboxQuery{Account: "alice", Since: before.TurnSeq, Limit: 10})
	if err != nil || len(list) != 1 || list[0].ID != th || forumCount() != 1 {
		t.Fatalf("allowed: inbox since the old turn %v %v", list, err)
	}
}

// BenchmarkForumPostExtension: posts under one extension (its row
// updated), under a new one each time (a row added, the oldest forgotten)
// and without one, interleaved, each on a thread of its own: each one's
// round trips to Postgres (the same) and p50, over the p50 without.
func BenchmarkForumPostExtension(b *testing.B) {
	s := openStore(b)
	ctx := context.Background()
	l := pircan.DefaultLimits
	l.ForumMessagesHour, l.ForumThreadsHour = 1<<30, 1<<30
	postAs := func(account, ext string, thread int64) pircan.ForumPost {
		actor := pircan.ForumActor{Line: pircan.Line{Account: account, Extension: ext}, Identity: "pircan:" + account}
		p, err := s.PostForumMessage(ctx, actor, pircan.NewForumMessage{Board: 1, Thread: thread, Kind: "note",
			Body: "A benchmark note.", RelatesTo: []string{}, Provenance: map[string]string{}}, l, keep)
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	kinds := []struct {
		name, account string
		ext           func(i int) string
	}{
		{"same", "same", func(int) string { return "worker" }},
		{"rotating", "rotating", func(i int) string { return fmt.Sprintf("worker-%d", i%(2*pircan.MaxRecentExtensions)) }},
		{"none", "none", func(int) string { return "" }},
	}
	threads := make([]int64, len(kinds))
	for k, c := range kinds {
		threads[k] = postAs(c.account, c.ext(0), 0).Thread.ID
	}
	durs := make([][]time.Duration, len(kinds))
	trips := make([]int64, len(kinds))
	b.ResetTimer()
	for i := range b.N {
		for k, c := range kinds {
			t0, start := s.RoundTrips(), time.Now()
			postAs(c.account, c.ext(i), threads[k])
			durs[k] = append(durs[k], time.Since(start))
			trips[k] += s.RoundTrips() - t0
		}
	}
	b.StopTimer()
	none := durs[len(kinds)-1]
	slices.Sort(none)
	for k, c := range kinds {
		slices.Sort(durs[k])
		p50 := durs[k][len(durs[k])/2]
		b.ReportMetric(float64(p50.Microseconds()), c.name+"-p50-us")
		b.ReportMetric(float64(p50)/float64(none[len(none)/2]), c.name+"/none")
		b.ReportMetric(float64(trips[k])/float64(b.N), c.name+"-trips/op")
	}
}
