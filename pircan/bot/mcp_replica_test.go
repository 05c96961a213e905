package bot_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/pircan"
	pircanbot "github.com/creatimus/pircan/pircan/bot"
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

	// One window across both processes: calls alternate between them, and
	// the one over the limit is refused wherever it lands.
	r := newMCPAgent(t, primary, "mcprl")
	bots := []*bottest.Bot{primary, replica}
	for i := range perMinute + 1 {
		out := r.at(bots[i%2]).run(t, call("get_manifest", nil))
		if i < perMinute {
			result(t, "get_manifest", out[0])
			continue
		}
		if rr := refused(t, "call over the limit", out[0], "rate_limited", ""); rr.RetryAfter < 1 || rr.RetryAfter > 60 {
			t.Errorf("retry_after %d: %s", rr.RetryAfter, out[0].Line)
		}
	}
}
