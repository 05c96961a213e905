package pircan_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// Tasks through the core, over the real store.

// sendTask asks to for a task of skill ("" for the one granted).
func sendTask(t *testing.T, svc *pircan.Service, from, to pircan.Caller, skill, text string) pircan.Task {
	t.Helper()
	a := pircan.SendTaskArgs{To: &to.Agent.ID, Text: &text}
	if skill != "" {
		a.Skill = &skill
	}
	task, err := svc.SendTask(t.Context(), from, a)
	if err != nil {
		t.Fatalf("send_task %q: %v", skill, err)
	}
	return task
}

func taskCount(t *testing.T, agentID string) int {
	t.Helper()
	var n int
	must(t, shared.Pool().QueryRow(t.Context(), "SELECT count(*) FROM tasks WHERE requester = $1 OR target = $1", agentID).Scan(&n))
	return n
}

// notices are the agent's waiting notifications, claimed, by type (-1: no count).
func notices(t *testing.T, agentID string) map[string]int {
	t.Helper()
	ns, err := shared.ClaimNotices(t.Context(), agentID)
	must(t, err)
	out := map[string]int{}
	for _, n := range ns {
		out[n.Type] = n.Count
	}
	return out
}

func complete(t *testing.T, svc *pircan.Service, c pircan.Caller, id, outcome, text string) (pircan.Task, error) {
	return svc.CompleteTask(t.Context(), c, pircan.CompleteTaskArgs{TaskID: &id, Outcome: &outcome, Text: &text})
}

func TestSendTaskArguments(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	a, b := agent(t, svc, pircan.FaceIRC), agent(t, svc, pircan.FaceIRC)
	agreeScopes(t, svc, a, b, "task:translate")
	mcp := caller(t, svc, pircan.FaceMCP, a.Account)
	bID := b.Agent.ID
	before := auditCount(t, a.Account)
	for _, tc := range []struct {
		name  string
		who   pircan.Caller
		args  pircan.SendTaskArgs
		code  pircan.Code
		field string
	}{
		{"no to", a, pircan.SendTaskArgs{Text: sp("x")}, pircan.CodeInvalidArgument, "to"},
		{"bad to", a, pircan.SendTaskArgs{To: sp("b"), Text: sp("x")}, pircan.CodeInvalidArgument, "to"},
		{"bad skill", a, pircan.SendTaskArgs{To: &bID, Skill: sp("Trans Late"), Text: sp("x")}, pircan.CodeInvalidArgument, "skill"},
		{"empty skill", a, pircan.SendTaskArgs{To: &bID, Skill: sp(""), Text: sp("x")}, pircan.CodeInvalidArgument, "skill"},
		{"long skill", a, pircan.SendTaskArgs{To: &bID, Skill: sp(strings.Repeat("s", 65)), Text: sp("x")}, pircan.CodeInvalidArgument, "skill"},
		{"no text", a, pircan.SendTaskArgs{To: &bID}, pircan.CodeInvalidArgument, "text"},
		{"blank", a, pircan.SendTaskArgs{To: &bID, Text: sp("  ")}, pircan.CodeEmpty, "text"},
		{"IRC over", a, pircan.SendTaskArgs{To: &bID, Text: sp(strings.Repeat("x", pircan.MaxIRCText+1))}, pircan.CodeTooLong, "text"},
		{"MCP over", mcp, pircan.SendTaskArgs{To: &bID, Text: sp(strings.Repeat("x", pircan.MaxStoredText+1))}, pircan.CodeTooLong, "text"},
		{"to myself", a, pircan.SendTaskArgs{To: &a.Agent.ID, Text: sp("x")}, pircan.CodeSelfContact, ""},
		{"to nobody", a, pircan.SendTaskArgs{To: sp(noID), Text: sp("x")}, pircan.CodeUnknownAgent, "to"},
	} {
		_, err := svc.SendTask(t.Context(), tc.who, tc.args)
		wantErr(t, tc.name, err, tc.code, tc.field)
	}
	if n := taskCount(t, a.Agent.ID); n != 0 || auditCount(t, a.Account) != before {
		t.Fatalf("refused tasks stored something: %d tasks", n)
	}

	task := sendTask(t, svc, a, b, "translate", "hola")
	for _, tc := range []struct {
		name, id, outcome, text string
		who                     pircan.Caller
		code                    pircan.Code
		field                   string
	}{
		{"bad task_id", "t1", "completed", "ok", b, pircan.CodeInvalidArgument, "task_id"},
		{"bad outcome", task.ID, "done", "ok", b, pircan.CodeInvalidArgument, "outcome"},
		{"canceled is no outcome", task.ID, "canceled", "ok", b, pircan.CodeInvalidArgument, "outcome"},
		{"blank answer", task.ID, "completed", " ", b, pircan.CodeEmpty, "text"},
		{"IRC answer over", task.ID, "completed", strings.Repeat("x", pircan.MaxIRCText+1), b, pircan.CodeTooLong, "text"},
		{"MCP answer over", task.ID, "completed", strings.Repeat("x", pircan.MaxStoredText+1),
			caller(t, svc, pircan.FaceMCP, b.Account), pircan.CodeTooLong, "text"},
	} {
		_, err := complete(t, svc, tc.who, tc.id, tc.outcome, tc.text)
		wantErr(t, tc.name, err, tc.code, tc.field)
	}
	if got, err := svc.GetTask(t.Context(), a, pircan.TaskArgs{TaskID: &task.ID}); err != nil || got.State != pircan.TaskOpen {
		t.Fatalf("after refused answers: %+v %v", got, err)
	}
}

