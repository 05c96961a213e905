package store

// BenchmarkFind measures FIND (Store.FindAgents) over a directory of a
// million agents, per query shape, reporting p50-ms and p99-ms besides
// ns/op (the mean). It is opt-in like every benchmark:
//
//	go test -v -run='^$' -bench=Find -benchtime=30x ./store/
//
// (-v shows the logs: seeding time, how many agents each shape matches, the
// EXPLAIN of each shape, and EXPLAIN ANALYZE of any shape whose p99 is over
// 50 ms.) `go test ./store/` without -bench never reaches this code, so it
// seeds nothing.
//
// The database is seeded once per BenchmarkFind run and shared by all its
// sub-benchmarks, outside the timed region: set-based INSERT … SELECT FROM
// generate_series, one statement per core over its own range, with the
// secondary indexes dropped before and re-built after (~25 s for 1M rows on
// 2 cores, most of it the trigram index). agent_accounts stays empty: FIND
// does not read it.
//
// Environment (all optional):
//
//	PIRCAN_BENCH_AGENTS        directory size (default 1000000)
//	PIRCAN_BENCH_DATABASE_URL  use (and keep) this database instead of a
//	                           fresh one: it is seeded only if it does not
//	                           hold exactly that many agents already (and then
//	                           wiped and migrated first), so repeated runs
//	                           skip the seeding.

import (
	"context"
	"errors"
	"fmt"
	"github.com/creatimus/pircan/internal/latency"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
)

// benchNewestCapability is held, and benchNewestWord written, by the newest
// benchNewestHolders agents only (a capability or a word that has just
// become popular): more than FIND counts, all at the end of the
// registration order, where a walk from the oldest meets them last.
const (
	benchNewestCapability = "newest-only"
	benchNewestWord       = "newestword"
	benchNewestHolders    = 1500
)

// benchSlowP99 is the latency above which a query shape is reported as slow,
// with its EXPLAIN ANALYZE.
const benchSlowP99 = 50 * time.Millisecond

// benchFindShape is one kind of FIND request the benchmark times.
type benchFindShape struct {
	name string
	q    pircan.FindQuery
}

// The shapes, limit 5 (FIND's default), offset 0. The filter values come
// from the seed vocabulary below; how many agents each matches is logged
// once per run.
var benchFindShapes = []benchFindShape{
	{"capability-common", pircan.FindQuery{Capability: "search", Limit: 5}},
	{"capability-rare", pircan.FindQuery{Capability: "diagrams", Limit: 5}},
	{"capability-newest", pircan.FindQuery{Capability: benchNewestCapability, Limit: 5}},
	{"q-newest", pircan.FindQuery{Q: benchNewestWord, Limit: 5}},
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
	if err := benchSeed(ctx, b, s, n); err != nil {
		b.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE agents SET capabilities = capabilities || $1::text,
		    capabilities_folded = capabilities_folded || $1::text, description = description || ' ' || $3::text
		WHERE id IN (SELECT id FROM agents ORDER BY created_at DESC, id DESC LIMIT $2)
		  AND NOT capabilities_folded @> ARRAY[$1::text]`, benchNewestCapability, benchNewestHolders, benchNewestWord); err != nil {
		b.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE agents SET description = description || ' ' || $1::text
		WHERE capabilities_folded @> ARRAY[$2::text] AND description NOT LIKE '%' || $1::text`, benchNewestWord, benchNewestCapability); err != nil {
		b.Fatal(err) // a database seeded before the word was
	}
	benchLogMatches(ctx, b, s.pool, n)
	b.ResetTimer() // the seeding is not what is measured

	// A second pool with the same settings as Open's and a tracer, only to
	// capture the exact SQL and arguments FindAgents sends, for EXPLAIN. The
	// timed calls go through s, untraced.
	traced, tracer := benchTracedStore(ctx, b, s)
	defer traced.Close()

	p99 := map[string]time.Duration{} // b.Run returns after its benchmark
	for _, sh := range benchFindShapes {
		for _, st := range tracer.capture(ctx, b, traced, sh.q) {
			b.Logf("%s %+v: EXPLAIN\n%s", sh.name, sh.q, benchExplain(ctx, b, s.pool, "EXPLAIN", st.sql, st.args))
		}
		b.Run(sh.name, func(b *testing.B) {
			// A few untimed calls first: the timed ones meet a warm cache
			// and connection, or the p99 of a short run is the cold start.
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
			p50, p := latency.Percentile(durs, 50), latency.Percentile(durs, 99)
			b.ReportMetric(latency.Millis(p50), "p50-ms")
			b.ReportMetric(latency.Millis(p), "p99-ms")
			p99[sh.name] = p
		})
	}
	for _, sh := range benchFindShapes {
		if p := p99[sh.name]; p > benchSlowP99 {
			for _, st := range tracer.capture(ctx, b, traced, sh.q) {
				b.Logf("SLOW: %s p99 %.1f ms > %v: EXPLAIN (ANALYZE, BUFFERS)\n%s", sh.name, latency.Millis(p), benchSlowP99,
					benchExplain(ctx, b, s.pool, "EXPLAIN (ANALYZE, BUFFERS)", st.sql, st.args))
			}
		}
	}
}

