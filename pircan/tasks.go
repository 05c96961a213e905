package pircan

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Tasks between agents (spec §3b TASKS, COMPLETE; DESIGN.md "Tasks"): a
// requester asks a target for a task under an active agreement that grants
// the requester `task:<skill>` for exactly that skill; the target answers
// it (completed, failed or rejected); the requester may cancel it while it
// is open. Every face (IRC, MCP, A2A) calls these operations.

// Task states.
const (
	TaskOpen      = "open"
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskRejected  = "rejected"
	TaskCanceled  = "canceled"
)

// Task is one task as either party sees it.
type Task struct {
	ID          string
	Skill       string
	From        PartyRef // the requester
	To          PartyRef // the target
	AgreementID string
	At          time.Time // created
	State       string
	Text        string
	Answer      string    // the target's text, once answered
	AnsweredAt  time.Time // when it left open (answered or canceled)
}

// String is for logs: never the texts.
func (t Task) String() string {
	return fmt.Sprintf("task %s (%s, %s, %d+%d bytes)", t.ID, t.Skill, t.State, len(t.Text), len(t.Answer))
}

// NewTask is a task to store.
type NewTask struct {
	To    string
	Skill string // "": the one task: skill the agreements grant the requester
	Text  string
}

// TaskStore keeps tasks. Every change writes an audit row (ids and sizes,
// never text) and the notifications: task_request for the target on a new
// task, task_update for the other party on an answer or a cancel.
type TaskStore interface {
	// AddTask files a task from the actor's agent: it reads TaskFacts and
	// runs rule.Decide in its transaction, returning the rule's refusal as
	// it is.
	AddTask(ctx context.Context, actor Actor, t NewTask, rule TaskRule) (Task, error)
	// Tasks lists the agent's incoming (as target) or outgoing tasks, open
	// ones first, then newest first; status "" or "any" for all.
	Tasks(ctx context.Context, q TaskQuery) ([]Task, int, error)
	// Task is one task of which the agent is a party (ErrNotFound).
	Task(ctx context.Context, agentID, id string) (Task, error)
	// AnswerTask is the target's answer: ErrNotFound unless the actor's
	// agent is the target, ErrNotPending unless the task is open.
	AnswerTask(ctx context.Context, actor Actor, id, outcome, text string) (Task, error)
	// CancelTask is the requester's cancel: ErrNotFound unless the actor's
	// agent is the requester, ErrNotPending unless the task is open.
	CancelTask(ctx context.Context, actor Actor, id string) (Task, error)
}

// SendTaskArgs ask an agent for a task.
type SendTaskArgs struct {
	To    *string `json:"to" check:"required,id"`
	Skill *string `json:"skill"`
	Text  *string `json:"text" check:"required,message"`
}

// ListTasksArgs list tasks: incoming (to you; default) or outgoing.
type ListTasksArgs struct {
	Direction *string `json:"direction" check:"enum=incoming|outgoing"`
	Status    *string `json:"status" check:"enum=open|completed|failed|rejected|canceled|any"`
	PageArgs
	// Filters only A2A's ListTasks offers (no IRC or MCP argument): the
	// other party, the agreement (A2A's contextId), a last change at or
	// after a time. The total counts what they keep.
	With         *string    `json:"-"`
	AgreementID  *string    `json:"-"`
	ChangedSince *time.Time `json:"-"`
}

// TaskQuery is a list of tasks as the store reads it.
type TaskQuery struct {
	AgentID      string
	Incoming     bool
	Status       string // "any": every state
	With         string // the other party; "": any
	AgreementID  string // "": any
	ChangedSince time.Time
	Limit        int
	Offset       int
}

// TasksResult is a page of tasks; Incoming says which party Other is.
type TasksResult struct {
	Page[Task]
	Incoming bool
}

// CompleteTaskArgs answer a task sent to you.
type CompleteTaskArgs struct {
	TaskID  *string `json:"task_id" check:"required,id"`
	Outcome *string `json:"outcome" check:"required,enum=completed|failed|rejected"`
	Text    *string `json:"text" check:"required,message"`
}

// TaskArgs name a task.
type TaskArgs struct {
	TaskID *string `json:"task_id" check:"required,id"`
}