func TestSendTaskRules(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	a, b := agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceMCP)
	bID := b.Agent.ID
	refused := func(what string, from pircan.Caller, to, skill string, code pircan.Code, field string) {
		t.Helper()
		args := pircan.SendTaskArgs{To: &to, Text: sp("please")}
		if skill != "" {
			args.Skill = &skill
		}
		_, err := svc.SendTask(ctx, from, args)
		wantErr(t, what, err, code, field)
	}
	refused("no agreement", a, bID, "translate", pircan.CodeNotAuthorized, "")
	refused("no agreement, no skill", a, bID, "", pircan.CodeNotAuthorized, "")
	agreeScopes(t, svc, a, b, pircan.ScopeMessage)
	refused("message-only agreement", a, bID, "translate", pircan.CodeNotAuthorized, "")
	refused("message-only agreement, no skill", a, bID, "", pircan.CodeNotAuthorized, "")
	translate := agreeScopes(t, svc, a, b, "task:translate")
	refused("another skill", a, bID, "summarize", pircan.CodeNotAuthorized, "")
	refused("the other way round", b, a.Agent.ID, "translate", pircan.CodeNotAuthorized, "")
	refused("the other way round, no skill", b, a.Agent.ID, "", pircan.CodeNotAuthorized, "")
	if n := taskCount(t, a.Agent.ID); n != 0 {
		t.Fatalf("refused tasks stored %d", n)
	}

	one := sendTask(t, svc, a, b, "", "translate this")
	if one.Skill != "translate" || one.AgreementID != translate || one.State != pircan.TaskOpen ||
		one.From.AgentID != a.Agent.ID || one.From.Name != a.Agent.Name || one.To.AgentID != bID || one.To.Name != b.Agent.Name {
		t.Fatalf("skill omitted, one granted: %+v", one)
	}
	agreeScopes(t, svc, a, b, "task:summarize")
	refused("skill omitted, two granted", a, bID, "", pircan.CodeInvalidArgument, "skill")
	if s := sendTask(t, svc, a, b, "summarize", "sum up").Skill; s != "summarize" {
		t.Fatalf("named skill: %q", s)
	}

	// A revoke stops new tasks and leaves the open one cancellable.
	_, err := svc.Revoke(ctx, b, pircan.RevokeArgs{AgreementID: &translate})
	must(t, err)
	refused("after revoke", a, bID, "translate", pircan.CodeNotAuthorized, "")
	c, err := svc.CancelTask(ctx, a, pircan.TaskArgs{TaskID: &one.ID})
	if err != nil || c.State != pircan.TaskCanceled || c.AnsweredAt.IsZero() {
		t.Fatalf("cancel after revoke: %+v %v", c, err)
	}
	_, err = svc.CancelTask(ctx, a, pircan.TaskArgs{TaskID: &one.ID})
	wantErr(t, "cancel twice", err, pircan.CodeNotPending, "")
}

