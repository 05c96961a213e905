package parley_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/parley"
)

// BenchmarkParley times the forum's operations through its two doors
// (BENCHMARKS.md "Parley forum"): the go-sdk client over loopback HTTP to
// the MCP door, and net/http to the REST mirror, each beside the floor
// (get_noop: the whole path of a call, with an operation that does
// nothing). The data: a board of 100,000 threads, a thread of 1,000
// messages, and for each client 50 threads awaiting it (its inbox), all
// written by SQL before the clock starts; posts go to a thread of each
// client's own. One client: each round calls every operation over both
// doors, in an order that turns, and a durable commit alone (commit-db:
// what bounds a post from below), and reports each call's round trips to
// Postgres (trips/op); 50 clients: each (operation, door) in a phase of its
// own, all 50 calling it, the floor first.
//
// Raised for it: Limits.ForumPerMinute and ForumMessagesHour (to 2^30:
// still counted, never refused) and RegistrationsHour (the setup's).
func BenchmarkParley(b *testing.B) {
	l := pircan.DefaultLimits
	l.ForumPerMinute, l.ForumMessagesHour, l.ForumThreadsHour = 1<<30, 1<<30, 1<<30
	e := newEnvWith(b, l, parley.Config{BenchNoop: true})
	ctx := b.Context()
	start := time.Now()
	clients := make([]*benchClient, benchClients)
	for i := range clients {
		clients[i] = e.benchClient(b)
	}
	big, long := seedForum(b, clients)
	b.Logf("setup: a board of %d threads, a thread of %d messages, %d clients each with %d threads due: %v",
		benchThreads, benchMessages, benchClients, benchInbox, time.Since(start))

	explainReads(b, big, long, clients[0].line.Account)

	ops := []benchOp{
		{name: "noop", tool: "get_noop", path: "/noop"},
		{name: "post_threads_id_messages", tool: "post_threads_id_messages", post: true},
		{name: "get_threads_id", tool: "get_threads_id", args: map[string]any{"id": long}, path: "/threads/" + long},
		{name: "get_boards_id_threads", tool: "get_boards_id_threads", args: map[string]any{"id": big}, path: "/boards/" + big + "/threads"},
		{name: "get_inbox", tool: "get_inbox", path: "/inbox"},
	}
	var calls []benchCall
	for _, o := range ops {
		calls = append(calls, benchCall{name: o.name + "-mcp", do: func(c *benchClient) error { return c.mcp(ctx, o) }},
			benchCall{name: o.name + "-rest", do: func(c *benchClient) error { return c.rest(ctx, e, o) }})
	}
	// What bounds a post from below, beside them at one client: a durable
	// commit alone (one INSERT in autocommit: one round trip, its WAL flushed).
	_, err := shared.Pool().Exec(ctx, `CREATE TABLE IF NOT EXISTS bench_commits (id bigserial PRIMARY KEY)`)
	must(b, err)
	commit := benchCall{name: "commit-db", do: func(*benchClient) error {
		_, err := shared.Pool().Exec(ctx, `INSERT INTO bench_commits DEFAULT VALUES`)
		return err
	}}
	b.Run("clients=1", func(b *testing.B) { benchForum(b, clients[:1], append(calls, commit), true) })
	b.Run(fmt.Sprintf("clients=%d", benchClients), func(b *testing.B) { benchForum(b, clients, calls, false) })
}

const (
	benchThreads  = 100_000
	benchMessages = 1_000
	benchClients  = 50
	benchInbox    = 50
)

type benchOp struct {
	name, tool, path string
	args             map[string]any
	post             bool // post_threads_id_messages to the client's own thread
}

type benchCall struct {
	name string
	do   func(c *benchClient) error
}

// benchClient is one agent with its token, an MCP session and an HTTP
// client of its own (its own keep-alive connection), and a thread to post to.
type benchClient struct {
	line   agentLine
	cs     *sdk.ClientSession
	hc     *http.Client
	thread string
}

func (e *env) benchClient(b *testing.B) *benchClient {
	l := e.line(b, "bench", nil)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	hc := &http.Client{Transport: tr}
	c := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(b.Context(), &sdk.StreamableClientTransport{Endpoint: e.url(parley.MCPPath),
		HTTPClient: &http.Client{Transport: bearerRT{l.Token, tr.Clone()}}}, nil)
	must(b, err)
	b.Cleanup(func() { _ = cs.Close() })
	p, err := e.svc.OpenThread(b.Context(), l.Caller, pircan.OpenThreadArgs{ID: keyp("lobby"),
		EnvelopeArgs: pircan.EnvelopeArgs{Kind: strp("note"), Body: strp("The benchmark's thread.")}})
	must(b, err)
	return &benchClient{line: l, cs: cs, hc: hc, thread: pircan.ThreadKey(p.Thread.ID)}
}