var errNoTask = FieldError(CodeNotFound, "task_id", "No such task of yours.").Then(NextTasks)

// SendTask files a task for another agent.
func (s *Service) SendTask(ctx context.Context, c Caller, a SendTaskArgs) (Task, error) {
	agent, err := registered(c, &a)
	if err != nil {
		return Task{}, err
	}
	t := NewTask{To: *a.To, Text: *a.Text}
	if a.Skill != nil {
		if !ValidScope(scopeTaskPrefix + *a.Skill) {
			return Task{}, FieldError(CodeInvalidArgument, "skill", "A skill is 1 to %d of a-z, 0-9, '.', '_', '-' (as in a task:<skill> scope).", maxSkill)
		}
		t.Skill = *a.Skill
	}
	if t.To == agent.ID {
		return Task{}, errSelfTask // no round trip for what needs no row
	}
	return s.store.AddTask(ctx, c.actor(), t, TaskRule{Limits: s.cfg.Limits})
}

func orAny(skill string) string {
	if skill == "" {
		return "<skill>"
	}
	return skill
}

// Tasks lists the caller's incoming (default) or outgoing tasks. Incoming
// ones default to the open ones, outgoing ones to all.
func (s *Service) Tasks(ctx context.Context, c Caller, a ListTasksArgs) (TasksResult, error) {
	agent, err := registered(c, &a)
	if err != nil {
		return TasksResult{}, err
	}
	incoming := a.Direction == nil || *a.Direction == "incoming"
	status := "any"
	if incoming {
		status = TaskOpen
	}
	if a.Status != nil {
		status = *a.Status
	}
	q := TaskQuery{AgentID: agent.ID, Incoming: incoming, Status: status, Limit: *a.Limit, Offset: *a.Offset}
	for field, f := range map[string]struct{ from, to *string }{"with": {a.With, &q.With}, "agreement_id": {a.AgreementID, &q.AgreementID}} {
		if f.from != nil {
			if err := CheckID(field, *f.from); err != nil {
				return TasksResult{}, err
			}
			*f.to = *f.from
		}
	}
	if a.ChangedSince != nil {
		q.ChangedSince = *a.ChangedSince
	}
	list, total, serr := s.store.Tasks(ctx, q)
	if serr != nil {
		return TasksResult{}, serr
	}
	return TasksResult{Page: Page[Task]{Items: list, Total: total, Offset: *a.Offset}, Incoming: incoming}, nil
}

// GetTask is one task of which the caller is a party.
func (s *Service) GetTask(ctx context.Context, c Caller, a TaskArgs) (Task, error) {
	agent, err := registered(c, &a)
	if err != nil {
		return Task{}, err
	}
	t, serr := s.store.Task(ctx, agent.ID, *a.TaskID)
	return t, ruleErrors(serr, map[error]*Error{ErrNotFound: errNoTask})
}

var taskDecided = Errorf(CodeNotPending, "That task was already answered or canceled.")

// CompleteTask is the target's answer to a task.
func (s *Service) CompleteTask(ctx context.Context, c Caller, a CompleteTaskArgs) (Task, error) {
	if _, err := registered(c, &a); err != nil {
		return Task{}, err
	}
	t, serr := s.store.AnswerTask(ctx, c.actor(), *a.TaskID, *a.Outcome, *a.Text)
	return t, ruleErrors(serr, map[error]*Error{ErrNotFound: errNoTask, ErrNotPending: taskDecided})
}

// CancelTask is the requester's cancel of an open task.
func (s *Service) CancelTask(ctx context.Context, c Caller, a TaskArgs) (Task, error) {
	if _, err := registered(c, &a); err != nil {
		return Task{}, err
	}
	t, serr := s.store.CancelTask(ctx, c.actor(), *a.TaskID)
	return t, ruleErrors(serr, map[error]*Error{ErrNotFound: errNoTask, ErrNotPending: taskDecided})
}

// GrantedSkills are the task skills granted by scopes (task:<skill>).
func GrantedSkills(scopes []string) []string {
	var out []string
	for _, s := range scopes {
		if skill, ok := strings.CutPrefix(s, scopeTaskPrefix); ok {
			out = append(out, skill)
		}
	}
	return out
}
