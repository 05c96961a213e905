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
	"github.com/creatimus/pircan/pircan"
)

// BenchmarkSendInboxPgbench is issue 24's target 5 (BENCHMARKS.md "Issue
// 24"): SEND → INBOX at P=50 (BenchmarkSendInbox's operation, 50 agent
// pairs at once) against pgbench on the bot's own database, 50 clients, a
// transaction of one INSERT and one UPDATE (each client its own row to
// update, so only the commits are shared: what bounds a write). The two
// alternate, three rounds each: the SEND → INBOX share of a round, then
// pgbench for as long as that took (whole seconds, at least one).
// Reports both rates and pircan/pgbench (judged ≥ 0.5). Needs pgbench
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
	bot := bottest.Start(b, bottest.Options{Limits: limits, Pacing: pacing})
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

	seq := 0
	ops := func(n int) (time.Duration, error) { // n operations over the pairs
		var wg sync.WaitGroup
		errs := make([]error, len(pairs))
		start := time.Now()
		for i, pr := range pairs {
			share := n / len(pairs)
			if i < n%len(pairs) {
				share++
			}
			base := seq
			wg.Go(func() {
				for k := range share {
					if _, errs[i] = sendInboxOp(ctx, pr, bot.Nick, base+k); errs[i] != nil {
						return
					}
				}
			})
		}
		wg.Wait()
		seq += n
		for _, err := range errs {
			if err != nil {
				return 0, err
			}
		}
		return time.Since(start), nil
	}
	if _, err := ops(len(pairs)); err != nil { // warm-up
		b.Fatal(err)
	}
	b.ResetTimer()
	var wall, pgWall time.Duration
	var pgTx float64
	const rounds = 3
	for r := range rounds {
		n := b.N / rounds
		if r < b.N%rounds {
			n++
		}
		d, err := ops(n)
		if err != nil {
			b.Fatal(err)
		}
		wall += d
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
	tps := pgTx / pgWall.Seconds()
	b.ReportMetric(msgs, "msgs/s")
	b.ReportMetric(tps, "pgbench-tps")
	b.ReportMetric(msgs/tps, "pircan/pgbench")
}

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+)`)
