package pircan_test

import (
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// Line breaks are text in messages, tasks and resources over the HTTP
// faces (MCP, A2A), whose JSON carries them; every other control character
// stays refused there, and an IRC request (one line) carries none.
func TestLineBreaksOverHTTPFaces(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	svc := newService(t)
	a, b := agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceA2A)
	agreeScopes(t, svc, a, b, pircan.ScopeMessage, "task:translate")
	multi := "Line one\nline two\r\nline\tthree"

	sent, err := svc.Send(ctx, a, pircan.SendArgs{To: &b.Agent.ID, Text: sp(multi)})
	must(t, err)
	in := inbox(t, svc, b, 5)
	if len(in.Messages) != 1 || in.Messages[0].Text != multi || in.Messages[0].MessageID != sent.MessageID {
		t.Fatalf("inbox: %+v", in.Messages)
	}
	in.Messages[0].Settle(false)
	task, err := svc.SendTask(ctx, a, pircan.SendTaskArgs{To: &b.Agent.ID, Skill: sp("translate"), Text: sp(multi)})
	must(t, err)
	done, err := svc.CompleteTask(ctx, b, pircan.CompleteTaskArgs{TaskID: &task.ID, Outcome: sp("completed"), Text: sp("Done:\n1. yes\n2. no")})
	must(t, err)
	if done.State != pircan.TaskCompleted {
		t.Fatalf("completed: %+v", done)
	}

	for _, bad := range []string{"nul\x00", "escape\x1b[31m", "bell\a", "next line\u0085", "del\x7f", "vertical\vtab", "form\ffeed"} {
		_, err := svc.Send(ctx, a, pircan.SendArgs{To: &b.Agent.ID, Text: sp(bad)})
		wantErr(t, "a message with "+bad, err, pircan.CodeInvalidArgument, "text")
		_, err = svc.SendTask(ctx, a, pircan.SendTaskArgs{To: &b.Agent.ID, Skill: sp("translate"), Text: sp(bad)})
		wantErr(t, "a task with "+bad, err, pircan.CodeInvalidArgument, "text")
	}
	// Over IRC a line break is a control character like any other.
	irc := caller(t, svc, pircan.FaceIRC, a.Account)
	_, err = svc.Send(ctx, irc, pircan.SendArgs{To: &b.Agent.ID, Text: sp("two\nlines")})
	wantErr(t, "a message with a line break over IRC", err, pircan.CodeInvalidArgument, "text")
}
