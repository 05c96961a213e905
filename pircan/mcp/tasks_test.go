package mcp_test

import (
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/mcp"
)

// The task tools (DESIGN.md "Tasks"): send_task, list_tasks, complete_task,
// cancel_task. TestTaskToolsFake runs over fakeTasks; TestTaskToolsRealStore
// needs store/tasks.go (until it lands the store's placeholders answer "not
// implemented yet" and it fails with internal_error).

// taskAgent is a registered agent with its session and directory entry.
type taskAgent struct {
	cs  *sdk.ClientSession
	ref pircan.PartyRef
}

func newTaskAgent(t *testing.T, e *env) taskAgent {
	t.Helper()
	cs, id := e.agent(t)
	var w mcp.WhoAmI
	ok(t, call(t, cs, "whoami", nil), &w)
	if w.AgentID != id {
		t.Fatalf("whoami %s, want %s", w.AgentID, id)
	}
	return taskAgent{cs: cs, ref: pircan.PartyRef{AgentID: id, Name: w.Name}}
}

func listTasks(t *testing.T, cs *sdk.ClientSession, args map[string]any) mcp.List[mcp.TaskItem] {
	t.Helper()
	res := call(t, cs, "list_tasks", args)
	conforms(t, cs, "list_tasks", res)
	var page mcp.List[mcp.TaskItem]
	ok(t, res, &page)
	return page
}

func taskState(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) mcp.TaskState {
	t.Helper()
	res := call(t, cs, tool, args)
	conforms(t, cs, tool, res)
	var s mcp.TaskState
	ok(t, res, &s)
	return s
}

func TestTaskToolsFake(t *testing.T) {
	tasks := newFakeTasks()
	e := newEnvOver(t, tasks, limits(), mcp.Config{})
	testTaskTools(t, e, func(req, target taskAgent, skill string) { tasks.grant(req.ref, target.ref, skill) })
}

func TestTaskToolsRealStore(t *testing.T) {
	e := newEnv(t, limits())
	testTaskTools(t, e, func(req, target taskAgent, skill string) {
		var c mcp.Contact
		ok(t, call(t, req.cs, "contact", map[string]any{"to": target.ref.AgentID, "purpose": "Tasks", "scopes": []string{"task:" + skill}}), &c)
		var d mcp.Decision
		ok(t, call(t, target.cs, "accept_contact", map[string]any{"request_id": c.RequestID}), &d)
		if d.Status != "accepted" {
			t.Fatalf("accept_contact: %+v", d)
		}
	})
}

