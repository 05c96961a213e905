package mcp

import "github.com/creatimus/pircan/pircan"

// Results of the task tools: send_task, list_tasks (IRC TASKS),
// complete_task (COMPLETE), cancel_task (DESIGN.md "Tasks"). Over MCP a
// task's texts are whole.

// TaskItem is a task as one party sees it: from (incoming: the caller is
// the target) or to (outgoing: the caller asked), answer once answered.
type TaskItem struct {
	TaskID string `json:"task_id"`
	Skill  string `json:"skill"`
	From   *Party `json:"from,omitempty"`
	To     *Party `json:"to,omitempty"`
	At     string `json:"at"`
	State  string `json:"state"`
	Text   string `json:"text"`
	Answer string `json:"answer,omitempty"`
}

func taskItem(t pircan.Task, incoming bool) TaskItem {
	out := TaskItem{TaskID: t.ID, Skill: t.Skill, At: timeText(t.At), State: t.State, Text: t.Text, Answer: t.Answer}
	if incoming {
		from := party(t.From)
		out.From = &from
	} else {
		to := party(t.To)
		out.To = &to
	}
	return out
}

// renderSentTask is send_task's result: the new task, to its target.
func renderSentTask(t pircan.Task) TaskItem { return taskItem(t, false) }

func renderTasks(r pircan.TasksResult) List[TaskItem] {
	return listOf(r.Page, func(t pircan.Task) TaskItem { return taskItem(t, r.Incoming) })
}

// TaskState is the result of complete_task and cancel_task, IRC's
// COMPLETE line: the task's state now.
type TaskState struct {
	TaskID string `json:"task_id"`
	State  string `json:"state"`
}

func renderTaskState(t pircan.Task) TaskState { return TaskState{TaskID: t.ID, State: t.State} }
