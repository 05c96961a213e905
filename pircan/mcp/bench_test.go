package mcp_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/mcp"
)

// BenchmarkMCP times tool calls through the whole MCP face: the go-sdk
// client, real HTTP over loopback, the bearer check, Admit, the operation
// and Postgres (BENCHMARKS.md "MCP face"). noop is the floor: the same
// path with an operation that does nothing. Each of up to benchClients
// clients has its own token, agent, session and TCP connection; b.N calls
// are split between the clients of a sub-benchmark, which call in a loop.
//
// Raised for it: Limits.HTTPPerMinute (120 → 2^30, so Admit still counts
// every call in the database but never refuses) and RegistrationsHour (for
// the setup's registrations).
func BenchmarkMCP(b *testing.B) {
	l := limits()
	l.HTTPPerMinute = 1 << 30
	e := newEnvWith(b, l, mcp.Config{BenchNoop: true})
	start := time.Now()
	seedDirectory(b, e.core, benchDirectory)
	sessions := make([]*sdk.ClientSession, benchClients)
	for i := range sessions {
		_, tok := e.token(b)
		// A transport per client: http.DefaultTransport keeps only 2 idle
		// connections per host, so 50 clients on it would reconnect.
		sessions[i] = e.sessionVia(b, tok, http.DefaultTransport.(*http.Transport).Clone())
		if res, err := sessions[i].CallTool(b.Context(), &sdk.CallToolParams{Name: "register",
			Arguments: map[string]any{}}); err != nil || res.IsError {
			b.Fatalf("register: %v %v", err, res)
		}
	}
	b.Logf("setup: %d agents in the directory, %d clients: %v", benchDirectory, benchClients, time.Since(start))

	calls := []struct {
		name string
		args map[string]any
	}{
		{"noop", map[string]any{}},
		{"whoami", map[string]any{}},
		// One in ten of the directory has the capability: 100 matches,
		// FIND's default page of 5.
		{"find_agents", map[string]any{"capability": benchCapability}},
	}
	// The floor runs just before the tools at the same concurrency, so
	// they stand side by side in one run.
	for _, n := range []int{1, benchClients} {
		for _, c := range calls {
			b.Run(fmt.Sprintf("%s/clients=%d", c.name, n), func(b *testing.B) {
				benchCalls(b, sessions[:n], &sdk.CallToolParams{Name: c.name, Arguments: c.args})
			})
		}
	}
}

const (
	benchDirectory  = 1000
	benchClients    = 50
	benchCapability = "translation"
)

// benchCalls has the sessions make b.N calls of p between them, each in a
// loop of its own, after one untimed call each, and reports the latency's
// p50/p99 (nearest rank over every call) and the calls per second.
func benchCalls(b *testing.B, sessions []*sdk.ClientSession, p *sdk.CallToolParams) {
	ctx := b.Context()
	one := func(cs *sdk.ClientSession) error {
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("%s refused: %v", p.Name, res.Content)
		}
		return nil
	}
	for _, cs := range sessions {
		if err := one(cs); err != nil {
			b.Fatal(err)
		}
	}
	durs := make([][]time.Duration, len(sessions))
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	b.ResetTimer()
	t0 := time.Now()
	for i, cs := range sessions {
		share := b.N / len(sessions)
		if i < b.N%len(sessions) {
			share++
		}
		durs[i] = make([]time.Duration, 0, share)
		wg.Go(func() {
			for range share {
				s := time.Now()
				if errs[i] = one(cs); errs[i] != nil {
					return
				}
				durs[i] = append(durs[i], time.Since(s))
			}
		})
	}
	wg.Wait()
	wall := time.Since(t0)
	b.StopTimer()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	all := slices.Sorted(slices.Values(slices.Concat(durs...)))
	rank := func(q float64) float64 { // nearest rank
		return float64(all[max(int(q*float64(len(all))+0.999999)-1, 0)]) / 1e6
	}
	b.ReportMetric(rank(0.50), "p50-ms")
	b.ReportMetric(rank(0.99), "p99-ms")
	b.ReportMetric(float64(len(all))/wall.Seconds(), "req/s")
}

// seedDirectory registers n agents through the core, four at a time;
// every tenth has benchCapability.
func seedDirectory(b *testing.B, core *pircan.Service, n int) {
	prefix := unique("dir")
	hello := func(i int) error {
		name := fmt.Sprintf("%s-%04d", prefix, i)
		desc := fmt.Sprintf("Benchmark agent %d of the MCP face's directory.", i)
		caps := []string{"bench", fmt.Sprintf("skill-%d", i%37)}
		if i%10 == 0 {
			caps = append(caps, benchCapability)
		}
		c := pircan.Caller{Account: name, Face: pircan.FaceMCP, Sizes: pircan.FullSizes}
		_, err := core.Hello(b.Context(), c, pircan.HelloArgs{Name: &name, Description: &desc, Capabilities: &caps})
		return err
	}
	work := make(chan int)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for w := range errs {
		wg.Go(func() {
			for i := range work {
				if errs[w] == nil {
					errs[w] = hello(i)
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
}
