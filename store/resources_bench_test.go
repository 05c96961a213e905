package store

// BenchmarkResources measures list_resources (Store.Resources) over a
// library of 100,000 resources from 10,000 publishers, per query shape,
// beside a floor: a primary-key lookup on the same table. p50-ms and p99-ms
// besides ns/op (the mean). Opt-in like every benchmark:
//
//	go test -v -run='^$' -bench=Resources -benchtime=30x ./store/
//
// Seeded once per run outside the timed region, as BenchmarkFind seeds
// (find_bench_test.go: its helpers and vocabulary): set-based INSERT …
// SELECT, secondary indexes dropped before and re-built after. The viewer
// holds 100 agreements granting it resource:read, so readable is computed
// against real agreement rows.
//
//	PIRCAN_BENCH_RESOURCES  library size (default 100000)

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/creatimus/pircan/internal/latency"
	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
)

const benchPublishers = 10_000

// benchPublisher is the id of publisher i (1…benchPublishers), fixed so
// that the resources can name it in SQL.
func benchPublisher(i int) string {
	return fmt.Sprintf("%08x-0000-4000-8000-000000000000", i)
}

type benchResourceShape struct {
	name string
	q    pircan.ResourceQuery
}

func BenchmarkResources(b *testing.B) {
	ctx := context.Background()
	n := 100_000
	if v := os.Getenv("PIRCAN_BENCH_RESOURCES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("PIRCAN_BENCH_RESOURCES=%q: want a positive number", v)
		}
	}
	s, err := Open(ctx, pgtest.Database(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	viewer := benchPublisher(benchPublishers + 1)
	if err := benchSeedResources(ctx, b, s, n, viewer); err != nil {
		b.Fatal(err)
	}
	var someID string
	if err := s.pool.QueryRow(ctx, "SELECT id FROM resources ORDER BY created_at LIMIT 1 OFFSET $1", n/2).Scan(&someID); err != nil {
		b.Fatal(err)
	}
	shapes := []benchResourceShape{
		{"newest", pircan.ResourceQuery{}},
		{"tag-common", pircan.ResourceQuery{Tag: "search"}},
		{"tag-rare", pircan.ResourceQuery{Tag: "diagrams"}},
		{"q-common-word", pircan.ResourceQuery{Q: "chemical"}},
		{"q-rare-word", pircan.ResourceQuery{Q: "vexillology"}},
		{"q-3char", pircan.ResourceQuery{Q: "map"}},
		{"by-agent", pircan.ResourceQuery{By: benchPublisher(42)}},
		{"q+tag", pircan.ResourceQuery{Q: "chemical", Tag: "hazmat"}},
	}
	var lines []string
	for i := range shapes {
		shapes[i].q.Viewer, shapes[i].q.Limit = viewer, 5
		_, total, err := s.Resources(ctx, shapes[i].q)
		if err != nil {
			b.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf("  %-14s %+v: total %d", shapes[i].name, shapes[i].q, total))
	}
	b.Logf("totals per shape (capped at %d):\n%s", pircan.MaxFindTotal+1, strings.Join(lines, "\n"))
	b.ResetTimer()

	timed := func(b *testing.B, call func() error) {
		for range 3 { // warm cache and connection
			if err := call(); err != nil {
				b.Fatal(err)
			}
		}
		var durs []time.Duration
		for b.Loop() {
			start := time.Now()
			err := call()
			durs = append(durs, time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(latency.Millis(latency.Percentile(durs, 50)), "p50-ms")
		b.ReportMetric(latency.Millis(latency.Percentile(durs, 99)), "p99-ms")
	}
	b.Run("floor-pk", func(b *testing.B) {
		timed(b, func() error {
			var title string
			return s.pool.QueryRow(ctx, "SELECT title FROM resources WHERE id = $1", someID).Scan(&title)
		})
	})
	b.Run("read", func(b *testing.B) {
		timed(b, func() error { _, err := s.Resource(ctx, viewer, someID); return err })
	})
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			timed(b, func() error {
				list, total, err := s.Resources(ctx, sh.q)
				if err == nil && (total < len(list) || len(list) == 0) {
					err = fmt.Errorf("%d listed of %d", len(list), total)
				}
				return err
			})
		})
	}
}

