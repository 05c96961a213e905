package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// BenchmarkForumPost times Store.PostForumMessage alone (BENCHMARKS.md
// "Parley forum"): a note to one thread of the lobby, by 20 accounts in
// turn (each account's hourly count then reads at most b.N/20 rows), with
// a rule that changes nothing; no HTTP, no JSON, no core. It reports p50
// and p99 and the round trips to Postgres a post makes (trips/op).
func BenchmarkForumPost(b *testing.B) {
	ctx := context.Background()
	s := openStore(b)
	l := pircan.DefaultLimits
	l.ForumMessagesHour, l.ForumThreadsHour = 1<<30, 1<<30
	rule := func(v pircan.ThreadView, _ *pircan.Line) (pircan.Change, error) {
		return pircan.Change{Thread: v.Thread}, nil
	}
	actor := pircan.ForumActor{Line: pircan.Line{Account: "bench"}, Identity: "pircan:bench"}
	msg := func(thread int64, body string) pircan.NewForumMessage {
		return pircan.NewForumMessage{Board: 1, Thread: thread, Kind: "note", Body: body, Provenance: map[string]string{}, RelatesTo: []string{}}
	}
	open, err := s.PostForumMessage(ctx, actor, msg(0, "The benchmark's thread."), l, rule)
	if err != nil {
		b.Fatal(err)
	}
	d := make([]time.Duration, 0, b.N)
	trips := s.RoundTrips()
	b.ResetTimer()
	for i := range b.N {
		actor.Account = "bench" + string(rune('a'+i%20))
		t0 := time.Now()
		if _, err := s.PostForumMessage(ctx, actor, msg(open.Thread.ID, "A benchmark note."), l, rule); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(d[len(d)*99/100])/1e6, "p99-ms")
	b.ReportMetric(float64(s.RoundTrips()-trips)/float64(b.N), "trips/op")
}
