package bot_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/creatimus/pircan/internal/a2aclient"
	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/a2a"
)

// An A2A client (the official JS SDK, with an MCP agent's token) asks an
// IRC agent for tasks: the card from its capabilities, a task answered
// over IRC and polled to completed, one canceled, and the refusals.
func TestTasksA2AClient(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0"})
	x := bot.Agents(t, "tka", 1)[0]
	xID := x.Hello(`{"name":"` + x.Nick() + `","capabilities":["translate","summarize"]}`)
	c := newMCPAgent(t, bot, "a2atk")
	out := c.run(t,
		call("register", nil),
		call("contact", args{"to": xID, "purpose": "Translations over A2A", "scopes": []string{"task:translate"}}),
	)
	cID, _ := result(t, "register", out[0])["agent_id"].(string)
	result(t, "contact", out[1])
	agreementID := ircAccept(t, x)

	card := cardURL(bot, xID)
	const text = "Translate: Grüße aus Zürich ✓"
	got := a2aclient.Run(t, card, c.Token,
		a2aclient.Card(""),
		a2aclient.Send(text, "translate"),
		a2aclient.Send("Summarize this", "summarize"),
	)
	var served a2a.AgentCard
	if !got[0].OK || got[0].Decode(&served) != nil {
		t.Fatalf("card: %s", got[0].Line)
	}
	var skills []string
	for _, s := range served.Skills {
		skills = append(skills, s.ID)
	}
	if served.Name != x.Nick() || !slices.Equal(skills, []string{"translate", "summarize"}) || len(served.SupportedInterfaces) != 1 ||
		served.SupportedInterfaces[0].URL != a2a.AgentURL(bot.HTTPURL, xID) {
		t.Fatalf("card: %s", got[0].Line)
	}
	t1 := got[1].TaskID()
	if !got[1].OK || !pircan.ValidID(t1) || got[1].State() != "submitted" {
		t.Fatalf("send: %s", got[1].Line)
	}
	if ctx := got[1].Task()["contextId"]; ctx != agreementID {
		t.Errorf("send: contextId %v, want the agreement %s", ctx, agreementID)
	}
	a2aRefused(t, "send for a skill not granted", got[2], -32000, "not_authorized")

	// The IRC agent sees it and answers it; the client polls it done.
	notifyOf(x, pircan.NotifyTaskRequest)
	lines, end := x.AskList(`PIRCAN/1 TASKS`)
	tasks := joinTasks(t, lines)
	if len(tasks) != 1 || tasks[0].Str("task_id") != t1 || tasks[0].Str("text") != text || tasks[0].Str("skill") != "translate" ||
		tasks[0].Fields["truncated"] != nil || end.Int("total") != 1 {
		t.Fatalf("TASKS: %v %s", lines, end.Raw)
	}
	const answer = "Grüße aus Zürich ✓ → Greetings from Zurich ✓"
	if r := x.Ask(`PIRCAN/1 COMPLETE {"task_id":"` + t1 + `","outcome":"completed","text":"` + answer + `"}`); r.Str("state") != "completed" {
		t.Fatalf("COMPLETE: %s", r.Raw)
	}
	// This time the client is made as the SDK's users write it, from the
	// card's own interface URL (what dev/up prints): createFromUrl finds the
	// card below it.
	got = a2aclient.Run(t, card, c.Token,
		a2aclient.CardFrom(served.SupportedInterfaces[0].URL),
		a2aclient.Poll(t1, "completed"),
		a2aclient.Send("Translate another", ""), // the one task: scope granted
	)
	if !got[0].OK {
		t.Fatalf("createFromUrl(%s): %s", served.SupportedInterfaces[0].URL, got[0].Line)
	}
	if !got[1].OK || got[1].WireState() != "TASK_STATE_COMPLETED" || got[1].ArtifactText() != answer {
		t.Fatalf("poll: %s", got[1].Line)
	}
	t2 := got[2].TaskID()
	if !got[2].OK || got[2].State() != "submitted" || t2 == t1 {
		t.Fatalf("second send: %s", got[2].Line)
	}
	notifyOf(x, pircan.NotifyTaskRequest)

	// The requester cancels the second; only once. The target is told.
	got = a2aclient.Run(t, card, c.Token,
		a2aclient.Cancel(t2),
		a2aclient.Cancel(t2),
		a2aclient.Get(t2),
		a2aclient.List(),
	)
	if !got[0].OK || got[0].TaskID() != t2 || got[0].State() != "canceled" {
		t.Fatalf("cancel: %s", got[0].Line)
	}
	a2aRefused(t, "cancel again", got[1], -32002, "not_pending")
	if got[2].State() != "canceled" {
		t.Errorf("get after cancel: %s", got[2].Line)
	}
	listed := map[any]any{}
	for _, tk := range got[3].Tasks() {
		listed[tk["id"]] = sub(tk, "status")["state"]
	}
	if len(listed) != 2 || listed[t1] != "TASK_STATE_COMPLETED" || listed[t2] != "TASK_STATE_CANCELED" {
		t.Errorf("list: %s", got[3].Line)
	}
	notifyOf(x, pircan.NotifyTaskUpdate)
	if lines, end := x.AskList(`PIRCAN/1 TASKS`); len(lines) != 0 || end.Int("total") != 0 {
		t.Fatalf("TASKS after the cancel: %v %s", lines, end.Raw)
	}

	// Without a token: the card is public, the call is 401.
	got = a2aclient.Run(t, card, "",
		a2aclient.Card(""),
		a2aclient.Send("Translate without a token", "translate"),
	)
	if !got[0].OK {
		t.Fatalf("card without a token: %s", got[0].Line)
	}
	var data []struct {
		Metadata map[string]string `json:"metadata"`
	}
	if e := got[1].Err; got[1].OK || e == nil || e.HTTPStatus != http.StatusUnauthorized ||
		(len(e.Data) > 0 && (json.Unmarshal(e.Data, &data) != nil || len(data) == 0 || data[0].Metadata["code"] != "not_identified")) {
		t.Fatalf("send without a token: %s", got[1].Line)
	}
	// Nothing was filed by the refused calls.
	out = c.run(t, call("list_tasks", args{"direction": "outgoing"}))
	if items := listItems(t, "list_tasks", result(t, "list_tasks", out[0]), 2); items[0]["task_id"] != t2 || sub(items[0], "to")["agent_id"] != xID {
		t.Errorf("list_tasks of %s: %s", cID, out[0].Line)
	}
}
