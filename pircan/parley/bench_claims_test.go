package parley_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/parley"
)

// BenchmarkParleyClaims times the dialectic profile's reads and an
// attestation over 100,000 claims (BENCHMARKS.md "Parley forum: claims and
// attestations"), beside the floor and the thread read of BenchmarkParley,
// through both doors, one client. The data, written by SQL before the
// clock starts: 1,000 threads of one message with 100 claims each, every
// claim with 3 current attestations and 1 replaced one (400,000
// attestations), and a thread of 1,000 messages.
func BenchmarkParleyClaims(b *testing.B) {
	l := pircan.DefaultLimits
	l.ForumPerMinute, l.ForumMessagesHour, l.ForumThreadsHour = 1<<30, 1<<30, 1<<30
	e := newEnvWith(b, l, parley.Config{BenchNoop: true})
	ctx := b.Context()
	start := time.Now()
	c := e.benchClient(b)
	claimThread, claim, long := seedClaims(b)
	b.Logf("setup: %d claims on %d threads, %d attestations each (+1 replaced), a thread of %d messages: %v",
		benchClaims, benchClaims/benchClaimsPerThread, benchAttestations, benchMessages, time.Since(start))
	explainClaims(b, claimThread, claim)

	ops := []benchOp{
		{name: "noop", tool: "get_noop", path: "/noop"},
		{name: "get_threads_id", tool: "get_threads_id", args: map[string]any{"id": long}, path: "/threads/" + long},
		{name: "get_threads_id_claims", tool: "get_threads_id_claims", args: map[string]any{"id": claimThread}, path: "/threads/" + claimThread + "/claims"},
		{name: "get_claims_id", tool: "get_claims_id", args: map[string]any{"id": claim}, path: "/claims/" + claim},
	}
	var calls []benchCall
	for _, o := range ops {
		calls = append(calls, benchCall{name: o.name + "-mcp", do: func(c *benchClient) error { return c.mcp(ctx, o) }},
			benchCall{name: o.name + "-rest", do: func(c *benchClient) error { return c.rest(ctx, e, o) }})
	}
	// The attestation: the client's verdict on the claim, replacing its
	// last one each time (so the history grows by one a call).
	attest := benchOp{name: "post_claims_id_attest", tool: "post_claims_id_attest", args: map[string]any{"id": claim, "verdict": "supports"}}
	calls = append(calls, benchCall{name: "post_claims_id_attest-mcp", do: func(c *benchClient) error { return c.mcp(ctx, attest) }},
		benchCall{name: "post_claims_id_attest-rest", do: func(c *benchClient) error {
			return c.restPost(ctx, e, "/claims/"+claim+"/attest", `{"verdict":"supports"}`)
		}})
	b.Run("clients=1", func(b *testing.B) { benchForum(b, []*benchClient{c}, calls, true) })
}

const (
	benchClaims          = 100_000
	benchClaimsPerThread = 100
	benchAttestations    = 3
)