// benchSeedResources makes the publishers and the viewer, the viewer's
// agreements with publishers 1…100, and n resources: titles two parts of
// 2–5 words drawn log-uniformly (and one in 1024 ending with a rare word),
// 1–5 tags of the capability vocabulary, a third `agreement`, content of
// 100–500 bytes, created_at rising over a year.
func benchSeedResources(ctx context.Context, b *testing.B, s *Store, n int, viewer string) error {
	pool := s.pool
	start := time.Now()
	rows, err := pool.Query(ctx, `SELECT indexname, indexdef FROM pg_indexes
		WHERE schemaname = current_schema() AND tablename = 'resources' AND indexname <> 'resources_pkey'`)
	if err != nil {
		return err
	}
	defs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var d [2]string
		return d, r.Scan(&d[0], &d[1])
	})
	if err != nil {
		return err
	}
	err = benchInTx(ctx, pool, func(tx pgx.Tx) error {
		for _, st := range []struct {
			sql  string
			args []any
		}{
			{"SELECT setseed(0.4242)", nil},
			{"CREATE UNLOGGED TABLE bench_description_parts (id int PRIMARY KEY, txt text NOT NULL)", nil},
			{"CREATE UNLOGGED TABLE bench_capability_sets (id int PRIMARY KEY, caps text[] NOT NULL)", nil},
			{benchSeedDescriptionPartsSQL, []any{benchSeedWords}},
			{benchSeedCapabilitySetsSQL, []any{benchSeedCapabilities}},
			{`INSERT INTO agents (id, name, created_at)
			  SELECT (lpad(to_hex(g), 8, '0') || '-0000-4000-8000-000000000000')::uuid, 'Publisher ' || g, now() - interval '2 years'
			  FROM generate_series(1, $1::int + 1) AS g`, []any{benchPublishers}},
			{`INSERT INTO contact_requests (id, from_agent, to_agent, purpose, scopes, ttl_days, status, decided_by, decided_at)
			  SELECT md5('req' || g)::uuid, $1::uuid, (lpad(to_hex(g), 8, '0') || '-0000-4000-8000-000000000000')::uuid, 'bench',
			         '{resource:read}', 365, 'accepted', 'agent', now()
			  FROM generate_series(1, 100) AS g`, []any{viewer}},
			{`INSERT INTO agreements (request_id, requester, target, scopes, expires_at)
			  SELECT id, from_agent, to_agent, scopes, now() + interval '365 days' FROM contact_requests`, nil},
		} {
			if _, err := tx.Exec(ctx, st.sql, st.args...); err != nil {
				return fmt.Errorf("%s: %w", st.sql, err)
			}
		}
		for _, d := range defs {
			if _, err := tx.Exec(ctx, "DROP INDEX "+pgx.Identifier{d[0]}.Sanitize()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("seed pools: %w", err)
	}
	const parts = 2
	err = benchParallel(parts, func(i int) error {
		lo, hi := i*n/parts+1, (i+1)*n/parts
		return benchInTx(ctx, pool, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `
INSERT INTO resources (agent_id, title, tags, tags_folded, access, media_type, content, created_at)
SELECT (lpad(to_hex(1 + (hashint4(g + 9)::bigint + 2147483648) % $4::int), 8, '0') || '-0000-4000-8000-000000000000')::uuid,
       initcap(d1.txt) || ' ' || d2.txt ||
       CASE WHEN hashint4(g + 6) & 1023 = 0
            THEN ' ' || ($5::text[])[1 + (hashint4(g + 7) & 1023) % cardinality($5::text[])] ELSE '' END,
       cs.caps, cs.caps,
       CASE WHEN g % 3 = 0 THEN 'agreement' ELSE 'public' END, 'text/markdown',
       repeat('x', 100 + g % 400),
       now() - interval '365 days' * (1 - g::float8 / $3::int)
FROM generate_series($1::int, $2::int) AS g
JOIN bench_description_parts AS d1 ON d1.id = hashint4(g) & 4095
JOIN bench_description_parts AS d2 ON d2.id = hashint4(g + 1) & 4095
JOIN bench_capability_sets AS cs ON cs.id = hashint4(g + 2) & 4095`, lo, hi, n, benchPublishers, benchSeedRareWords)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("seed resources: %w", err)
	}
	err = benchParallel(len(defs), func(i int) error {
		return benchInTx(ctx, pool, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, defs[i][1])
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("indexes: %w", err)
	}
	if _, err := pool.Exec(ctx, "DROP TABLE bench_description_parts, bench_capability_sets"); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, "VACUUM (ANALYZE) resources, agents, agreements"); err != nil {
		return err
	}
	b.Logf("seeded %d resources of %d publishers in %.1f s", n, benchPublishers, time.Since(start).Seconds())
	return nil
}
