package bot_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/mcpclient"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/mcp"
)

// The end-to-end tests of the MCP face drive a real bot's POST /mcp with
// the official TypeScript SDK client (internal/mcpclient), beside IRC
// agents on the real network, over the real database.

// mcpAgent is an account with a bearer token, speaking MCP to one process.
type mcpAgent struct {
	Account string
	Token   string
	url     string
}

// newMCPAgent issues a token for a new account (one of its own, as an
// operator would with `pircan token issue`).
func newMCPAgent(t *testing.T, bot *bottest.Bot, base string) *mcpAgent {
	t.Helper()
	account := bottest.Unique(base)
	tok, err := bot.Core().IssueToken(t.Context(), pircan.OperatorCaller("operator:test"), pircan.IssueTokenArgs{Account: ptr(account), Label: ptr("e2e"), ExpiresIn: ptr(time.Hour)})
	must(t, err)
	return &mcpAgent{Account: account, Token: tok.Secret, url: bot.HTTPURL + mcp.Path}
}

// at is the same agent speaking to another process (a replica).
func (m *mcpAgent) at(b *bottest.Bot) *mcpAgent {
	c := *m
	c.url = b.HTTPURL + mcp.Path
	return &c
}

// run lists the tools first, so that the SDK validates the
// structuredContent of every later result against its tool's output
// schema, then runs steps. Every step must complete: a result the SDK
// finds off its schema is an error outcome and fails the test. It returns
// the outcomes of steps (not of the listing).
func (m *mcpAgent) run(t *testing.T, steps ...mcpclient.Step) []mcpclient.Outcome {
	t.Helper()
	out := mcpclient.Run(t, m.url, m.Token, append([]mcpclient.Step{mcpclient.ListTools()}, steps...)...)
	for i, o := range out {
		if !o.OK {
			t.Fatalf("%s: step %d failed: %s", m.Account, i, o.Line)
		}
	}
	return out[1:]
}

// call is a plan step (shorter at the call sites).
func call(tool string, args any) mcpclient.Step { return mcpclient.Call(tool, args) }

// args builds a tool's arguments.
type args = map[string]any

// result asserts that o is a result, not a refusal, and returns its
// structuredContent.
func result(t *testing.T, what string, o mcpclient.Outcome) map[string]any {
	t.Helper()
	if o.IsError() || o.Structured() == nil {
		t.Fatalf("%s: want a result: %s", what, o.Line)
	}
	return o.Structured()
}

// refused asserts that o is a refusal with code (and field, when given).
func refused(t *testing.T, what string, o mcpclient.Outcome, code, field string) mcpclient.Refusal {
	t.Helper()
	r := o.Refusal()
	if !o.IsError() || r.Code != code || r.Field != field || r.Message == "" {
		t.Errorf("%s: want refusal %s (field %q): %s", what, code, field, o.Line)
	}
	return r
}

// hasKeys asserts that m has exactly the keys want: the IRC reply's field
// names, no more.
func hasKeys(t *testing.T, what string, m map[string]any, want ...string) {
	t.Helper()
	got := make([]string, 0, len(m))
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: keys %v, want %v", what, got, want)
	}
}

// listItems asserts that m is a list result {items, returned, total, offset}
// with total items in all, and returns its items.
func listItems(t *testing.T, what string, m map[string]any, total int) []map[string]any {
	t.Helper()
	hasKeys(t, what, m, "items", "returned", "total", "offset")
	list, _ := m["items"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, it := range list {
		obj, _ := it.(map[string]any)
		out = append(out, obj)
	}
	if m["total"] != float64(total) || m["returned"] != float64(len(out)) || m["offset"] != float64(0) {
		t.Fatalf("%s: want total %d, returned %d, offset 0: %v", what, total, len(out), m)
	}
	return out
}

// sub is the object under key (nil when it is none).
func sub(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

// longText is exactly n bytes of UTF-8 with two-, three- and four-byte
// characters in its first 200.
func longText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n-40; i++ {
		fmt.Fprintf(&b, "Grüße %d aus Zürich, 東京 🚀. ", i)
	}
	for b.Len() < n {
		b.WriteByte('.')
	}
	return b.String()
}

// ptr is the address of v: an argument given.
func ptr[T any](v T) *T { return &v }
