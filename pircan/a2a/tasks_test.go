package a2a_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/creatimus/pircan/internal/a2aclient"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/a2a"
)

// These need the tasks store (store/tasks.go); until it lands the
// operations are internal errors.

func message(text, skill string) map[string]any {
	m := map[string]any{"messageId": "m1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if skill != "" {
		m["metadata"] = map[string]any{"skill": skill}
	}
	return map[string]any{"message": m}
}

// A task's life over A2A: SendMessage (SUBMITTED), GetTask, the target
// completes it in the core, GetTask shows COMPLETED with the artifact;
// ListTasks lists it; a second one is canceled, then not cancelable.
func TestTaskLifecycle(t *testing.T) {
	e := newEnv(t, a2a.Config{})
	a := e.agent(t, "Asker")
	b := e.agent(t, "Translator", "translate")
	agreementID := e.agree(t, a, b, "task:translate")

	var sent struct{ Task a2a.Task }
	_, r := e.rpc(t, b.id, a.token, "SendMessage", message("Bonjour", "translate"))
	result(t, r, &sent)
	task := sent.Task
	if task.ID == "" || task.ContextID != agreementID || task.Status.State != a2a.StateSubmitted || task.Status.Timestamp == "" ||
		task.Metadata["skill"] != "translate" || len(task.History) != 1 || task.History[0].Parts[0].Text != "Bonjour" ||
		task.History[0].Role != a2a.RoleUser || len(task.Artifacts) != 0 {
		t.Fatalf("sent: %+v", task)
	}

	var got a2a.Task
	_, r = e.rpc(t, b.id, a.token, "GetTask", map[string]any{"id": task.ID})
	result(t, r, &got)
	if got.ID != task.ID || got.Status.State != a2a.StateSubmitted {
		t.Fatalf("GetTask: %+v", got)
	}

	id, outcome, answer := task.ID, "completed", "Hello"
	if _, err := e.core.CompleteTask(t.Context(), b.caller, pircan.CompleteTaskArgs{TaskID: &id, Outcome: &outcome, Text: &answer}); err != nil {
		t.Fatal(err)
	}
	_, r = e.rpc(t, b.id, a.token, "GetTask", map[string]any{"id": task.ID, "historyLength": 0})
	got = a2a.Task{} // a fresh value: decoding into the last one would keep its history
	result(t, r, &got)
	if got.Status.State != a2a.StateCompleted || got.Status.Message == nil || got.Status.Message.Role != a2a.RoleAgent ||
		len(got.Artifacts) != 1 || got.Artifacts[0].Parts[0].Text != "Hello" || len(got.History) != 0 {
		t.Fatalf("completed: %+v", got)
	}
	// The target's own URL is not where the caller's task lives.
	_, r = e.rpc(t, a.id, a.token, "GetTask", map[string]any{"id": task.ID})
	refused(t, r, a2a.CodeTaskNotFound, pircan.CodeNotFound)
	_, r = e.rpc(t, b.id, a.token, "GetTask", map[string]any{"id": uuid()})
	refused(t, r, a2a.CodeTaskNotFound, pircan.CodeNotFound)
	_, r = e.rpc(t, b.id, a.token, "GetTask", map[string]any{})
	refused(t, r, jsonrpc.CodeInvalidParams, pircan.CodeInvalidArgument)

	// A second task, canceled, then not cancelable.
	_, r = e.rpc(t, b.id, a.token, "SendMessage", message("Au revoir", ""))
	result(t, r, &sent)
	var canceled a2a.Task
	_, r = e.rpc(t, b.id, a.token, "CancelTask", map[string]any{"id": sent.Task.ID})
	result(t, r, &canceled)
	if canceled.ID != sent.Task.ID || canceled.Status.State != a2a.StateCanceled {
		t.Fatalf("canceled: %+v", canceled)
	}
	_, r = e.rpc(t, b.id, a.token, "CancelTask", map[string]any{"id": sent.Task.ID})
	refused(t, r, a2a.CodeTaskNotCancelable, pircan.CodeNotPending)

	// ListTasks: both, newest first after open ones; the filter by state;
	// artifacts only on includeArtifacts.
	var page struct {
		Tasks         []a2a.Task `json:"tasks"`
		NextPageToken *string    `json:"nextPageToken"`
		PageSize      int        `json:"pageSize"`
		TotalSize     int        `json:"totalSize"`
	}
	_, r = e.rpc(t, b.id, a.token, "ListTasks", map[string]any{})
	result(t, r, &page)
	if len(page.Tasks) != 2 || page.NextPageToken == nil || *page.NextPageToken != "" || page.TotalSize != 2 || page.PageSize != 50 {
		t.Fatalf("ListTasks: %+v", page)
	}
	for _, lt := range page.Tasks {
		if len(lt.Artifacts) != 0 {
			t.Errorf("artifacts without includeArtifacts: %+v", lt)
		}
	}
	_, r = e.rpc(t, b.id, a.token, "ListTasks", map[string]any{"status": "TASK_STATE_COMPLETED", "includeArtifacts": true})
	result(t, r, &page)
	if len(page.Tasks) != 1 || page.Tasks[0].ID != task.ID || len(page.Tasks[0].Artifacts) != 1 {
		t.Fatalf("ListTasks completed: %+v", page)
	}
	_, r = e.rpc(t, b.id, a.token, "ListTasks", map[string]any{"pageSize": 1})
	result(t, r, &page)
	if len(page.Tasks) != 1 || *page.NextPageToken == "" {
		t.Fatalf("ListTasks page 1: %+v", page)
	}
	_, r = e.rpc(t, b.id, a.token, "ListTasks", map[string]any{"pageSize": 1, "pageToken": *page.NextPageToken})
	result(t, r, &page)
	if len(page.Tasks) != 1 {
		t.Fatalf("ListTasks page 2: %+v", page)
	}
	_, r = e.rpc(t, b.id, a.token, "ListTasks", map[string]any{"status": "TASK_STATE_RUNNING"})
	refused(t, r, jsonrpc.CodeInvalidParams, pircan.CodeInvalidArgument)
	// Another agent's URL lists none of them: the core filters by the
	// agent, so totalSize counts only this agent's tasks.
	c := e.agent(t, "Other")
	_, r = e.rpc(t, c.id, a.token, "ListTasks", map[string]any{})
	result(t, r, &page)
	if len(page.Tasks) != 0 || page.TotalSize != 0 {
		t.Fatalf("ListTasks at another agent: %+v", page)
	}
	// By contextId (the agreement) and by the time of the last change.
	_, r = e.rpc(t, b.id, a.token, "ListTasks", map[string]any{"contextId": task.ContextID})
	result(t, r, &page)
	if len(page.Tasks) != 2 || page.TotalSize != 2 {
		t.Fatalf("ListTasks by contextId: %+v", page)
	}
	for _, ctxID := range []string{uuid(), "not-an-id"} {
		_, r = e.rpc(t, b.id, a.token, "ListTasks", map[string]any{"contextId": ctxID})
		result(t, r, &page)
		if len(page.Tasks) != 0 || page.TotalSize != 0 {
			t.Fatalf("ListTasks by another contextId %q: %+v", ctxID, page)
		}
	}
	_, r = e.rpc(t, b.id, a.token, "ListTasks", map[string]any{"statusTimestampAfter": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	result(t, r, &page)
	if len(page.Tasks) != 0 || page.TotalSize != 0 {
		t.Fatalf("ListTasks changed in the future: %+v", page)
	}
	if n := calls(t, e, "SendMessage", "ok"); n != 2 {
		t.Errorf("calls SendMessage/ok = %v", n)
	}
}

// Without an agreement granting task:<skill>: not_authorized; to yourself:
// self_contact; a non-text part: ContentTypeNotSupported.
func TestSendMessageRefusals(t *testing.T) {
	e := newEnv(t, a2a.Config{})
	a := e.agent(t, "Asker")
	b := e.agent(t, "Translator", "translate")
	_, r := e.rpc(t, b.id, a.token, "SendMessage", message("Bonjour", "translate"))
	refused(t, r, a2a.CodeRefused, pircan.CodeNotAuthorized)
	_, r = e.rpc(t, a.id, a.token, "SendMessage", message("Bonjour", "translate"))
	refused(t, r, a2a.CodeRefused, pircan.CodeSelfContact)

	e.agree(t, a, b, "task:translate")
	file := map[string]any{"message": map[string]any{"messageId": "m2", "role": "ROLE_USER",
		"parts": []any{map[string]any{"url": "https://example.org/x.pdf", "mediaType": "application/pdf"}}}}
	_, r = e.rpc(t, b.id, a.token, "SendMessage", file)
	refused(t, r, a2a.CodeContentTypeNotSupport, "")
	_, r = e.rpc(t, b.id, a.token, "SendMessage", map[string]any{"message": map[string]any{"messageId": "m3", "role": "ROLE_AGENT",
		"parts": []any{map[string]any{"text": "x"}}}})
	refused(t, r, jsonrpc.CodeInvalidParams, pircan.CodeInvalidArgument)
	_, r = e.rpc(t, b.id, a.token, "SendMessage", message("", "translate"))
	refused(t, r, jsonrpc.CodeInvalidParams, pircan.CodeEmpty)
}

// An agent's URL with its id in upper case is the same agent: the task
// SendMessage files there, GetTask, CancelTask and ListTasks at the same
// URL find; its card too.
func TestUpperCaseAgentURL(t *testing.T) {
	e := newEnv(t, a2a.Config{})
	a := e.agent(t, "Asker")
	b := e.agent(t, "Translator", "translate")
	e.agree(t, a, b, "task:translate")
	upper := strings.ToUpper(b.id)

	var sent struct{ Task a2a.Task }
	_, r := e.rpc(t, upper, a.token, "SendMessage", message("Bonjour", "translate"))
	result(t, r, &sent)
	var got a2a.Task
	_, r = e.rpc(t, upper, a.token, "GetTask", map[string]any{"id": sent.Task.ID})
	result(t, r, &got)
	if got.ID != sent.Task.ID {
		t.Fatalf("GetTask at the upper-case URL: %+v", got)
	}
	_, r = e.rpc(t, upper, a.token, "GetTask", map[string]any{"id": strings.ToUpper(sent.Task.ID)})
	result(t, r, &got)
	var page struct{ Tasks []a2a.Task }
	_, r = e.rpc(t, upper, a.token, "ListTasks", map[string]any{})
	result(t, r, &page)
	if len(page.Tasks) != 1 || page.Tasks[0].ID != sent.Task.ID {
		t.Fatalf("ListTasks at the upper-case URL: %+v", page)
	}
	var canceled a2a.Task
	_, r = e.rpc(t, upper, a.token, "CancelTask", map[string]any{"id": sent.Task.ID})
	result(t, r, &canceled)
	if canceled.Status.State != a2a.StateCanceled {
		t.Fatalf("CancelTask at the upper-case URL: %+v", canceled)
	}
	// One's own id in upper case is oneself.
	_, r = e.rpc(t, strings.ToUpper(a.id), a.token, "SendMessage", message("me", ""))
	refused(t, r, a2a.CodeRefused, pircan.CodeSelfContact)

	resp, err := http.Get(e.srv.URL + a2a.Path + upper + "/" + a2a.CardPath)
	if err != nil {
		t.Fatal(err)
	}
	var card a2a.AgentCard
	err = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || len(card.SupportedInterfaces) != 1 ||
		!strings.HasSuffix(card.SupportedInterfaces[0].URL, a2a.Path+b.id+"/") {
		t.Fatalf("card at the upper-case URL: %d %+v %v", resp.StatusCode, card, err)
	}
}

// Line breaks are text in an A2A message: the official JS SDK's message
// with a newline is filed whole, and a message of two text parts is one
// task text, the parts joined by a line break. Other control characters
// stay refused.
func TestMultilineMessages(t *testing.T) {
	e := newEnv(t, a2a.Config{})
	a := e.agent(t, "Asker")
	b := e.agent(t, "Translator", "translate")
	e.agree(t, a, b, "task:translate")
	text := "Translate:\nBonjour\r\n\tle monde"
	got := a2aclient.Run(t, e.srv.URL+a2a.Path+b.id+"/"+a2a.CardPath, a.token, a2aclient.Send(text, "translate"))
	if !got[0].OK || got[0].State() != "submitted" {
		t.Fatalf("SDK send with line breaks: %s", got[0].Line)
	}
	tasks, err := e.core.Tasks(t.Context(), b.caller, pircan.ListTasksArgs{})
	if err != nil || len(tasks.Items) != 1 || tasks.Items[0].Text != text || tasks.Items[0].ID != got[0].TaskID() {
		t.Fatalf("the target's tasks: %+v %v", tasks, err)
	}

	two := message("first part", "translate")
	m := two["message"].(map[string]any)
	m["parts"] = []any{map[string]any{"text": "first part"}, map[string]any{"text": "second part", "mediaType": "text/plain"}}
	var sent struct{ Task a2a.Task }
	_, r := e.rpc(t, b.id, a.token, "SendMessage", two)
	result(t, r, &sent)
	if h := sent.Task.History; len(h) != 1 || len(h[0].Parts) != 1 || h[0].Parts[0].Text != "first part\nsecond part" {
		t.Fatalf("two parts: %+v", sent.Task)
	}

	_, r = e.rpc(t, b.id, a.token, "SendMessage", message("bell\a", "translate"))
	refused(t, r, jsonrpc.CodeInvalidParams, pircan.CodeInvalidArgument)
}
