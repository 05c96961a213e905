// Package mcpclient tests an MCP server end to end with a client PIRCAN did
// not write: the official TypeScript SDK, driven by
// testdata/mcpclient/client.mjs under node. A test hands Run a plan of steps
// and gets one Outcome per step.
package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"github.com/creatimus/pircan/internal/nodeclient"
	"os"
	"os/exec"
	"testing"
	"time"
)

// runTimeout bounds one run of the client (the SDK's own request timeout is
// 60 s), so a hung server fails the test instead of the whole binary.
const runTimeout = 2 * time.Minute

// Step is one thing the client does after connecting (see client.mjs).
type Step struct {
	Op     string `json:"op"`
	Tool   string `json:"tool,omitempty"`
	Args   any    `json:"args,omitempty"`
	Method string `json:"method,omitempty"`
	Params any    `json:"params,omitempty"`
}

// ListTools lists the server's tools (one page). It also makes the SDK
// validate the structuredContent of later calls against the tools' output
// schemas, as a real client would.
func ListTools() Step { return Step{Op: "list_tools"} }

// Call calls a tool through the SDK's callTool; args is anything that
// marshals to a JSON object (nil sends {}).
func Call(tool string, args any) Step { return Step{Op: "call", Tool: tool, Args: args} }

// Raw sends any JSON-RPC request, for protocol errors the SDK's typed calls
// would not send; its result is accepted whatever its shape.
func Raw(method string, params any) Step { return Step{Op: "raw", Method: method, Params: params} }

// ConnectFails, as the first step, expects connecting to fail: its outcome
// carries the error (HTTPStatus 401 for a refused token) and the steps after
// it are skipped. Should the connection succeed, its outcome is OK and the
// plan goes on.
func ConnectFails() Step { return Step{Op: "connect_expect_fail"} }

// Run connects the SDK's streamable HTTP client to url with "Authorization:
// Bearer token" (none when token is empty), runs the steps and returns their
// outcomes, in order. It skips the test when node is not installed and fails
// it, with the client's stderr, when the harness itself fails.
func Run(t testing.TB, url, token string, steps ...Step) []Outcome {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("mcpclient: node is not installed (dev/test installs it): the TypeScript SDK client cannot run")
	}
	dir := nodeclient.Dir(t, "testdata/mcpclient")
	plan, err := json.Marshal(steps)
	if err != nil {
		t.Fatalf("mcpclient: plan: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PIRCAN_MCP_URL="+url, "PIRCAN_MCP_TOKEN="+token)
	cmd.Stdin = bytes.NewReader(plan)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcpclient: node client.mjs: %v\nplan: %s\nstdout:\n%s\nstderr:\n%s", err, plan, stdout.String(), stderr.String())
	}
	outcomes := parseOutcomes(t, stdout.Bytes(), stderr.String())
	if len(outcomes) != len(steps) {
		t.Fatalf("mcpclient: %d steps but %d outcomes\nplan: %s\nstdout:\n%s\nstderr:\n%s", len(steps), len(outcomes), plan, stdout.String(), stderr.String())
	}
	return outcomes
}

func parseOutcomes(t testing.TB, stdout []byte, stderr string) []Outcome {
	t.Helper()
	var outcomes []Outcome
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(nil, 64<<20) // a 60,000-byte message, JSON-escaped, several times over
	for sc.Scan() {
		var o Outcome
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("mcpclient: outcome line %d: %v: %s\nstderr:\n%s", len(outcomes)+1, err, sc.Bytes(), stderr)
		}
		o.Line = sc.Text()
		outcomes = append(outcomes, o)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("mcpclient: reading outcomes: %v\nstderr:\n%s", err, stderr)
	}
	return outcomes
}
