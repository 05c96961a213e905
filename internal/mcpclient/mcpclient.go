// Package mcpclient tests an MCP server end to end with a client PIRCAN did
// not write: the official TypeScript SDK, driven by
// testdata/mcpclient/client.mjs under node. A test hands Run a plan of steps
// and gets one Outcome per step.
package mcpclient

import (
	"encoding/json"
	"github.com/creatimus/pircan/internal/nodeclient"
	"testing"
)

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
	lines := nodeclient.Run(t, "testdata/mcpclient", []string{"PIRCAN_MCP_URL=" + url, "PIRCAN_MCP_TOKEN=" + token}, steps, len(steps))
	outcomes := make([]Outcome, len(lines))
	for i, line := range lines {
		if err := json.Unmarshal(line, &outcomes[i]); err != nil {
			t.Fatalf("mcpclient: outcome line %d: %v: %s", i+1, err, line)
		}
		outcomes[i].Line = string(line)
	}
	return outcomes
}