// seedClaims writes the claims' data and returns a thread of 100 claims,
// one claim of it and the long thread.
func seedClaims(b *testing.B) (thread, claim, long string) {
	ctx := b.Context()
	pool := shared.Pool()
	author := unique("cseed")
	var boardID int64
	must(b, pool.QueryRow(ctx, `INSERT INTO forum_boards (slug, name) VALUES ($1, 'Claims') RETURNING id`, strings.ToLower(unique("claims"))).Scan(&boardID))
	_, err := pool.Exec(ctx, `
		WITH th AS (
			INSERT INTO forum_threads (board_id, creator_account, creator_folded, title, messages)
			SELECT $1, $2, lower($2), 'Claims ' || g, 1 FROM generate_series(1, $3::int) g RETURNING id),
		m AS (
			INSERT INTO forum_messages (thread_id, kind, body, author_account, author_folded, awaiting)
			SELECT id, 'note', 'Seeded claims', $2, lower($2), false FROM th RETURNING id, thread_id)
		INSERT INTO forum_claims (thread_id, message_id, statement, evidence, author_account, author_folded)
		SELECT m.thread_id, m.id, 'Seeded claim ' || g || ': ' || repeat('words ', 15),
			'[{"kind":"url","ref":"https://example.org/evidence"}]', $2, lower($2)
		FROM m, generate_series(1, $4::int) g`, boardID, author, benchClaims/benchClaimsPerThread, benchClaimsPerThread)
	must(b, err)
	_, err = pool.Exec(ctx, `
		INSERT INTO forum_attestations (claim_id, line, by_identity, verdict, note, sealed, current, state_after)
		SELECT c.id, 'seeder' || l, 'pircan:seeder' || l, CASE WHEN l = 0 THEN 'refutes' ELSE 'supports' END,
			'A seeded note.', false, l > 0, 'supported'
		FROM forum_claims c, generate_series(0, $2::int) l WHERE c.author_folded = lower($1)`, author, benchAttestations)
	must(b, err)
	_, err = pool.Exec(ctx, `UPDATE forum_claims SET state = 'supported' WHERE author_folded = lower($1)`, author)
	must(b, err)
	var threadID, claimID, longID int64
	must(b, pool.QueryRow(ctx, `SELECT thread_id, id FROM forum_claims WHERE author_folded = lower($1) ORDER BY id OFFSET $2 LIMIT 1`,
		author, benchClaims/2).Scan(&threadID, &claimID))
	must(b, pool.QueryRow(ctx, `INSERT INTO forum_threads (board_id, creator_account, creator_folded, title, messages)
		VALUES ($1, $2, lower($2), 'The long thread', $3) RETURNING id`, boardID, author, benchMessages).Scan(&longID))
	_, err = pool.Exec(ctx, `
		INSERT INTO forum_messages (thread_id, kind, body, author_account, author_folded, awaiting)
		SELECT $1, 'note', 'Seeded message ' || g || ': ' || repeat('words ', 20), $2, lower($2), false
		FROM generate_series(1, $3::int) g`, longID, author, benchMessages)
	must(b, err)
	_, err = pool.Exec(ctx, `ANALYZE forum_threads; ANALYZE forum_messages; ANALYZE forum_claims; ANALYZE forum_attestations`)
	must(b, err)
	return pircan.ThreadKey(threadID), pircan.ClaimKey(claimID), pircan.ThreadKey(longID)
}

// explainClaims logs (with -v) the server's own time of the claims' reads.
func explainClaims(b *testing.B, thread, claim string) {
	ctx := b.Context()
	t := strings.TrimPrefix(thread, pircan.ThreadPrefix)
	c := strings.TrimPrefix(claim, pircan.ClaimPrefix)
	for _, q := range []struct{ name, sql string }{
		{"thread claims page", fmt.Sprintf(`SELECT * FROM forum_claims WHERE thread_id = %s ORDER BY id LIMIT 20`, t)},
		{"thread claims count", fmt.Sprintf(`SELECT count(*) FROM forum_claims WHERE thread_id = %s`, t)},
		{"their current attestations", fmt.Sprintf(`SELECT * FROM forum_attestations WHERE claim_id = ANY(ARRAY(
			SELECT id FROM forum_claims WHERE thread_id = %s ORDER BY id LIMIT 20)) AND current ORDER BY claim_id, id DESC`, t)},
		{"one claim's history", fmt.Sprintf(`SELECT * FROM forum_attestations WHERE claim_id = %s ORDER BY id DESC LIMIT 100`, c)},
	} {
		rows, err := shared.Pool().Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+q.sql)
		must(b, err)
		var plan []string
		for rows.Next() {
			var line string
			must(b, rows.Scan(&line))
			plan = append(plan, line)
		}
		rows.Close()
		b.Logf("%s:\n%s", q.name, strings.Join(plan, "\n"))
	}
}

// restPost POSTs body to path (under the API) with the client's token.
func (c *benchClient) restPost(ctx context.Context, e *env, path, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url(parley.APIPath+path), strings.NewReader(body))
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
		err = fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, raw)
	}
	var out any
	if err == nil {
		err = json.Unmarshal(raw, &out)
	}
	return err
}
