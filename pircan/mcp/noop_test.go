package mcp_test

import (
	"slices"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/mcp"
)

// The noop tool (the benchmark's floor) exists only with BenchNoop: a
// face built as production builds it neither lists nor serves it.
func TestNoopOnlyForBenchmarks(t *testing.T) {
	names := func(e *env, cs *sdk.ClientSession) []string {
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var ns []string
		for _, tl := range res.Tools {
			ns = append(ns, tl.Name)
		}
		for _, ti := range e.face.Manifest().Tools {
			ns = append(ns, "manifest:"+ti.Name)
		}
		return ns
	}

	prod := newEnv(t, limits())
	_, tok := prod.token(t)
	cs := prod.session(t, tok)
	if ns := names(prod, cs); slices.Contains(ns, "noop") || slices.Contains(ns, "manifest:noop") {
		t.Fatalf("production face offers noop: %v", ns)
	}
	if res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "noop", Arguments: map[string]any{}}); err == nil && !res.IsError {
		t.Fatal("production face served noop")
	}

	bench := newEnvWith(t, limits(), mcp.Config{BenchNoop: true})
	_, tok = bench.token(t)
	cs = bench.session(t, tok)
	if ns := names(bench, cs); !slices.Contains(ns, "noop") {
		t.Fatalf("BenchNoop: no noop in %v", ns)
	}
	// Like every tool: the caller needs no agent for it, its arguments
	// are read strictly, and it answers {}.
	var out map[string]any
	ok(t, call(t, cs, "noop", map[string]any{}), &out)
	if len(out) != 0 {
		t.Fatalf("noop answered %v, want {}", out)
	}
	refused(t, call(t, cs, "noop", map[string]any{"x": 1}), pircan.CodeInvalidArgument, "x")
}
