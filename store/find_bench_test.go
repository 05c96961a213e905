package store

// BenchmarkFind measures FIND (Store.FindAgents) over a directory of a
// million agents. It is opt-in like every benchmark:
//
//	go test -run='^$' -bench=Find -benchtime=100x ./store/
//
// `go test ./store/` without -bench never reaches this code, so it seeds
// nothing. The database is seeded once per BenchmarkFind run (one set-based
// INSERT … SELECT FROM generate_series, ~20–40 s for 1M rows) and shared by
// all its sub-benchmarks; seeding is outside the timed region.
//
// Environment (all optional):
//
//	PIRCAN_BENCH_AGENTS        directory size (default 1000000)
//	PIRCAN_BENCH_DATABASE_URL  use (and keep) this database instead of a
//	                           fresh one; it is migrated, and seeded only if
//	                           it does not already hold exactly that many
//	                           agents, so repeated runs skip the seeding.

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// slowP99 is the latency above which a query shape is reported as slow,
// with its EXPLAIN ANALYZE.
const slowP99 = 50 * time.Millisecond

// findShape is one kind of FIND request the benchmark times.
type findShape struct {
	name string
	q    pircan.FindQuery
}

// The shapes, limit 5 (FIND's default), offset 0. The filter values come
// from the seed vocabulary below; how many agents each matches is logged
// once per run.
var findShapes = []findShape{
	{"capability-common", pircan.FindQuery{Capability: "search", Limit: 5}},
	{"capability-rare", pircan.FindQuery{Capability: "diagrams", Limit: 5}},
	{"q-common-word", pircan.FindQuery{Q: "chemical", Limit: 5}},
	{"q-rare-word", pircan.FindQuery{Q: "vexillology", Limit: 5}},
	{"q-3char", pircan.FindQuery{Q: "map", Limit: 5}},
	{"q+capability", pircan.FindQuery{Q: "chemical", Capability: "hazmat", Limit: 5}},
	{"browse", pircan.FindQuery{Limit: 5}},
}

