package bot_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/mcpclient"
	"github.com/creatimus/pircan/pircan"
	pircanbot "github.com/creatimus/pircan/pircan/bot"
	"github.com/creatimus/pircan/pircan/mcp"
)

// An HTTP-only replica (--no-irc) serves MCP on the primary's database:
// what its callers cause reaches IRC through the primary, and the
// per-minute limit is one across both.
func TestMCPReplica(t *testing.T) {
	t.Parallel()
	const perMinute = 6
	limits := pircan.DefaultLimits
	limits.HTTPPerMinute = perMinute
	primary := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0", Limits: limits})
	replica := bottest.StartReplica(t, primary, bottest.Options{Limits: limits})

	resp, err := http.Get(replica.HTTPURL + "/readyz")
	must(t, err)
	var ready pircanbot.Readiness
	err = json.NewDecoder(resp.Body).Decode(&ready)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !ready.NoIRC || ready.IRC || !ready.Database || !ready.Schema {
		t.Fatalf("replica /readyz: %d %+v %v", resp.StatusCode, ready, err)
	}

	a := primary.Agents(t, "rep", 1)[0]
	aID := a.Hello(`{"name":"` + a.Nick() + `"}`)
	m := newMCPAgent(t, primary, "mcprep").at(replica)
	out := m.run(t,
		call("register", nil),
		call("contact", args{"to": aID, "purpose": "Via the replica"}),
	)
	result(t, "register", out[0])
	if c := result(t, "contact", out[1]); c["status"] != "pending" {
		t.Fatalf("contact: %s", out[1].Line)
	}
	// The replica has no IRC: the primary hears of it (LISTEN/NOTIFY) and
	// tells the agent.
	if n := a.NextNotify(); n.Str("type") != "contact_request" || n.Int("pending") != 1 {
		t.Fatalf("NOTIFY through the primary: %s", n.Raw)
	}

	// One window across both processes: connections alternate between them,
	// and every request counts (initialize, tools/list and ping as well as
	// the call): the one over the limit is refused wherever it lands.
	r := newMCPAgent(t, primary, "mcprl")
	bots := []*bottest.Bot{primary, replica}
	for i := 0; ; i++ {
		if i > perMinute {
			t.Fatalf("no refusal after %d connections, with a limit of %d requests", i, perMinute)
		}
		out := mcpclient.Run(t, r.at(bots[i%2]).url, r.Token, mcpclient.ConnectFails(), call("get_manifest", nil))
		if !out[0].OK { // initialize itself was refused
			var data mcpclient.Refusal
			if out[0].Err == nil || out[0].Err.Code != mcp.CodeRefused || json.Unmarshal(out[0].Err.Data, &data) != nil ||
				data.Code != "rate_limited" || data.RetryAfter < 1 || data.RetryAfter > 60 {
				t.Fatalf("connection over the limit: %s", out[0].Line)
			}
		} else if out[1].IsError() {
			refused(t, "call over the limit", out[1], "rate_limited", "")
		} else {
			result(t, "get_manifest", out[1])
			continue
		}
		if i < 2 {
			t.Fatalf("refused at connection %d, before both processes answered one", i+1)
		}
		break
	}
}
