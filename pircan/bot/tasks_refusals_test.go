package bot_test

import (
	"testing"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/pircan"
)

// A revoked agreement stops new tasks but leaves the open one cancelable;
// a message-only agreement, or task:<skill> granted the other way, grants
// no task.
func TestTaskRevocationAndScopes(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0"})
	x := bot.Agents(t, "tkr", 1)[0]
	xID := x.Hello(`{"name":"` + x.Nick() + `"}`)
	r, p := newMCPAgent(t, bot, "tkreq"), newMCPAgent(t, bot, "tkpeer")

	out := r.run(t,
		call("register", nil),
		call("contact", args{"to": xID, "purpose": "Translations", "scopes": []string{"task:translate"}}),
	)
	rID, _ := result(t, "register", out[0])["agent_id"].(string)
	result(t, "contact", out[1])
	agreementID := ircAccept(t, x)
	out = r.run(t, call("send_task", args{"to": xID, "skill": "translate", "text": "Before the revoke"}))
	open, _ := result(t, "send_task", out[0])["task_id"].(string)
	notifyOf(x, pircan.NotifyTaskRequest)

	// The target revokes with the task open.
	if rv := x.Ask(`PIRCAN/1 REVOKE {"agreement_id":"` + agreementID + `"}`); rv.Str("status") != "revoked" {
		t.Fatalf("REVOKE: %s", rv.Raw)
	}
	out = r.run(t,
		call("send_task", args{"to": xID, "skill": "translate", "text": "After the revoke"}),
		call("cancel_task", args{"task_id": open}),
		call("list_tasks", args{"direction": "outgoing"}),
	)
	refused(t, "send_task after the revoke", out[0], "not_authorized", "")
	if c := result(t, "cancel_task", out[1]); c["task_id"] != open || c["state"] != "canceled" {
		t.Fatalf("cancel_task after the revoke: %s", out[1].Line)
	}
	if items := listItems(t, "list_tasks", result(t, "list_tasks", out[2]), 1); items[0]["task_id"] != open || items[0]["state"] != "canceled" {
		t.Fatalf("list_tasks: %s", out[2].Line)
	}
	notifyOf(x, pircan.NotifyTaskUpdate)
	if rc := x.Ask(`PIRCAN/1 COMPLETE {"task_id":"` + open + `","outcome":"completed","text":"late"}`); rc.Code() != "not_pending" {
		t.Fatalf("COMPLETE of a canceled task: %s", rc.Raw)
	}

	// Scopes over MCP: message only, then task:translate granted to p by r
	// (p asked): r still may not ask p; p may ask r.
	out = p.run(t, call("register", nil))
	pID, _ := result(t, "register", out[0])["agent_id"].(string)
	contactAccept(t, r, p, pID)
	refused(t, "send_task under a message agreement", r.run(t, call("send_task", args{"to": pID, "skill": "translate", "text": "Hi"}))[0], "not_authorized", "")
	contactAccept(t, p, r, rID, "task:translate")
	refused(t, "send_task under the other party's grant", r.run(t, call("send_task", args{"to": pID, "skill": "translate", "text": "Hi"}))[0], "not_authorized", "")
	if s := result(t, "send_task the granted way", p.run(t, call("send_task", args{"to": rID, "skill": "translate", "text": "Hi"}))[0]); s["state"] != "open" {
		t.Fatalf("send_task the granted way: %v", s)
	}
}