// An expired agreement, as a revoked one, refuses new tasks; the open ones
// stay answerable by the target.
func TestTaskAfterExpiry(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	a, b := agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceMCP)
	g := agreeScopes(t, svc, a, b, "task:review")
	task := sendTask(t, svc, a, b, "review", "review my draft")
	_, err := shared.Pool().Exec(t.Context(), "UPDATE agreements SET expires_at = now() - interval '1 second' WHERE id = $1", g)
	must(t, err)
	_, err = svc.SendTask(t.Context(), a, pircan.SendTaskArgs{To: &b.Agent.ID, Text: sp("another")})
	wantErr(t, "after expiry", err, pircan.CodeNotAuthorized, "")
	if got, err := complete(t, svc, b, task.ID, pircan.TaskCompleted, "looks good"); err != nil || got.State != pircan.TaskCompleted {
		t.Fatalf("answer after expiry: %+v %v", got, err)
	}
}

func TestCompleteTask(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	a, b, x := agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceMCP)
	agreeScopes(t, svc, a, b, "task:translate")
	first := sendTask(t, svc, a, b, "translate", "one")
	second := sendTask(t, svc, a, b, "translate", "two")
	third := sendTask(t, svc, a, b, "translate", "three")

	_, err := complete(t, svc, a, third.ID, pircan.TaskCompleted, "by the requester")
	wantErr(t, "complete by the requester", err, pircan.CodeNotFound, "task_id")
	_, err = complete(t, svc, x, third.ID, pircan.TaskCompleted, "by a stranger")
	wantErr(t, "complete by a third agent", err, pircan.CodeNotFound, "task_id")
	_, err = complete(t, svc, b, noID, pircan.TaskCompleted, "no such task")
	wantErr(t, "complete of no task", err, pircan.CodeNotFound, "task_id")
	_, err = svc.CancelTask(ctx, b, pircan.TaskArgs{TaskID: &third.ID})
	wantErr(t, "cancel by the target", err, pircan.CodeNotFound, "task_id")
	_, err = svc.CancelTask(ctx, x, pircan.TaskArgs{TaskID: &third.ID})
	wantErr(t, "cancel by a third agent", err, pircan.CodeNotFound, "task_id")
	_, err = svc.GetTask(ctx, x, pircan.TaskArgs{TaskID: &third.ID})
	wantErr(t, "get by a third agent", err, pircan.CodeNotFound, "task_id")

	done, err := complete(t, svc, b, third.ID, pircan.TaskCompleted, "uno")
	if err != nil || done.State != pircan.TaskCompleted || done.Answer != "uno" || done.Text != "three" || done.AnsweredAt.IsZero() {
		t.Fatalf("complete: %+v %v", done, err)
	}
	_, err = complete(t, svc, b, third.ID, pircan.TaskFailed, "again")
	wantErr(t, "complete twice", err, pircan.CodeNotPending, "")
	_, err = svc.CancelTask(ctx, a, pircan.TaskArgs{TaskID: &third.ID})
	wantErr(t, "cancel an answered task", err, pircan.CodeNotPending, "")
	if _, err := complete(t, svc, b, second.ID, pircan.TaskRejected, "no"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []pircan.Caller{a, b} {
		got, err := svc.GetTask(ctx, c, pircan.TaskArgs{TaskID: &third.ID})
		if err != nil || got.State != pircan.TaskCompleted || got.Answer != "uno" || got.From.AgentID != a.Agent.ID {
			t.Fatalf("get by %s: %+v %v", c.Account, got, err)
		}
	}

	// Incoming: open ones first (the oldest is open), then newest first; outgoing alike.
	in, err := svc.Tasks(ctx, b, pircan.ListTasksArgs{Status: sp("any")})
	if err != nil || in.Total != 3 || !in.Incoming {
		t.Fatalf("incoming: %+v %v", in, err)
	}
	want := []struct{ id, state, answer string }{
		{first.ID, pircan.TaskOpen, ""}, {third.ID, pircan.TaskCompleted, "uno"}, {second.ID, pircan.TaskRejected, "no"}}
	for i, w := range want {
		if got := in.Items[i]; got.ID != w.id || got.State != w.state || got.Answer != w.answer {
			t.Errorf("incoming %d: %+v, want %+v", i, got, w)
		}
	}
	open, err := svc.Tasks(ctx, b, pircan.ListTasksArgs{})
	if err != nil || open.Total != 1 || open.Items[0].ID != first.ID {
		t.Fatalf("incoming, default open: %+v %v", open, err)
	}
	out, err := svc.Tasks(ctx, a, pircan.ListTasksArgs{Direction: sp("outgoing")})
	if err != nil || out.Total != 3 || out.Incoming || out.Items[0].ID != first.ID || out.Items[2].ID != second.ID {
		t.Fatalf("outgoing, default any: %+v %v", out, err)
	}
	page, err := svc.Tasks(ctx, a, pircan.ListTasksArgs{Direction: sp("outgoing"), Status: sp("rejected"), PageArgs: pircan.PageArgs{Limit: ip(1)}})
	if err != nil || page.Total != 1 || page.Items[0].ID != second.ID {
		t.Fatalf("outgoing rejected: %+v %v", page, err)
	}
	past, err := svc.Tasks(ctx, a, pircan.ListTasksArgs{Direction: sp("outgoing"), PageArgs: pircan.PageArgs{Offset: ip(5)}})
	if err != nil || past.Total != 3 || len(past.Items) != 0 {
		t.Fatalf("past the end: %+v %v", past, err)
	}
	if none, err := svc.Tasks(ctx, x, pircan.ListTasksArgs{Status: sp("any")}); err != nil || none.Total != 0 {
		t.Fatalf("a stranger's incoming: %+v %v", none, err)
	}
}

