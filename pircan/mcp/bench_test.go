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
// clients has its own token, agent, session and TCP connection; b.N rounds
// are split between the clients of a sub-benchmark, which call in a loop.
// One client: a round calls every tool once, in an order that turns each
// round, so the floor and the tools meet the same machine at the same
// moments (a neighbour's load, the heap's growth) and the ratios are the
// rounds'. 50 clients: each tool in a phase of its own, all 50 calling it,
// the floor first (mixed, each tool's latency would be the queue of all
// three).
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

	calls := []*sdk.CallToolParams{
		{Name: "noop", Arguments: map[string]any{}},
		{Name: "whoami", Arguments: map[string]any{}},
		// One in ten of the directory has the capability: 100 matches,
		// FIND's default page of 5.
		{Name: "find_agents", Arguments: map[string]any{"capability": benchCapability}},
	}
	b.Run("clients=1", func(b *testing.B) { benchRounds(b, sessions[:1], calls, true) })
	b.Run(fmt.Sprintf("clients=%d", benchClients), func(b *testing.B) { benchRounds(b, sessions, calls, false) })
}

const (
	benchDirectory  = 1000
	benchClients    = 50
	benchCapability = "translation"
)

// benchRounds has the sessions make b.N rounds of calls between them, each
// in a loop of its own, after one untimed round each: every tool in each
// round (interleave), or each tool's share of the rounds in a phase of its
// own. It reports each tool's latency (p50/p99, nearest rank over its
// calls), each tool's p50 over the first's (the floor), and the calls per
// second.
func benchRounds(b *testing.B, sessions []*sdk.ClientSession, calls []*sdk.CallToolParams, interleave bool) {
	ctx := b.Context()
	one := func(cs *sdk.ClientSession, p *sdk.CallToolParams) error {
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
		for _, p := range calls {
			if err := one(cs, p); err != nil {
				b.Fatal(err)
			}
		}
	}
	// durs[client][tool]
	durs := make([][][]time.Duration, len(sessions))
	for i := range durs {
		durs[i] = make([][]time.Duration, len(calls))
	}
	errs := make([]error, len(sessions))
	// run has every client make its share of the rounds, of the tools in
	// tools (indexes into calls).
	run := func(tools []int) {
		var wg sync.WaitGroup
		for i, cs := range sessions {
			share := b.N / len(sessions)
			if i < b.N%len(sessions) {
				share++
			}
			wg.Go(func() {
				for r := range share {
					for k := range tools {
						c := tools[(r+i+k)%len(tools)]
						s := time.Now()
						if errs[i] = one(cs, calls[c]); errs[i] != nil {
							return
						}
						durs[i][c] = append(durs[i][c], time.Since(s))
					}
				}
			})
		}
		wg.Wait()
	}
	b.ResetTimer()
	t0 := time.Now()
	all := make([]int, len(calls))
	for c := range all {
		all[c] = c
	}
	if interleave {
		run(all)
	} else {
		for _, c := range all {
			run([]int{c})
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
	for c, p := range calls {
		var all []time.Duration
		for i := range durs {
			all = append(all, durs[i][c]...)
		}
		slices.Sort(all)
		total += len(all)
		rank := func(q float64) float64 { // nearest rank
			return float64(all[max(int(q*float64(len(all))+0.999999)-1, 0)]) / 1e6
		}
		p50 := rank(0.50)
		b.ReportMetric(p50, p.Name+"-p50-ms")
		b.ReportMetric(rank(0.99), p.Name+"-p99-ms")
		if c == 0 {
			floor = p50
		} else {
			b.ReportMetric(p50/floor, p.Name+"/"+calls[0].Name+"-p50")
		}
	}
	b.ReportMetric(float64(total)/wall.Seconds(), "calls/s")
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