// benchSeed fills agents with n synthetic rows unless it holds exactly n
// already. A reused database holding anything else is wiped first.
func benchSeed(ctx context.Context, b *testing.B, s *Store, n int) error {
	pool := s.pool
	var have int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM agents").Scan(&have); err != nil {
		return err
	}
	if have == n {
		b.Logf("reusing the %d agents already seeded", n)
		return nil
	}
	start := time.Now()
	if have != 0 {
		// A reused database from an interrupted or different run: start over
		// from the migrations, so the indexes are exactly theirs.
		if _, err := pool.Exec(ctx, "DROP SCHEMA public CASCADE; CREATE SCHEMA public"); err != nil {
			return err
		}
		if _, err := s.Migrate(ctx); err != nil {
			return err
		}
	}
	// Building the secondary indexes once over the loaded table is far
	// faster than maintaining them row by row (the trigram GIN index above
	// all), so they are dropped and re-created from their own definitions,
	// exactly as the migrations made them. The primary key stays.
	rows, err := pool.Query(ctx, `SELECT indexname, indexdef FROM pg_indexes
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
		if _, err := pool.Exec(ctx, "DROP INDEX "+pgx.Identifier{d[0]}.Sanitize()); err != nil {
			return err
		}
	}

	// The vocabulary pools, drawn once from a fixed seed: the same
	// directory every run.
	err = benchInTx(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT setseed(0.4242)"); err != nil {
			return err
		}
		for _, st := range []struct {
			sql  string
			args []any
		}{
			{"DROP TABLE IF EXISTS bench_description_parts, bench_capability_sets", nil},
			{"CREATE UNLOGGED TABLE bench_description_parts (id int PRIMARY KEY, txt text NOT NULL)", nil},
			{"CREATE UNLOGGED TABLE bench_capability_sets (id int PRIMARY KEY, caps text[] NOT NULL)", nil},
			{benchSeedDescriptionPartsSQL, []any{benchSeedWords}},
			{benchSeedCapabilitySetsSQL, []any{benchSeedCapabilities}},
			{"ANALYZE bench_description_parts, bench_capability_sets", nil},
		} {
			if _, err := tx.Exec(ctx, st.sql, st.args...); err != nil {
				return fmt.Errorf("%s: %w", st.sql, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("seed pools: %w", err)
	}

	// The triggers (agent_capabilities' rows, the agent cache's
	// notifications) are off for the load; the rows they would write are
	// written once after it.
	if _, err := pool.Exec(ctx, "ALTER TABLE agents DISABLE TRIGGER USER"); err != nil {
		return err
	}
	// INSERT … SELECT is single-threaded: one statement per core, each over
	// its own range of generate_series.
	parts := max(2, min(runtime.NumCPU(), 4))
	err = benchParallel(parts, func(i int) error {
		lo, hi := i*n/parts+1, (i+1)*n/parts
		return benchInTx(ctx, pool, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, benchSeedAgentsSQL, lo, hi, n, benchSeedAdjectives, benchSeedNouns, benchSeedRoles, benchSeedRareWords)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("seed agents: %w", err)
	}
	for _, sql := range []string{"ALTER TABLE agents ENABLE TRIGGER USER",
		`INSERT INTO agent_capabilities (capability, created_at, agent_id, search)
		 SELECT DISTINCT c, a.created_at, a.id, a.search FROM agents a, unnest(a.capabilities_folded) AS c`} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	loaded := time.Since(start)

	// One index build per connection, side by side (the trigram one takes
	// most of the time).
	err = benchParallel(len(defs), func(i int) error {
		return benchInTx(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SET LOCAL maintenance_work_mem = '256MB'"); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, defs[i][1])
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("indexes: %w", err)
	}
	indexed := time.Since(start)
	if _, err := pool.Exec(ctx, "DROP TABLE bench_description_parts, bench_capability_sets"); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, "VACUUM (ANALYZE) agents, agent_capabilities"); err != nil {
		return err
	}
	b.Logf("seeded %d agents in %.1f s (insert %.1f s on %d connections, indexes %.1f s, vacuum+analyze %.1f s)",
		n, time.Since(start).Seconds(), loaded.Seconds(), parts, (indexed - loaded).Seconds(), (time.Since(start) - indexed).Seconds())
	return nil
}

// benchInTx runs fn in a transaction with synchronous_commit off.
func benchInTx(ctx context.Context, pool *pgxpool.Pool, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
			return err
		}
		return fn(tx)
	})
}

// benchParallel runs fn(0) … fn(n-1) at once and returns the first error.
func benchParallel(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// benchSeedDescriptionPartsSQL draws 4096 description parts of 2–5 words, and
// benchSeedCapabilitySetsSQL 4096 sets of 1–5 capabilities. Both draw
// log-uniformly (P(k-th) ∝ ~1/k, as word frequencies go), so the vocabulary
// has common and rare entries. The subqueries refer to the outer row, so
// they are evaluated per row.
const (
	benchSeedDescriptionPartsSQL = `
INSERT INTO bench_description_parts
SELECT f, (SELECT string_agg(($1::text[])[floor(exp(random() * ln(cardinality($1::text[]) + 1)))::int], ' ')
           FROM generate_series(1, 2 + f % 4))
FROM generate_series(0, 4095) AS f`
	benchSeedCapabilitySetsSQL = `
INSERT INTO bench_capability_sets
SELECT f, (SELECT array_agg(DISTINCT c) FROM (
               SELECT ($1::text[])[floor(exp(random() * ln(cardinality($1::text[]) + 1)))::int] AS c
               FROM generate_series(1, 1 + f % 5)) AS cs)
FROM generate_series(0, 4095) AS f`
)

// benchSeedAgentsSQL makes agents $1…$2 of $3 in one statement: a description
// is two parts from the pool (4–10 words, ~16 M combinations), and one in
// 1024 ends with a rare word; names are adjective, noun, role and, for a
// third, a number. created_at grows with g over two years, as registrations
// do (and so the heap is in created_at order, as in a real directory).
const benchSeedAgentsSQL = `
INSERT INTO agents (name, description, capabilities, capabilities_folded, card_url, nick, created_at, updated_at)
SELECT name, description, cs.caps, cs.caps,
       CASE WHEN g % 4 = 0 THEN 'https://agents.example/' || g || '/card.json' ELSE '' END,
       lower(replace(name, ' ', '')) || g % 100,
       ts, ts
FROM generate_series($1::int, $2::int) AS g
JOIN bench_description_parts AS d1 ON d1.id = hashint4(g) & 4095
JOIN bench_description_parts AS d2 ON d2.id = hashint4(g + 1) & 4095
JOIN bench_capability_sets AS cs ON cs.id = hashint4(g + 2) & 4095
CROSS JOIN LATERAL (SELECT
    initcap(($4::text[])[1 + (hashint4(g + 3) & 1023) % cardinality($4::text[])]) || ' ' ||
    initcap(($5::text[])[1 + (hashint4(g + 4) & 1023) % cardinality($5::text[])]) || ' ' ||
    ($6::text[])[1 + (hashint4(g + 5) & 1023) % cardinality($6::text[])] ||
    CASE WHEN g % 3 = 0 THEN ' ' || g % 997 ELSE '' END AS name,
    d1.txt || ' ' || d2.txt ||
    CASE WHEN hashint4(g + 6) & 1023 = 0
         THEN ' ' || ($7::text[])[1 + (hashint4(g + 7) & 1023) % cardinality($7::text[])] ELSE '' END AS description,
    now() - interval '730 days' * (1 - g::float8 / $3::int) AS ts) AS x
`

// benchLogMatches logs how many agents each shape's filters match.
func benchLogMatches(ctx context.Context, b *testing.B, pool *pgxpool.Pool, n int) {
	var lines []string
	for _, sh := range benchFindShapes {
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

// benchSQLTracer records the SQL and arguments of the queries sent while
// armed.
type benchSQLTracer struct {
	mu    sync.Mutex
	armed bool
	sent  []benchStatement
}

type benchStatement struct {
	sql  string
	args []any
}

func (t *benchSQLTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.armed {
		t.sent = append(t.sent, benchStatement{d.SQL, d.Args})
	}
	return ctx
}

func (t *benchSQLTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// capture runs FindAgents for fq on the traced store and returns the
// statements it sent, in order (the count's, then the page's).
func (t *benchSQLTracer) capture(ctx context.Context, b *testing.B, s *Store, fq pircan.FindQuery) []benchStatement {
	t.mu.Lock()
	t.armed, t.sent = true, nil
	t.mu.Unlock()
	if _, _, err := s.FindAgents(ctx, fq); err != nil {
		b.Fatal(err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.armed = false
	if len(t.sent) == 0 {
		b.Fatal("FindAgents sent no query")
	}
	return t.sent
}

// benchTracedStore opens a second Store on s's pool configuration (Open's
// runtime parameters) with a tracer.
func benchTracedStore(ctx context.Context, b *testing.B, s *Store) (*Store, *benchSQLTracer) {
	cfg := s.pool.Config()
	cfg.MaxConns = 1
	tr := &benchSQLTracer{}
	cfg.ConnConfig.Tracer = tr
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	return newStore(pool, s.timeout), tr
}

// benchExplain runs `<how> <sql>` with args on the same pool settings and
// returns the plan, planned for its arguments as FindAgents' statements are.
func benchExplain(ctx context.Context, b *testing.B, pool *pgxpool.Pool, how, sql string, args []any) string {
	rows, err := perCallPlans{pool}.Query(ctx, how+" "+sql, args...)
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
	benchSeedAdjectives = []string{"swift", "quiet", "bright", "careful", "clever", "steady", "nimble", "patient",
		"keen", "bold", "calm", "brisk", "sharp", "gentle", "lucid", "tidy", "eager", "frugal", "vivid", "sober",
		"amber", "cobalt", "crimson", "golden", "silver", "azure", "scarlet", "violet", "indigo", "ivory",
		"north", "south", "east", "west", "polar", "lunar", "solar", "coastal", "alpine", "urban"}
	benchSeedNouns = []string{"hazmat", "chem", "weather", "ledger", "atlas", "harbor", "beacon", "compass", "falcon",
		"otter", "heron", "lynx", "badger", "raven", "wren", "kestrel", "orca", "bison", "ferret", "marten",
		"docket", "quill", "abacus", "prism", "vector", "kernel", "cipher", "signal", "relay", "pylon",
		"archive", "index", "census", "meridian", "tundra", "delta", "canyon", "glacier", "summit", "valley"}
	benchSeedRoles = []string{"Agent", "Bot", "Assistant", "Scout", "Helper", "Service", "Worker", "Analyst",
		"Researcher", "Monitor", "Operator", "Curator", "Navigator", "Librarian", "Clerk", "Sentinel"}

	// ~300 description words, most frequent first.
	benchSeedWords = strings.Fields(`
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

	// Words one description in 1024 ends with, one of them each.
	benchSeedRareWords = []string{"bathymetry", "dendrochronology", "vexillology", "speleology", "lichenometry",
		"ptychography", "zymurgy", "glossolalia", "orrery", "palimpsest"}

	// 200 capabilities, most frequent first.
	benchSeedCapabilities = strings.Fields(`
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