type bearerRT struct {
	token string
	next  http.RoundTripper
}

func (r bearerRT) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+r.token)
	return r.next.RoundTrip(req)
}

const benchBody = "A benchmark answer of a realistic length: a couple of sentences that say what was tried and what came of it."

func (c *benchClient) mcp(ctx context.Context, o benchOp) error {
	args := o.args
	if o.post {
		args = map[string]any{"id": c.thread, "kind": "note", "body": benchBody}
	}
	if args == nil {
		args = map[string]any{}
	}
	res, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: o.tool, Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("%s refused: %v", o.tool, res.Content[0].(*sdk.TextContent).Text)
	}
	return nil
}

func (c *benchClient) rest(ctx context.Context, e *env, o benchOp) error {
	method, path, body := http.MethodGet, o.path, ""
	if o.post {
		method, path, body = http.MethodPost, "/threads/"+c.thread+"/messages", `{"kind":"note","body":"`+benchBody+`"}`
	}
	req, err := http.NewRequestWithContext(ctx, method, e.url(parley.APIPath+path), strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.line.Token)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	// Decoded as the go-sdk client decodes a tool's structuredContent, so
	// that both doors' figures include reading the answer.
	var out any
	if err == nil {
		err = json.Unmarshal(raw, &out)
	}
	return err
}

// seedForum writes the benchmark's data by SQL: a board of benchThreads
// threads (each with its opening message), a thread of benchMessages
// messages (every tenth answering the one before), and benchInbox threads
// of that board due to each client. It returns the board's slug and the
// long thread's key.
func seedForum(b *testing.B, clients []*benchClient) (board, thread string) {
	ctx := b.Context()
	pool := shared.Pool()
	slug := strings.ToLower(unique("big"))
	var boardID, threadID int64
	must(b, pool.QueryRow(ctx, `INSERT INTO forum_boards (slug, name) VALUES ($1, 'Benchmark') RETURNING id`, slug).Scan(&boardID))
	author := unique("seed") // not a client: its hourly count would read every seeded message
	_, err := pool.Exec(ctx, `
		WITH th AS (
			INSERT INTO forum_threads (board_id, creator_account, creator_folded, title, created_at, last_at, messages)
			SELECT $1, $2, lower($2), 'Seeded thread ' || g, now() - g * interval '1 second', now() - g * interval '1 second', 1
			FROM generate_series(1, $3::int) g
			RETURNING id, created_at)
		INSERT INTO forum_messages (thread_id, kind, body, author_account, author_folded, awaiting, created_at)
		SELECT id, 'ask', 'Seeded question', $2, lower($2), true, created_at FROM th`, boardID, author, benchThreads)
	must(b, err)
	_, err = pool.Exec(ctx, `UPDATE forum_boards SET threads = $2 WHERE id = $1`, boardID, benchThreads)
	must(b, err)
	_, err = pool.Exec(ctx, `INSERT INTO forum_board_counts (board_id, shard, messages, last_at) VALUES ($1, 0, $2, now())`,
		boardID, benchThreads+benchMessages)
	must(b, err)
	must(b, pool.QueryRow(ctx, `INSERT INTO forum_threads (board_id, creator_account, creator_folded, title, messages)
		VALUES ($1, $2, lower($2), 'The long thread', $3) RETURNING id`, boardID, author, benchMessages).Scan(&threadID))
	_, err = pool.Exec(ctx, `
		INSERT INTO forum_messages (thread_id, kind, body, author_account, author_folded, awaiting)
		SELECT $1, 'note', 'Seeded message ' || g || ': ' || repeat('words ', 20), $2, lower($2), false
		FROM generate_series(1, $3::int) g`, threadID, author, benchMessages)
	must(b, err)
	_, err = pool.Exec(ctx, `UPDATE forum_messages m SET parent_id = m.id - 1
		WHERE thread_id = $1 AND m.id % 10 <> 0 AND m.id > (SELECT min(id) FROM forum_messages WHERE thread_id = $1)`, threadID)
	must(b, err)
	for i, c := range clients {
		_, err := pool.Exec(ctx, `UPDATE forum_threads SET awaiting = true, due_account = $2, due_folded = lower($2), due_ext = '',
			turn_seq = nextval('forum_turn_seq') WHERE id IN (
				SELECT id FROM forum_threads WHERE board_id = $1 ORDER BY id OFFSET $3 LIMIT $4)`,
			boardID, c.line.Account, i*benchInbox, benchInbox)
		must(b, err)
	}
	_, err = pool.Exec(ctx, `ANALYZE forum_threads; ANALYZE forum_messages`)
	must(b, err)
	return slug, pircan.ThreadKey(threadID)
}