// Of racing answers (and a cancel) exactly one wins.
func TestTaskAnswerRace(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	a, b := agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceMCP)
	agreeScopes(t, svc, a, b, "task:translate")
	task := sendTask(t, svc, a, b, "translate", "race")
	const racers = 8
	start := make(chan struct{})
	errs := make(chan error, racers)
	for i := range racers {
		go func() {
			<-start
			var err error
			if i == 0 {
				_, err = svc.CancelTask(t.Context(), a, pircan.TaskArgs{TaskID: &task.ID})
			} else {
				_, err = complete(t, svc, b, task.ID, pircan.TaskCompleted, strings.Repeat("a", i))
			}
			errs <- err
		}()
	}
	close(start)
	won := 0
	for range racers {
		if err := <-errs; err == nil {
			won++
		} else {
			wantErr(t, "a losing answer", err, pircan.CodeNotPending, "")
		}
	}
	if won != 1 {
		t.Fatalf("%d answers won", won)
	}
}

func TestTaskFullSize(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	a, b := agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceMCP)
	agreeScopes(t, svc, a, b, "task:translate")
	long := strings.Repeat("é", pircan.MaxStoredText/2)
	if len(long) != pircan.MaxStoredText {
		t.Fatalf("%d bytes", len(long))
	}
	task := sendTask(t, svc, a, b, "translate", long)
	answer := strings.Repeat("Answer. ", pircan.MaxStoredText/8)
	if _, err := complete(t, svc, b, task.ID, pircan.TaskCompleted, answer); err != nil {
		t.Fatal(err)
	}
	got, err := svc.GetTask(t.Context(), a, pircan.TaskArgs{TaskID: &task.ID})
	if err != nil || got.Text != long || got.Answer != answer {
		t.Fatalf("60,000 bytes: text %d, answer %d bytes, %v", len(got.Text), len(got.Answer), err)
	}
}

