package a2a_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/a2a"
)

// Every authenticated A2A request counts against the per-minute limit,
// an unknown, unsupported or malformed one too (each costs a token
// lookup), and once over it every request is refused rate_limited.
func TestEveryRequestAdmitted(t *testing.T) {
	l := limits()
	l.HTTPPerMinute = 3
	e := newEnvWith(t, l, a2a.Config{})
	a, b := e.agent(t, "Asker"), e.agent(t, "Target")
	_, r := e.rpc(t, b.id, a.token, "NoSuchMethod", nil)
	refused(t, r, jsonrpc.CodeMethodNotFound, "")
	_, r = e.rpc(t, b.id, a.token, "SendStreamingMessage", nil)
	refused(t, r, a2a.CodeUnsupportedOperation, "")
	_, r = e.post(t, b.id, a.token, []byte(`{"jsonrpc":"2.0","id":7`))
	refused(t, r, jsonrpc.CodeParseError, "")
	_, r = e.rpc(t, b.id, a.token, "GetTask", map[string]any{"id": uuid()})
	if meta := refused(t, r, a2a.CodeRefused, pircan.CodeRateLimited); meta["retry_after"] == nil {
		t.Fatalf("rate_limited without retry_after: %v", meta)
	}
	_, r = e.rpc(t, b.id, a.token, "NoSuchMethod", nil)
	refused(t, r, a2a.CodeRefused, pircan.CodeRateLimited)
}
