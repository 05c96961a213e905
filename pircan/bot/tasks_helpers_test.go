package bot_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/creatimus/pircan/internal/a2aclient"
	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/a2a"
	"github.com/creatimus/pircan/pircan/irc"
)

// Helpers of the task end-to-end tests (tasks_e2e_test.go).

// joinTasks folds TASK-MORE lines into the TASK they continue, as
// JoinMessages does for MESSAGE: the last line says whether it was cut.
func joinTasks(t *testing.T, items []bottest.Reply) []bottest.Reply {
	t.Helper()
	var out []bottest.Reply
	for _, it := range items {
		if len(it.Raw) > irc.MaxReplyBytes {
			t.Errorf("line over %d bytes: %s", irc.MaxReplyBytes, it.Raw)
		}
		if it.Verb == "TASK-MORE" && len(out) > 0 && out[len(out)-1].Str("task_id") == it.Str("task_id") {
			prev := &out[len(out)-1]
			prev.Fields["text"] = prev.Str("text") + it.Str("text")
			delete(prev.Fields, "continues")
			delete(prev.Fields, "truncated")
			if it.Fields["truncated"] == true {
				prev.Fields["truncated"] = true
			}
			continue
		}
		if it.Verb != "TASK" {
			t.Fatalf("TASKS line: %s", it.Raw)
		}
		out = append(out, it)
	}
	return out
}

// notifyOf waits for the agent's next NOTIFY of type typ, passing over
// others (task_request and task_update may come in either order when both
// are due).
func notifyOf(a *bottest.Agent, typ string) bottest.Reply {
	for {
		if n := a.NextNotify(); n.Str("type") == typ {
			return n
		}
	}
}

// ircAccept has the IRC agent accept the one pending contact request it was
// told of, and returns the agreement's id.
func ircAccept(t *testing.T, a *bottest.Agent) string {
	t.Helper()
	if n := notifyOf(a, pircan.NotifyContactRequest); n.Int("pending") != 1 {
		t.Fatalf("NOTIFY: %s", n.Raw)
	}
	reqs, _ := a.AskList(`PIRCAN/1 CONTACTS`)
	if len(reqs) != 1 {
		t.Fatalf("CONTACTS: %v", reqs)
	}
	r := a.Ask(`PIRCAN/1 ACCEPT {"request_id":"` + reqs[0].Str("request_id") + `"}`)
	if r.Verb != "ACCEPT" || !pircan.ValidID(r.Str("agreement_id")) {
		t.Fatalf("ACCEPT: %s", r.Raw)
	}
	return r.Str("agreement_id")
}

// cardURL is the public Agent Card of an agent of bot.
func cardURL(bot *bottest.Bot, agentID string) string {
	return bot.HTTPURL + a2a.Path + agentID + "/" + a2a.CardPath
}

// a2aRefused asserts that o is a JSON-RPC error with code rpcCode whose
// ErrorInfo (data[0]) says the PIRCAN code.
func a2aRefused(t *testing.T, what string, o a2aclient.Outcome, rpcCode int, code string) {
	t.Helper()
	var data []struct {
		Reason   string            `json:"reason"`
		Domain   string            `json:"domain"`
		Metadata map[string]string `json:"metadata"`
	}
	if o.OK || o.Err == nil || o.Err.Code != rpcCode || json.Unmarshal(o.Err.Data, &data) != nil || len(data) == 0 ||
		data[0].Metadata["code"] != code || data[0].Reason != strings.ToUpper(code) || data[0].Domain != "pircan" {
		t.Errorf("%s: want JSON-RPC error %d with code %s: %s", what, rpcCode, code, o.Line)
	}
}