func TestTasksHour(t *testing.T) {
	t.Parallel()
	l := sharedLimits()
	l.TasksHour = 2
	svc := newServiceLimits(t, l)
	a, b, c := agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceMCP)
	agreeScopes(t, svc, a, b, "task:translate")
	agreeScopes(t, svc, a, c, "task:translate")
	sendTask(t, svc, a, b, "translate", "one")
	sendTask(t, svc, a, c, "translate", "two")
	_, err := svc.SendTask(t.Context(), a, pircan.SendTaskArgs{To: &b.Agent.ID, Text: sp("three")})
	wantErr(t, "third task in an hour", err, pircan.CodeRateLimited, "")
	if n := taskCount(t, a.Agent.ID); n != 2 {
		t.Fatalf("%d tasks stored", n)
	}
	// The limit is the requester's: b may still ask a.
	agreeScopes(t, svc, b, a, "task:review")
	sendTask(t, svc, b, a, "review", "mine")
}

// Racing tasks of one requester, to two targets, keep its hourly limit:
// the count is taken after the requester's row is locked.
func TestRacingTasksKeepTheHour(t *testing.T) {
	t.Parallel()
	l := sharedLimits()
	l.TasksHour = 3
	svc := newServiceLimits(t, l)
	a, b, c := agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceMCP)
	agreeScopes(t, svc, a, b, "task:translate")
	agreeScopes(t, svc, a, c, "task:translate")
	const racers = 8
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		to := []pircan.Caller{b, c}[i%2].Agent.ID
		wg.Go(func() {
			_, errs[i] = svc.SendTask(t.Context(), a, pircan.SendTaskArgs{To: &to, Text: sp("race")})
		})
	}
	wg.Wait()
	sent := 0
	for _, err := range errs {
		if err == nil {
			sent++
			continue
		}
		wantErr(t, "a racing task over the hour", err, pircan.CodeRateLimited, "")
	}
	if n := taskCount(t, a.Agent.ID); sent != l.TasksHour || n != l.TasksHour {
		t.Fatalf("%d tasks accepted, %d stored; want %d", sent, n, l.TasksHour)
	}
}

func TestTaskNotifications(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	a, b := agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceMCP)
	agreeScopes(t, svc, a, b, "task:translate")
	notices(t, a.Agent.ID)
	notices(t, b.Agent.ID)

	first := sendTask(t, svc, a, b, "translate", "one")
	second := sendTask(t, svc, a, b, "translate", "two")
	if n := notices(t, b.Agent.ID); len(n) != 1 || n[pircan.NotifyTaskRequest] != 2 {
		t.Fatalf("target after two tasks: %v", n)
	}
	if n := notices(t, a.Agent.ID); len(n) != 0 {
		t.Fatalf("requester after sending: %v", n)
	}
	if _, err := complete(t, svc, b, first.ID, pircan.TaskCompleted, "uno"); err != nil {
		t.Fatal(err)
	}
	if n := notices(t, a.Agent.ID); len(n) != 1 || n[pircan.NotifyTaskUpdate] != -1 {
		t.Fatalf("requester after complete: %v", n)
	}
	if n := notices(t, b.Agent.ID); len(n) != 0 {
		t.Fatalf("target after its own answer: %v", n)
	}
	if _, err := svc.CancelTask(t.Context(), a, pircan.TaskArgs{TaskID: &second.ID}); err != nil {
		t.Fatal(err)
	}
	if n := notices(t, b.Agent.ID); len(n) != 1 || n[pircan.NotifyTaskUpdate] != -1 {
		t.Fatalf("target after cancel: %v", n)
	}
	// The open count is as of delivery: one new task, none of the others open.
	sendTask(t, svc, a, b, "translate", "three")
	if n := notices(t, b.Agent.ID); n[pircan.NotifyTaskRequest] != 1 {
		t.Fatalf("target after a third task: %v", n)
	}
}
