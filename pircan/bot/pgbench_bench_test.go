package bot_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/latency"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// BenchmarkSendInboxPgbench is issue 24's target 5 (BENCHMARKS.md "Issue
// 24"): SEND → INBOX at P=50 (BenchmarkSendInbox's operation, 50 agent
// pairs at once) against pgbench on the bot's own database, 50 clients, a
// transaction of one INSERT and one UPDATE (each client its own row to
// update, so only the commits are shared: what bounds a write). They
// alternate, three rounds each: the same share of operations against
// internal/echobot (two round trips through the same IRC server and
// clients, no work: the IRC path's own rate), then SEND → INBOX, then
// pgbench for as long as that took (whole seconds, at least one).
// Reports the three rates, pircan/pgbench (judged ≥ 0.5) and pircan/echo,
// and the p50 of the SEND round trip and of the INBOX one. Needs pgbench
// (Debian: postgresql-client), else it is skipped.
//
//	go test -run '^$' -bench 'SendInboxPgbench' -benchtime 3000x -timeout 20m ./pircan/bot/
//
// Raised for it: as BenchmarkSendInbox.
func BenchmarkSendInboxPgbench(b *testing.B) {
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		b.Skip("no pgbench on PATH (Debian: apt-get install postgresql-client)")
	}
	limits := pircan.DefaultLimits
	limits.PerCaller = 1_000_000_000
	limits.MessagesHour = 1_000_000_000
	limits.ConversationHour = 1_000_000_000
	limits.RegistrationsHour = 1_000_000
	pacing := bottest.FastPacing
	pacing.GlobalBurst, pacing.GlobalRate = 1_000_000, 1_000_000
	bot := bottest.Start(b, bottest.Options{Limits: limits, Pacing: pacing, PoolConns: store.DefaultPoolConns})
	const p = 50
	pairs := agreedPairs(b, bot, p)

	// pgbench's tables, beside PIRCAN's in its database.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, bot.DSN)
	if err != nil {
		b.Fatal(err)
	}
	_, err = conn.Exec(ctx, `CREATE TABLE pgbench_events (id bigserial PRIMARY KEY, client int NOT NULL, at timestamptz NOT NULL DEFAULT now());
		CREATE TABLE pgbench_counts (client int PRIMARY KEY, n bigint NOT NULL);
		INSERT INTO pgbench_counts SELECT g, 0 FROM generate_series(0, 49) g`)
	conn.Close(ctx)
	if err != nil {
		b.Fatal(err)
	}
	script := b.TempDir() + "/insert-update.sql"
	if err := os.WriteFile(script, []byte("BEGIN;\nINSERT INTO pgbench_events (client) VALUES (:client_id);\n"+
		"UPDATE pgbench_counts SET n = n + 1 WHERE client = :client_id;\nCOMMIT;\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	runPgbench := func(seconds int) (float64, error) {
		out, err := exec.Command(pgbench, "-n", "-c", strconv.Itoa(p), "-j", "2", "-T", strconv.Itoa(seconds),
			"-f", script, bot.DSN).CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("pgbench: %v: %s", err, out)
		}
		m := tpsLine.FindSubmatch(out)
		if m == nil {
			return 0, fmt.Errorf("pgbench: no tps in %s", out)
		}
		return strconv.ParseFloat(string(m[1]), 64)
	}

	echoNick := startEchoBot(b, bot)

	// ops runs n operations over the pairs, each pair its share in
	// sequence, and returns the wall time and every operation's SEND round
	// trip and whole time.
	seq := 0
	type opFunc func(ctx context.Context, pr *msgPair, seq int) (send, total time.Duration, err error)
	ops := func(n int, op opFunc) (wall time.Duration, sends, totals []time.Duration, err error) {
		var wg sync.WaitGroup
		errs := make([]error, len(pairs))
		times := make([][2][]time.Duration, len(pairs))
		start := time.Now()
		for i, pr := range pairs {
			share := n / len(pairs)
			if i < n%len(pairs) {
				share++
			}
			base := seq
			wg.Go(func() {
				for k := range share {
					s, t, err := op(ctx, pr, base+k)
					if errs[i] = err; err != nil {
						return
					}
					times[i][0], times[i][1] = append(times[i][0], s), append(times[i][1], t)
				}
			})
		}
		wg.Wait()
		wall = time.Since(start)
		seq += n
		for i, err := range errs {
			if err != nil {
				return 0, nil, nil, err
			}
			sends, totals = append(sends, times[i][0]...), append(totals, times[i][1]...)
		}
		return wall, sends, totals, nil
	}
	pircanOp := func(ctx context.Context, pr *msgPair, seq int) (time.Duration, time.Duration, error) {
		return sendInboxSplit(ctx, pr, bot.Nick, seq)
	}
	echo := func(ctx context.Context, pr *msgPair, seq int) (time.Duration, time.Duration, error) {
		d, err := echoOp(ctx, pr, echoNick, seq)
		return 0, d, err
	}
	if _, _, _, err := ops(len(pairs), pircanOp); err != nil { // warm-up
		b.Fatal(err)
	}
	if _, _, _, err := ops(len(pairs), echo); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var wall, echoWall, pgWall time.Duration
	var pgTx float64
	var sends, inboxes []time.Duration
	const rounds = 3
	for r := range rounds {
		n := b.N / rounds
		if r < b.N%rounds {
			n++
		}
		d, _, _, err := ops(n, echo)
		if err != nil {
			b.Fatal(err)
		}
		echoWall += d
		d, s, t, err := ops(n, pircanOp)
		if err != nil {
			b.Fatal(err)
		}
		wall += d
		sends = append(sends, s...)
		for i := range s {
			inboxes = append(inboxes, t[i]-s[i])
		}
		secs := max(int(math.Round(d.Seconds())), 1)
		tps, err := runPgbench(secs)
		if err != nil {
			b.Fatal(err)
		}
		pgTx += tps * float64(secs)
		pgWall += time.Duration(secs) * time.Second
	}
	b.StopTimer()
	msgs := float64(b.N) / wall.Seconds()
	echoMsgs := float64(b.N) / echoWall.Seconds()
	tps := pgTx / pgWall.Seconds()
	b.ReportMetric(msgs, "msgs/s")
	b.ReportMetric(echoMsgs, "echo-msgs/s")
	b.ReportMetric(tps, "pgbench-tps")
	b.ReportMetric(latency.Millis(latency.Percentile(sends, 50)), "send-p50-ms")
	b.ReportMetric(latency.Millis(latency.Percentile(inboxes, 50)), "inbox-p50-ms")
	b.ReportMetric(msgs/echoMsgs, "pircan/echo")
	b.ReportMetric(msgs/tps, "pircan/pgbench")
}

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+)`)