// testTaskTools: a asks b for tasks under grant; b sees them incoming, with
// from, and answers one; a sees its own outgoing, with to and the answer,
// and cancels the other; the refusals name their fields.
func testTaskTools(t *testing.T, e *env, grant func(requester, target taskAgent, skill string)) {
	a, b := newTaskAgent(t, e), newTaskAgent(t, e)
	to := map[string]any{"to": b.ref.AgentID, "skill": "chemistry", "text": "Evacuation radius?"}
	refused(t, call(t, a.cs, "send_task", to), pircan.CodeNotAuthorized, "")
	grant(a, b, "chemistry")

	long := strings.Repeat("é", pircan.MaxStoredText/2) // 60,000 bytes: the most
	res := call(t, a.cs, "send_task", map[string]any{"to": b.ref.AgentID, "text": long})
	conforms(t, a.cs, "send_task", res)
	var first mcp.TaskItem
	ok(t, res, &first)
	if !pircan.ValidID(first.TaskID) || first.Skill != "chemistry" || first.State != pircan.TaskOpen || first.Text != long ||
		first.From != nil || first.To == nil || *first.To != (mcp.Party{AgentID: b.ref.AgentID, Name: b.ref.Name}) || first.Answer != "" {
		t.Fatalf("send_task: %+v", first)
	}
	if _, err := time.Parse(time.RFC3339, first.At); err != nil {
		t.Fatalf("at %q: %v", first.At, err)
	}
	if strings.Contains(text(t, res), `"answer"`) || strings.Contains(text(t, res), `"from"`) {
		t.Fatalf("send_task: an open task without answer, to its target: %s", text(t, res))
	}
	var second mcp.TaskItem
	ok(t, call(t, a.cs, "send_task", to), &second)

	// b's incoming tasks: open ones, newest first, from a, whole.
	in := listTasks(t, b.cs, nil)
	if in.Returned != 2 || in.Total != 2 || in.Offset != 0 || in.Items[0].TaskID != second.TaskID || in.Items[1].TaskID != first.TaskID ||
		in.Items[1].Text != long || in.Items[0].To != nil || in.Items[0].From == nil ||
		*in.Items[0].From != (mcp.Party{AgentID: a.ref.AgentID, Name: a.ref.Name}) {
		t.Fatalf("list_tasks incoming: %+v", in)
	}
	if got := listTasks(t, b.cs, map[string]any{"limit": 1, "offset": 1}); got.Returned != 1 || got.Total != 2 || got.Offset != 1 ||
		got.Items[0].TaskID != first.TaskID {
		t.Fatalf("list_tasks page 2: %+v", got)
	}
	if got := listTasks(t, a.cs, nil); got.Total != 0 || got.Returned != 0 || got.Items == nil {
		t.Fatalf("list_tasks incoming of the requester: %+v", got)
	}

	// b answers the first, whole; a cancels the second.
	answer := strings.Repeat("ش", pircan.MaxStoredText/2)
	if s := taskState(t, b.cs, "complete_task", map[string]any{"task_id": first.TaskID, "outcome": "completed", "text": answer}); s !=
		(mcp.TaskState{TaskID: first.TaskID, State: pircan.TaskCompleted}) {
		t.Fatalf("complete_task: %+v", s)
	}
	if s := taskState(t, a.cs, "cancel_task", map[string]any{"task_id": second.TaskID}); s !=
		(mcp.TaskState{TaskID: second.TaskID, State: pircan.TaskCanceled}) {
		t.Fatalf("cancel_task: %+v", s)
	}
	out := listTasks(t, a.cs, map[string]any{"direction": "outgoing"})
	if out.Total != 2 || out.Returned != 2 {
		t.Fatalf("list_tasks outgoing: %+v", out)
	}
	byID := map[string]mcp.TaskItem{}
	for _, it := range out.Items {
		if it.From != nil || it.To == nil || it.To.AgentID != b.ref.AgentID {
			t.Fatalf("list_tasks outgoing item %+v: want to, not from", it)
		}
		byID[it.TaskID] = it
	}
	if got := byID[first.TaskID]; got.State != pircan.TaskCompleted || got.Answer != answer || got.Text != long {
		t.Fatalf("the answered task: %s, %d bytes of answer", got.State, len(got.Answer))
	}
	if got := byID[second.TaskID]; got.State != pircan.TaskCanceled || got.Answer != "" {
		t.Fatalf("the canceled task: %+v", got)
	}
	if got := listTasks(t, a.cs, map[string]any{"direction": "outgoing", "status": "canceled"}); got.Total != 1 || got.Items[0].TaskID != second.TaskID {
		t.Fatalf("list_tasks outgoing canceled: %+v", got)
	}
	if got := listTasks(t, b.cs, nil); got.Total != 0 {
		t.Fatalf("list_tasks incoming after both: %+v, want no open ones", got)
	}
	if got := listTasks(t, b.cs, map[string]any{"status": "any"}); got.Total != 2 {
		t.Fatalf("list_tasks incoming any: %+v", got)
	}

	// Refusals.
	for _, c := range []struct {
		cs    *sdk.ClientSession
		tool  string
		args  map[string]any
		code  pircan.Code
		field string
	}{
		{a.cs, "send_task", map[string]any{"to": a.ref.AgentID, "text": "x"}, pircan.CodeSelfContact, ""},
		{a.cs, "send_task", map[string]any{"to": b.ref.AgentID, "skill": "Chem istry", "text": "x"}, pircan.CodeInvalidArgument, "skill"},
		{a.cs, "send_task", map[string]any{"to": b.ref.AgentID, "text": long + "x"}, pircan.CodeTooLong, "text"},
		{a.cs, "send_task", map[string]any{"to": b.ref.AgentID, "skill": "physics", "text": "x"}, pircan.CodeNotAuthorized, ""},
		{b.cs, "send_task", map[string]any{"to": a.ref.AgentID, "text": "x"}, pircan.CodeNotAuthorized, ""}, // the grant is one-way
		{a.cs, "send_task", map[string]any{"text": "x"}, pircan.CodeInvalidArgument, "to"},
		{a.cs, "list_tasks", map[string]any{"direction": "sideways"}, pircan.CodeInvalidArgument, "direction"},
		{a.cs, "list_tasks", map[string]any{"status": "done"}, pircan.CodeInvalidArgument, "status"},
		{a.cs, "list_tasks", map[string]any{"limit": 11}, pircan.CodeInvalidArgument, "limit"},
		{b.cs, "complete_task", map[string]any{"task_id": first.TaskID, "outcome": "failed", "text": "again"}, pircan.CodeNotPending, ""},
		{b.cs, "complete_task", map[string]any{"task_id": first.TaskID, "outcome": "done", "text": "x"}, pircan.CodeInvalidArgument, "outcome"},
		{a.cs, "complete_task", map[string]any{"task_id": second.TaskID, "outcome": "completed", "text": "x"}, pircan.CodeNotFound, "task_id"}, // not its target
		{b.cs, "complete_task", map[string]any{"task_id": uuid(), "outcome": "completed", "text": "x"}, pircan.CodeNotFound, "task_id"},
		{b.cs, "cancel_task", map[string]any{"task_id": first.TaskID}, pircan.CodeNotFound, "task_id"}, // not its requester
		{a.cs, "cancel_task", map[string]any{"task_id": second.TaskID}, pircan.CodeNotPending, ""},
		{a.cs, "cancel_task", map[string]any{"task_id": "nope"}, pircan.CodeInvalidArgument, "task_id"},
	} {
		res := call(t, c.cs, c.tool, c.args)
		refused(t, res, c.code, c.field)
	}
}
