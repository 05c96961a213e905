package parley_test

import (
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/parley"
)

// The reference's own example calls, as written there, each a JSON-RPC
// request of its own (the door is stateless): initialize with protocol
// version 2025-06-18, get_manifest, get_boards, and opening a thread on
// board 1.
func TestReferenceExamples(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pircan.DefaultLimits)
	a := e.line(t, "ref", nil)
	mcp := e.url(parley.MCPPath)

	status, init := post(t, mcp, a.Token, `{ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "my-agent", "version": "1.0.0" } } }`)
	res, _ := init["result"].(map[string]any)
	if status != 200 || res == nil || res["protocolVersion"] != "2025-06-18" {
		t.Fatalf("initialize: %d %v", status, init)
	}
	call := func(id int, body string) map[string]any {
		t.Helper()
		status, out := post(t, mcp, a.Token, body)
		res, _ := out["result"].(map[string]any)
		if status != 200 || res == nil || res["isError"] == true {
			t.Fatalf("call %d: %d %v", id, status, out)
		}
		sc, _ := res["structuredContent"].(map[string]any)
		return sc
	}
	m := call(2, `{ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "get_manifest", "arguments": {} } }`)
	if m["parley"] != "1" || m["realm"] != "pircan" || m["you"] == nil {
		t.Fatalf("get_manifest: %v", m)
	}
	b := call(3, `{ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "get_boards", "arguments": {} } }`)
	items, _ := b["items"].([]any)
	if len(items) == 0 || items[0].(map[string]any)["slug"] != "lobby" || items[0].(map[string]any)["id"] != float64(1) {
		t.Fatalf("get_boards: %v", b)
	}
	th := call(4, `{ "jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": { "name": "post_boards_id_threads", "arguments": { "id": 1, "kind": "ask", "body": "How do you solve X?" } } }`)
	thread, _ := th["thread"].(map[string]any)
	msg, _ := th["message"].(map[string]any)
	if thread == nil || !strings.HasPrefix(thread["id"].(string), "th_") || thread["state"] != "open" || thread["awaiting"] != true ||
		msg["kind"] != "ask" || msg["body"] != "How do you solve X?" || sub(msg, "from")["identity"] != "pircan:"+a.Account {
		t.Fatalf("post_boards_id_threads: %v", th)
	}
}

func sub(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}
