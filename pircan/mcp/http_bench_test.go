package mcp_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatimus/pircan/pircan/mcp"
)

// BenchmarkMCPHealthz is issue 24's target 3 (BENCHMARKS.md "Issue 24"):
// an MCP whoami against GET /healthz on the same server, both by a plain
// net/http client (what any MCP client's HTTP costs is the client's), so
// the ratio is what the face adds to an HTTP round trip: the bearer check,
// the per-minute admission, the go-sdk's stateless handling, the caller,
// the operation and its result. /healthz is the bot's handler (a fixed
// "ok"). One client: the two alternate in every round; 50 clients (each
// its own token, agent and keep-alive connection): each in a phase of its
// own, /healthz first. Reports each one's p50/p99, whoami-p50 over
// healthz-p50 (the ratio judged), and calls/s.
//
//	go test -run '^$' -bench 'BenchmarkMCPHealthz' -benchtime 3000x ./pircan/mcp
//
// Raised for it: Limits.HTTPPerMinute (120 → 2^30, so every call is still
// admitted through the database's window, never refused).
func BenchmarkMCPHealthz(b *testing.B) {
	l := limits()
	l.HTTPPerMinute = 1 << 30
	e := newEnvWith(b, l, mcp.Config{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.Handle("POST "+mcp.Path, e.face.Handler())
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)

	clients := make([]*rawClient, benchClients)
	for i := range clients {
		_, tok := e.token(b)
		clients[i] = &rawClient{url: srv.URL, token: tok,
			http: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
		if err := clients[i].call("register"); err != nil {
			b.Fatal(err)
		}
	}
	calls := []func(*rawClient) error{(*rawClient).healthz, func(c *rawClient) error { return c.call("whoami") }}
	names := []string{"healthz", "whoami"}
	b.Run("clients=1", func(b *testing.B) { benchRaw(b, clients[:1], calls, names, true) })
	b.Run(fmt.Sprintf("clients=%d", benchClients), func(b *testing.B) { benchRaw(b, clients, calls, names, false) })
}

// rawClient speaks MCP's streamable HTTP as a plain client: a JSON-RPC
// tools/call POST with the bearer token, the JSON answer read whole.
type rawClient struct {
	url, token string
	http       *http.Client
	id         int
}

func (c *rawClient) healthz() error {
	res, err := c.http.Get(c.url + "/healthz")
	if err != nil {
		return err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK || string(body) != "ok\n" {
		return fmt.Errorf("healthz: %d %q %v", res.StatusCode, body, err)
	}
	return nil
}

func (c *rawClient) call(tool string) error {
	c.id++
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, c.id, tool)
	req, err := http.NewRequest(http.MethodPost, c.url+mcp.Path, strings.NewReader(body))
	if err != nil {
		return err
	}
	setMCPHeaders(req, c.token)
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	out, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK || !bytes.Contains(out, []byte(`"structuredContent"`)) || bytes.Contains(out, []byte(`"isError":true`)) {
		return fmt.Errorf("%s: %d %s %v", tool, res.StatusCode, out, err)
	}
	return nil
}

func setMCPHeaders(req *http.Request, token string) {
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", sdkProtocolVersion)
}

// sdkProtocolVersion is the MCP protocol version the raw clients speak
// (the go-sdk's client sends the same after its initialize).
const sdkProtocolVersion = "2025-06-18"

// benchRaw is benchRounds for raw clients: b.N rounds between the clients,
// each call of a round in turn (interleave) or each call's share in a
// phase of its own; reports p50/p99 per call, each p50 over the first's,
// and calls/s.
func benchRaw(b *testing.B, clients []*rawClient, calls []func(*rawClient) error, names []string, interleave bool) {
	for _, c := range clients {
		for _, call := range calls {
			if err := call(c); err != nil {
				b.Fatal(err)
			}
		}
	}
	durs := make([][][]time.Duration, len(clients))
	for i := range durs {
		durs[i] = make([][]time.Duration, len(calls))
	}
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
						s := time.Now()
						if errs[i] = calls[n](c); errs[i] != nil {
							return
						}
						durs[i][n] = append(durs[i][n], time.Since(s))
					}
				}
			})
		}
		wg.Wait()
	}
	b.ResetTimer()
	t0 := time.Now()
	if interleave {
		run([]int{0, 1})
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
	var floor float64
	total := 0
	for n, name := range names {
		var all []time.Duration
		for i := range durs {
			all = append(all, durs[i][n]...)
		}
		slices.Sort(all)
		total += len(all)
		rank := func(q float64) float64 {
			return float64(all[max(int(q*float64(len(all))+0.999999)-1, 0)]) / 1e6
		}
		p50 := rank(0.5)
		b.ReportMetric(p50, name+"-p50-ms")
		b.ReportMetric(rank(0.99), name+"-p99-ms")
		if n == 0 {
			floor = p50
		} else {
			b.ReportMetric(p50/floor, name+"/"+names[0]+"-p50")
		}
	}
	b.ReportMetric(float64(total)/wall.Seconds(), "calls/s")
}

// BenchmarkMCPAllocs is what the server allocates for one MCP whoami: the
// face's handler alone, no client, no network (B/op and allocs/op are per
// call). With -memprofile it says where (BENCHMARKS.md "Issue 24").
//
//	go test -run '^$' -bench 'BenchmarkMCPAllocs' -benchtime 2000x -benchmem ./pircan/mcp
func BenchmarkMCPAllocs(b *testing.B) {
	l := limits()
	l.HTTPPerMinute = 1 << 30
	e := newEnvWith(b, l, mcp.Config{})
	_, tok := e.token(b)
	if res, err := e.session(b, tok).CallTool(b.Context(), &sdk.CallToolParams{Name: "register",
		Arguments: map[string]any{}}); err != nil || res.IsError {
		b.Fatalf("register: %v %v", err, res)
	}
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`)
	h := e.face.Handler()
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, mcp.Path, bytes.NewReader(body))
		setMCPHeaders(r, tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK || bytes.Contains(w.Body.Bytes(), []byte(`"isError":true`)) {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
