package a2a

import (
	"time"

	"github.com/creatimus/pircan/pircan"
)

// The A2A 1.0 objects PIRCAN writes, in ProtoJSON (camelCase fields, enum
// names as strings; A2A §5.5).

// Task is A2A's Task.
type Task struct {
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	Artifacts []Artifact     `json:"artifacts,omitempty"`
	History   []Message      `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// TaskStatus is A2A's TaskStatus.
type TaskStatus struct {
	State     string   `json:"state"`
	Message   *Message `json:"message,omitempty"`
	Timestamp string   `json:"timestamp"`
}

// Message is A2A's Message.
type Message struct {
	MessageID string         `json:"messageId"`
	ContextID string         `json:"contextId,omitempty"`
	TaskID    string         `json:"taskId,omitempty"`
	Role      string         `json:"role"`
	Parts     []Part         `json:"parts"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// Part is A2A's Part: PIRCAN writes text parts only.
type Part struct {
	Text      string `json:"text"`
	MediaType string `json:"mediaType,omitempty"`
}

// Artifact is A2A's Artifact.
type Artifact struct {
	ArtifactID string `json:"artifactId"`
	Name       string `json:"name,omitempty"`
	Parts      []Part `json:"parts"`
}

// A2A 1.0 enum names.
const (
	RoleUser  = "ROLE_USER"
	RoleAgent = "ROLE_AGENT"

	StateSubmitted = "TASK_STATE_SUBMITTED"
	StateCompleted = "TASK_STATE_COMPLETED"
	StateFailed    = "TASK_STATE_FAILED"
	StateRejected  = "TASK_STATE_REJECTED"
	StateCanceled  = "TASK_STATE_CANCELED"
)

const textPlain = "text/plain"

// states maps the core's task states to A2A's. An open task is SUBMITTED:
// PIRCAN knows it was filed and the target told, not whether the target
// works on it.
var states = map[string]string{
	pircan.TaskOpen:      StateSubmitted,
	pircan.TaskCompleted: StateCompleted,
	pircan.TaskFailed:    StateFailed,
	pircan.TaskRejected:  StateRejected,
	pircan.TaskCanceled:  StateCanceled,
}

// coreStates is states reversed, for ListTasks' status filter.
var coreStates = func() map[string]string {
	m := map[string]string{}
	for k, v := range states {
		m[v] = k
	}
	return m
}()

// view says how much of a task to write.
type view struct {
	history   int  // most history messages; -1: all
	artifacts bool // ListTasks writes them only on includeArtifacts
}

var fullView = view{history: -1, artifacts: true}

// renderTask is a core task as A2A's Task. Its context is the agreement
// the task was asked under; its history is the request; an answer is the
// status message and, when completed, the one artifact.
func renderTask(t pircan.Task, v view) Task {
	ctxID := t.AgreementID
	if ctxID == "" {
		ctxID = t.ID
	}
	at := t.At
	if !t.AnsweredAt.IsZero() {
		at = t.AnsweredAt
	}
	out := Task{ID: t.ID, ContextID: ctxID, Metadata: map[string]any{"skill": t.Skill},
		Status: TaskStatus{State: states[t.State], Timestamp: timestamp(at)}}
	if out.Status.State == "" { // a state this face does not know: never expected
		out.Status.State = "TASK_STATE_UNSPECIFIED"
	}
	if t.State != pircan.TaskOpen && t.State != pircan.TaskCanceled {
		answer := Message{MessageID: t.ID + "-answer", ContextID: ctxID, TaskID: t.ID, Role: RoleAgent,
			Parts: []Part{{Text: t.Answer, MediaType: textPlain}}}
		out.Status.Message = &answer
		if t.State == pircan.TaskCompleted && v.artifacts {
			out.Artifacts = []Artifact{{ArtifactID: t.ID + "-answer", Name: "answer", Parts: answer.Parts}}
		}
	}
	if v.history != 0 {
		out.History = []Message{{MessageID: t.ID + "-request", ContextID: ctxID, TaskID: t.ID, Role: RoleUser,
			Parts: []Part{{Text: t.Text, MediaType: textPlain}}, Metadata: map[string]any{"skill": t.Skill}}}
	}
	return out
}

// timestamp is ISO 8601 in UTC with milliseconds (A2A §5.6.1).
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
