package bot_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/pircan"
)

// Tasks across the faces (DESIGN.md "Tasks"): an MCP requester and an IRC
// target (TASKS shows the text cut to 200 characters, COMPLETE answers it),
// then two MCP agents with 60,000-byte texts both ways.
func TestTasksIRCAndMCP(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0"})
	b := bot.Agents(t, "tkb", 1)[0]
	bID := b.Hello(`{"name":"` + b.Nick() + `"}`)
	m, m2 := newMCPAgent(t, bot, "mcptk"), newMCPAgent(t, bot, "mcptq")

	out := m.run(t,
		call("register", nil),
		call("contact", args{"to": bID, "purpose": "Translations", "scopes": []string{"task:translate"}}),
	)
	mID, _ := result(t, "register", out[0])["agent_id"].(string)
	result(t, "contact", out[1])
	ircAccept(t, b)

	long := longText(pircan.MaxStoredText)
	out = m.run(t,
		call("send_task", args{"to": bID, "skill": "translate", "text": long}),
		call("send_task", args{"to": bID, "skill": "translate", "text": long + "x"}),
	)
	sent := result(t, "send_task", out[0])
	hasKeys(t, "send_task", sent, "task_id", "skill", "to", "at", "state", "text")
	taskID, _ := sent["task_id"].(string)
	if !pircan.ValidID(taskID) || sent["state"] != "open" || sent["skill"] != "translate" || sent["text"] != long ||
		sub(sent, "to")["agent_id"] != bID || sub(sent, "to")["name"] != b.Nick() {
		t.Fatalf("send_task: %.400s", out[0].Line)
	}
	refused(t, "send_task of 60,001 bytes", out[1], "too_long", "text")

	// The IRC target is told, content-free, and sees the first 200
	// characters, saying it was cut.
	if n := b.NextNotify(); n.Str("type") != pircan.NotifyTaskRequest || n.Int("open") != 1 || strings.Contains(n.Raw, "Zürich") {
		t.Fatalf("NOTIFY: %s", n.Raw)
	}
	// With the longest id, every TASK and TASK-MORE line fits the IRC line
	// and carries it (nextRaw checks each); TASKS marks nothing.
	if ls := askAll(t, b, `PIRCAN/1 TASKS {"id":"`+longID+`"}`); len(ls) < 3 || ls[0].Verb != "TASK" ||
		ls[1].Verb != "TASK-MORE" || ls[len(ls)-1].Verb != "TASKS-END" {
		t.Fatalf("TASKS with a 64-character id: %v", ls)
	}
	lines, end := b.AskList(`PIRCAN/1 TASKS`)
	if len(lines) < 2 || lines[0].Verb != "TASK" || lines[len(lines)-1].Verb != "TASK-MORE" || end.Verb != "TASKS-END" || end.Int("total") != 1 {
		t.Fatalf("TASKS: %v %s", lines, end.Raw)
	}
	tasks := joinTasks(t, lines)
	head := string([]rune(long)[:pircan.MaxIRCText])
	if len(tasks) != 1 || tasks[0].Str("task_id") != taskID || tasks[0].Str("skill") != "translate" || tasks[0].Str("text") != head ||
		tasks[0].Fields["truncated"] != true || !utf8.ValidString(tasks[0].Str("text")) || len(head) <= pircan.MaxIRCText ||
		fmt.Sprint(tasks[0].Fields["from"]) != fmt.Sprint(map[string]any{"agent_id": mID, "name": m.Account}) {
		t.Fatalf("TASK: %v", tasks)
	}

	// COMPLETE holds IRC's 200 characters.
	complete := func(text string) bottest.Reply {
		return b.Ask(`PIRCAN/1 COMPLETE {"task_id":"` + taskID + `","outcome":"completed","text":"` + text + `"}`)
	}
	if r := complete(strings.Repeat("x", pircan.MaxIRCText+1)); r.Verb != "ERROR" || r.Code() != "too_long" || r.Str("field") != "text" {
		t.Fatalf("COMPLETE of 201 characters: %s", r.Raw)
	}
	const answer = "Grüße aus Zürich — übersetzt ✓ 東京"
	if r := complete(answer); r.Verb != "COMPLETE" || r.Str("task_id") != taskID || r.Str("state") != "completed" {
		t.Fatalf("COMPLETE: %s", r.Raw)
	}
	if r := complete(answer); r.Verb != "ERROR" || r.Code() != "not_pending" {
		t.Fatalf("COMPLETE again: %s", r.Raw)
	}
	if lines, end := b.AskList(`PIRCAN/1 TASKS`); len(lines) != 0 || end.Int("total") != 0 {
		t.Fatalf("TASKS once answered: %v %s", lines, end.Raw)
	}
	out = m.run(t,
		call("list_tasks", args{"direction": "outgoing"}),
		call("cancel_task", args{"task_id": taskID}),
	)
	items := listItems(t, "list_tasks outgoing", result(t, "list_tasks outgoing", out[0]), 1)
	hasKeys(t, "list_tasks item", items[0], "task_id", "skill", "to", "at", "state", "text", "answer")
	if items[0]["task_id"] != taskID || items[0]["state"] != "completed" || items[0]["answer"] != answer || items[0]["text"] != long {
		t.Fatalf("list_tasks outgoing: %.400s", out[0].Line)
	}
	refused(t, "cancel_task once answered", out[1], "not_pending", "")

	// The other way round, both on MCP: the 60,000-byte answer comes back
	// whole. (An IRC agent has no verb to send a task.)
	result(t, "register", m2.run(t, call("register", nil))[0])
	contactAccept(t, m2, m, mID, "task:translate")
	out = m2.run(t, call("send_task", args{"to": mID, "text": "Bitte übersetzen ✓"})) // the one task: scope granted
	t2, _ := result(t, "send_task", out[0])["task_id"].(string)
	longAnswer := longText(pircan.MaxStoredText)
	out = m.run(t,
		call("list_tasks", nil),
		call("complete_task", args{"task_id": t2, "outcome": "completed", "text": longAnswer + "x"}),
		call("complete_task", args{"task_id": t2, "outcome": "completed", "text": longAnswer}),
	)
	in := listItems(t, "list_tasks incoming", result(t, "list_tasks incoming", out[0]), 1)
	hasKeys(t, "list_tasks incoming item", in[0], "task_id", "skill", "from", "at", "state", "text")
	if in[0]["task_id"] != t2 || in[0]["skill"] != "translate" || in[0]["state"] != "open" || in[0]["text"] != "Bitte übersetzen ✓" {
		t.Fatalf("list_tasks incoming: %s", out[0].Line)
	}
	refused(t, "complete_task of 60,001 bytes", out[1], "too_long", "text")
	if r := result(t, "complete_task", out[2]); r["task_id"] != t2 || r["state"] != "completed" {
		t.Fatalf("complete_task: %s", out[2].Line)
	}
	out = m2.run(t, call("list_tasks", args{"direction": "outgoing"}))
	items = listItems(t, "requester's list_tasks", result(t, "requester's list_tasks", out[0]), 1)
	if items[0]["task_id"] != t2 || items[0]["state"] != "completed" || items[0]["answer"] != longAnswer || sub(items[0], "to")["agent_id"] != mID {
		t.Fatalf("requester's list_tasks: %.400s", out[0].Line)
	}
}
