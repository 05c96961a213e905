package irc

import (
	"context"

	"github.com/creatimus/pircan/pircan"
)

// The task verbs: TASKS, COMPLETE (DESIGN.md "Tasks"). IRC shows only the
// target's side, the open tasks sent to it; sending, the requester's list
// and cancelling are MCP's and A2A's.

// tasksArgs are TASKS' arguments: only limit (DESIGN.md), so HELP lists
// only it; the rest of ListTasksArgs is fixed to incoming and open.
type tasksArgs struct {
	Limit *int `json:"limit" check:"range=@page,default=5"`
}

// openTasks lists the caller's open incoming tasks.
func openTasks(s *pircan.Service, ctx context.Context, c pircan.Caller, a tasksArgs) (pircan.TasksResult, error) {
	direction, status := "incoming", pircan.TaskOpen
	return s.Tasks(ctx, c, pircan.ListTasksArgs{Direction: &direction, Status: &status, PageArgs: pircan.PageArgs{Limit: a.Limit}})
}

// renderTasks renders each task in its TASK and TASK-MORE lines, then
// TASKS-END.
func renderTasks(c *call, r pircan.TasksResult) []Reply {
	var out []Reply
	for _, t := range r.Items {
		out = append(out, taskReplies(t, c.req)...)
	}
	return append(out, Reply{Verb: "TASKS-END", Fields: pageEnd(r.Page)})
}

// taskReplies renders one incoming task as MESSAGE renders a message: the
// requester's name before the text, which continues in TASK-MORE lines.
func taskReplies(t pircan.Task, req *Request) []Reply {
	head := Object{{"task_id", t.ID}, {"skill", t.Skill}, {"from", party(t.From)}, {"at", timeText(t.At)}}
	return continuedReplies("TASK", head, Field{"task_id", t.ID}, t.Text, req)
}

func renderComplete(_ *call, t pircan.Task) []Reply {
	return one("COMPLETE", Object{{"task_id", t.ID}, {"state", t.State}})
}