func BenchmarkFind(b *testing.B) {
	ctx := context.Background()
	n := 1_000_000
	if v := os.Getenv("PIRCAN_BENCH_AGENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("PIRCAN_BENCH_AGENTS=%q: want a positive number", v)
		}
	}
	dsn := os.Getenv("PIRCAN_BENCH_DATABASE_URL")
	if dsn == "" {
		dsn = pgtest.Database(b)
	}
	s, err := Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	if err := ensureSeeded(ctx, b, s.pool, n); err != nil {
		b.Fatal(err)
	}
	logSelectivity(ctx, b, s.pool, n)
	b.ResetTimer() // the seeding is not what is measured

	// A second pool with the same settings as Open's and a tracer, only to
	// capture the exact SQL and arguments FindAgents sends, for EXPLAIN. The
	// timed calls go through s, untraced.
	traced, tracer := tracedStore(ctx, b, s)
	defer traced.Close()

	var mu sync.Mutex
	p99 := map[string]time.Duration{}
	for _, sh := range findShapes {
		sql, args := tracer.capture(ctx, b, traced, sh.q)
		b.Logf("%s %+v: EXPLAIN\n%s", sh.name, sh.q, explain(ctx, b, s.pool, "EXPLAIN", sql, args))
		b.Run(sh.name, func(b *testing.B) {
			// A few untimed calls first, so that every run measures a warm
			// cache and connection (the first run of a sub-benchmark with
			// b.N = 1 would otherwise report a cold start as p99).
			for range 3 {
				if _, _, err := s.FindAgents(ctx, sh.q); err != nil {
					b.Fatal(err)
				}
			}
			var durs []time.Duration
			for b.Loop() { // resets the timer on its first call
				start := time.Now()
				agents, total, err := s.FindAgents(ctx, sh.q)
				durs = append(durs, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				if total < len(agents) {
					b.Fatalf("total %d < %d returned", total, len(agents))
				}
			}
			b.StopTimer()
			p50, p := percentile(durs, 50), percentile(durs, 99)
			b.ReportMetric(ms(p50), "p50-ms")
			b.ReportMetric(ms(p), "p99-ms")
			mu.Lock()
			p99[sh.name] = p
			mu.Unlock()
		})
	}
	for _, sh := range findShapes {
		if p := p99[sh.name]; p > slowP99 {
			sql, args := tracer.capture(ctx, b, traced, sh.q)
			b.Logf("SLOW: %s p99 %.1f ms > %v: EXPLAIN (ANALYZE, BUFFERS)\n%s", sh.name, ms(p), slowP99,
				explain(ctx, b, s.pool, "EXPLAIN (ANALYZE, BUFFERS)", sql, args))
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile is the nearest-rank percentile of durs (which it sorts).
func percentile(durs []time.Duration, pct int) time.Duration {
	if len(durs) == 0 {
		return 0
	}
	slices.Sort(durs)
	rank := int(math.Ceil(float64(pct) / 100 * float64(len(durs))))
	return durs[max(rank, 1)-1]
}

// ensureSeeded fills agents with n synthetic rows unless it holds n already.
func ensureSeeded(ctx context.Context, b *testing.B, pool *pgxpool.Pool, n int) error {
	var have int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM agents").Scan(&have); err != nil {
		return err
	}
	if have == n {
		b.Logf("reusing %d seeded agents", n)
		return nil
	}
	start := time.Now()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	for _, stmt := range []string{
		"SET LOCAL maintenance_work_mem = '512MB'",
		"SET LOCAL synchronous_commit = off",
		"TRUNCATE agents CASCADE",
		"SELECT setseed(0.4242)", // the same directory every run
	} {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	// Building the secondary indexes once over the loaded table is far
	// faster than maintaining them row by row (the trigram GIN index above
	// all), so they are dropped and re-created from their own definitions,
	// exactly as the migrations made them. The primary key stays.
	rows, err := tx.Query(ctx, `SELECT indexname, indexdef FROM pg_indexes
		WHERE schemaname = current_schema() AND tablename = 'agents' AND indexname <> 'agents_pkey'`)
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
	for _, d := range defs {
		if _, err := tx.Exec(ctx, "DROP INDEX "+pgx.Identifier{d[0]}.Sanitize()); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(ctx, seedSQL, n, seedWords, seedCapabilities, seedAdjectives, seedNouns, seedRoles, seedRareWords); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	loaded := time.Since(start)
	for _, d := range defs {
		if _, err := tx.Exec(ctx, d[1]); err != nil {
			return fmt.Errorf("%s: %w", d[1], err)
		}
	}
	indexed := time.Since(start)
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "VACUUM (ANALYZE) agents"); err != nil {
		return err
	}
	b.Logf("seeded %d agents in %.1f s (insert %.1f s, indexes %.1f s, vacuum+analyze %.1f s)", n,
		time.Since(start).Seconds(), loaded.Seconds(), (indexed - loaded).Seconds(), (time.Since(start) - indexed).Seconds())
	return nil
}

// seedSQL makes $1 agents in one statement. Description words and
// capabilities are drawn log-uniformly (P(k-th) ∝ ~1/k, as word frequencies
// go), so the vocabulary has common and rare entries; 0.2 % of descriptions
// end with one of the rare words. created_at spreads over two years, as the
// directory's sort key. The LATERAL subqueries refer to g, so they are
// evaluated per row.
const seedSQL = `
INSERT INTO agents (name, description, capabilities, capabilities_folded, card_url, nick, created_at, updated_at)
SELECT name, description, caps, caps,
       CASE WHEN g % 4 = 0 THEN 'https://agents.example/' || g || '/card.json' ELSE '' END,
       lower(replace(name, ' ', '')) || (g % 100),
       ts, ts
FROM generate_series(1, $1::int) AS g
CROSS JOIN LATERAL (SELECT
        initcap(($4::text[])[1 + (hashint4(g) & 1023) % cardinality($4::text[])]) || ' ' ||
        initcap(($5::text[])[1 + (hashint4(g + 7) & 1023) % cardinality($5::text[])]) || ' ' ||
        ($6::text[])[1 + (hashint4(g + 13) & 1023) % cardinality($6::text[])] ||
        CASE WHEN g % 3 = 0 THEN ' ' || (g % 997) ELSE '' END AS name,
        now() - random() * interval '730 days' AS ts) AS n
CROSS JOIN LATERAL (SELECT string_agg(
            ($2::text[])[floor(exp(random() * ln(cardinality($2::text[]) + 1)))::int], ' ') ||
        CASE WHEN random() < 0.002
             THEN ' ' || ($7::text[])[1 + floor(random() * cardinality($7::text[]))::int] ELSE '' END AS description
    FROM generate_series(1, 6 + (hashint4(g + 21) & 1023) % 15) AS k) AS d
CROSS JOIN LATERAL (SELECT array_agg(DISTINCT c) AS caps FROM (
        SELECT ($3::text[])[floor(exp(random() * ln(cardinality($3::text[]) + 1)))::int] AS c
        FROM generate_series(1, 1 + (hashint4(g + 42) & 1023) % 5) AS k) AS cs) AS c
`

// logSelectivity logs how many agents each shape's filters match.
func logSelectivity(ctx context.Context, b *testing.B, pool *pgxpool.Pool, n int) {
	var lines []string
	for _, sh := range findShapes {
		if sh.q.Q == "" && sh.q.Capability == "" {
			lines = append(lines, fmt.Sprintf("  %-18s all %d", sh.name, n))
			continue
		}
		var q, c *string
		if sh.q.Q != "" {
			q = likePattern(sh.q.Q)
		}
		if sh.q.Capability != "" {
			lc := strings.ToLower(sh.q.Capability)
			c = &lc
		}
		var count int64
		err := pool.QueryRow(ctx, `SELECT count(*) FROM agents
			WHERE ($1::text IS NULL OR search LIKE '%' || $1::text || '%')
			  AND ($2::text IS NULL OR capabilities_folded @> ARRAY[$2::text])`, q, c).Scan(&count)
		if err != nil {
			b.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf("  %-18s q=%q capability=%q: %d agents (%.3f %%)",
			sh.name, sh.q.Q, sh.q.Capability, count, 100*float64(count)/float64(n)))
	}
	b.Logf("matches per shape:\n%s", strings.Join(lines, "\n"))
}

// sqlTracer records the SQL and arguments of the next query while armed.
type sqlTracer struct {
	mu    sync.Mutex
	armed bool
	sql   string
	args  []any
}

func (t *sqlTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.armed && t.sql == "" {
		t.sql, t.args = d.SQL, d.Args
	}
	return ctx
}

func (t *sqlTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// capture runs FindAgents for fq on the traced store and returns the
// statement it sent (the first one: FindAgents itself).
func (t *sqlTracer) capture(ctx context.Context, b *testing.B, s *Store, fq pircan.FindQuery) (string, []any) {
	t.mu.Lock()
	t.armed, t.sql, t.args = true, "", nil
	t.mu.Unlock()
	if _, _, err := s.FindAgents(ctx, fq); err != nil {
		b.Fatal(err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.armed = false
	if t.sql == "" {
		b.Fatal("FindAgents sent no query")
	}
	return t.sql, t.args
}

// tracedStore opens a second Store on s's pool configuration (so on Open's
// runtime parameters: plan_cache_mode = force_custom_plan) with a tracer.
func tracedStore(ctx context.Context, b *testing.B, s *Store) (*Store, *sqlTracer) {
	cfg := s.pool.Config()
	cfg.MaxConns = 1
	tr := &sqlTracer{}
	cfg.ConnConfig.Tracer = tr
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	return &Store{pool: pool, q: db.New(pool)}, tr
}

// explain runs `<how> <sql>` with args on the same pool settings and
// returns the plan.
func explain(ctx context.Context, b *testing.B, pool *pgxpool.Pool, how, sql string, args []any) string {
	rows, err := pool.Query(ctx, how+" "+sql, args...)
	if err != nil {
		b.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		b.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// The seed vocabulary. Order matters: earlier entries are drawn more often.
var (
	seedAdjectives = []string{"swift", "quiet", "bright", "careful", "clever", "steady", "nimble", "patient",
		"keen", "bold", "calm", "brisk", "sharp", "gentle", "lucid", "tidy", "eager", "frugal", "vivid", "sober",
		"amber", "cobalt", "crimson", "golden", "silver", "azure", "scarlet", "violet", "indigo", "ivory",
		"north", "south", "east", "west", "polar", "lunar", "solar", "coastal", "alpine", "urban"}
	seedNouns = []string{"hazmat", "chem", "weather", "ledger", "atlas", "harbor", "beacon", "compass", "falcon",
		"otter", "heron", "lynx", "badger", "raven", "wren", "kestrel", "orca", "bison", "ferret", "marten",
		"docket", "quill", "abacus", "prism", "vector", "kernel", "cipher", "signal", "relay", "pylon",
		"archive", "index", "census", "meridian", "tundra", "delta", "canyon", "glacier", "summit", "valley"}
	seedRoles = []string{"Agent", "Bot", "Assistant", "Scout", "Helper", "Service", "Worker", "Analyst",
		"Researcher", "Monitor", "Operator", "Curator", "Navigator", "Librarian", "Clerk", "Sentinel"}

	// ~300 description words, most frequent first.
	seedWords = strings.Fields(`
		data agent and the for chemical to of with in reports analysis support tasks files text a on from
		requests answers documents search results quickly safely questions summaries
		translation monitoring alerts images code review forecasts weather incidents logs metrics queries
		customers tickets schedules invoices contracts sources citations maps routes sensors readings
		emergency response hazardous materials spill release containment exposure toxic safety guidance
		protocols evacuation shelter decontamination responders field teams dispatch radio status updates
		geospatial satellite imagery terrain elevation rivers flood rainfall drought wildfire smoke air quality
		pollen temperature humidity wind storm lightning earthquake tsunami volcano landslide avalanche snow
		finance accounting budgets payments fraud risk compliance audits regulations policies legal clauses
		privacy consent records retention archives backups storage databases tables schemas migrations indexes
		python golang rust javascript typescript java kotlin swift ruby php shell scripts containers clusters
		deployments pipelines builds tests coverage benchmarks profiling tracing debugging errors crashes
		security vulnerabilities patches scans secrets certificates keys tokens identity access roles
		medical clinical patients symptoms dosage pharmacy trials genomics proteins cells imaging radiology
		education lessons quizzes tutoring grading essays languages grammar vocabulary pronunciation speech
		audio transcripts subtitles video frames captions music playlists podcasts news articles headlines
		shopping prices products inventory orders shipping tracking returns warehouses suppliers logistics
		travel flights hotels trains itineraries visas currency exchange recipes nutrition fitness sleep
		gardening plants soil irrigation crops harvest livestock fisheries forestry mining energy solar grid
		batteries charging vehicles traffic parking transit bikes maintenance repairs manuals diagrams
		spreadsheets charts dashboards slides emails calendars meetings notes todos reminders contacts
		multilingual offline realtime batch streaming local private open source free experimental stable
		fast accurate careful verified trusted friendly concise detailed structured json csv markdown pdf`)

	// Words that appear in 0.2 % of descriptions, one each.
	seedRareWords = []string{"bathymetry", "dendrochronology", "vexillology", "speleology", "lichenometry",
		"ptychography", "zymurgy", "glossolalia", "orrery", "palimpsest"}

	// 200 capabilities, most frequent first.
	seedCapabilities = strings.Fields(`
		search summarize translate chat code qa ocr transcribe classify extract
		weather hazmat chem maps geocode routing forecast alerts monitoring scheduling
		email calendar notes tasks reminders contacts slack github gitlab jira
		sql postgres mysql sqlite redis kafka spark pandas numpy plotting
		python go rust javascript typescript java kotlin swift ruby php
		docker kubernetes terraform ansible aws gcp azure linux bash ci
		code-review refactor testing fuzzing profiling debugging tracing logging metrics dashboards
		security pentest vuln-scan secrets-scan sbom compliance gdpr hipaa soc2 audit
		legal contracts finance accounting invoicing payments trading risk fraud insurance
		medical radiology pharmacy genomics proteomics clinical-trials nutrition fitness sleep mental-health
		education tutoring grading quizzes flashcards essays grammar pronunciation language-learning math
		physics chemistry biology astronomy geology oceanography ecology botany zoology statistics
		image-gen image-caption image-edit upscale segmentation detection face-blur video-edit subtitles tts
		stt music podcast audio-clean voice-clone dubbing lipsync animation 3d-model cad
		shopping pricing inventory orders shipping logistics procurement suppliers warehouse returns
		travel flights hotels trains visas currency recipes gardening agriculture forestry
		energy solar grid batteries ev-charging traffic transit parking fleet maintenance
		seismology hydrology wildfire flood drought air-quality pollen volcanology glaciology tsunami
		rss news headlines fact-check citations bibtex arxiv patents trademarks archiving
		pdf csv json xml yaml markdown latex spreadsheets slides diagrams`)
)