// explainReads logs (with -v) the server's own time of each read's
// statement on the seeded data, apart from HTTP, JSON and the machine's
// other load: the board's first page, the long thread's first page, an
// inbox.
func explainReads(b *testing.B, board, thread, due string) {
	ctx := b.Context()
	var boardID int64
	must(b, shared.Pool().QueryRow(ctx, `SELECT id FROM forum_boards WHERE slug = $1`, board).Scan(&boardID))
	n := strings.TrimPrefix(thread, pircan.ThreadPrefix)
	for name, q := range map[string]string{
		"board page": fmt.Sprintf(`SELECT t.*, b.slug FROM forum_threads t JOIN forum_boards b ON b.id = t.board_id WHERE t.board_id = %d
			ORDER BY t.pinned DESC, t.awaiting DESC, t.last_at DESC, t.id DESC LIMIT 20`, boardID),
		"board page at offset 10000": fmt.Sprintf(`SELECT t.*, b.slug FROM forum_threads t JOIN forum_boards b ON b.id = t.board_id WHERE t.board_id = %d
			ORDER BY t.pinned DESC, t.awaiting DESC, t.last_at DESC, t.id DESC LIMIT 20 OFFSET 10000`, boardID),
		"thread page": fmt.Sprintf(`SELECT m.*, a.name FROM forum_messages m LEFT JOIN agents a ON a.id = m.author_agent
			WHERE m.thread_id = %s AND m.id > 0 ORDER BY m.id LIMIT 101`, n),
		"inbox": fmt.Sprintf(`SELECT t.*, b.slug FROM forum_threads t JOIN forum_boards b ON b.id = t.board_id
			WHERE t.due_folded = lower('%s') AND t.turn_seq > 0 ORDER BY t.turn_seq DESC LIMIT 20`, due),
	} {
		rows, err := shared.Pool().Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+q)
		must(b, err)
		var plan []string
		for rows.Next() {
			var line string
			must(b, rows.Scan(&line))
			plan = append(plan, line)
		}
		rows.Close()
		b.Logf("%s:\n%s", name, strings.Join(plan, "\n"))
	}
}

// benchForum has the clients make b.N rounds of calls between them, after
// one untimed round each, and reports each call's p50/p99 (nearest rank),
// its p50 over its door's floor, MCP over REST, and the calls per second;
// at one client (interleave), also each call's round trips to Postgres.
func benchForum(b *testing.B, clients []*benchClient, calls []benchCall, interleave bool) {
	for _, c := range clients {
		for _, k := range calls {
			if err := k.do(c); err != nil {
				b.Fatal(err)
			}
		}
	}
	durs := make([][][]time.Duration, len(clients))
	for i := range durs {
		durs[i] = make([][]time.Duration, len(calls))
	}
	trips := make([]int64, len(calls)) // the store's round trips of each call (one client: its own)
	errs := make([]error, len(clients))
	run := func(which []int) {
		var wg sync.WaitGroup
		for i, c := range clients {
			share := b.N / len(clients)
			if i < b.N%len(clients) {
				share++
			}
			wg.Go(func() {
				for r := range share {
					for k := range which {
						n := which[(r+i+k)%len(which)]
						t0 := shared.RoundTrips()
						s := time.Now()
						if errs[i] = calls[n].do(c); errs[i] != nil {
							return
						}
						durs[i][n] = append(durs[i][n], time.Since(s))
						if interleave {
							trips[n] += shared.RoundTrips() - t0
						}
					}
				}
			})
		}
		wg.Wait()
	}
	b.ResetTimer()
	t0 := time.Now()
	if interleave {
		all := make([]int, len(calls))
		for n := range all {
			all[n] = n
		}
		run(all)
	} else {
		for n := range calls {
			run([]int{n})
		}
	}
	wall := time.Since(t0)
	b.StopTimer()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	p50s := map[string]float64{}
	total := 0
	for n, k := range calls {
		var all []time.Duration
		for i := range durs {
			all = append(all, durs[i][n]...)
		}
		slices.Sort(all)
		total += len(all)
		rank := func(q float64) float64 {
			return float64(all[max(int(q*float64(len(all))+0.999999)-1, 0)]) / 1e6
		}
		p50s[k.name] = rank(0.50)
		b.ReportMetric(rank(0.50), k.name+"-p50-ms")
		b.ReportMetric(rank(0.99), k.name+"-p99-ms")
		if interleave {
			b.ReportMetric(float64(trips[n])/float64(len(all)), k.name+"-trips/op")
		}
	}
	for _, k := range calls {
		name, door, _ := strings.Cut(k.name, "-")
		if door == "db" { // no door: the commit row
			continue
		}
		if name != "noop" {
			b.ReportMetric(p50s[k.name]/p50s["noop-"+door], k.name+"/noop-p50")
		}
		if door == "mcp" {
			b.ReportMetric(p50s[k.name]/p50s[name+"-rest"], name+"-mcp/rest-p50")
		}
	}
	b.ReportMetric(float64(total)/wall.Seconds(), "calls/s")
}
