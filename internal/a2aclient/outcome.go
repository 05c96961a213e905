package a2aclient

import (
	"encoding/json"
	"strings"
)

// Outcome is what one step came to: the SDK's result, back in A2A's JSON, in
// Result, or what it threw in Err.
type Outcome struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Err    *Error          `json:"error,omitempty"`
	// Line is the outcome as client.mjs printed it, for failure messages.
	Line string `json:"-"`
}

// Error is what the SDK threw. Code is the JSON-RPC error code (0 when the
// error is not one, e.g. a poll's timeout) with the error's Data; HTTPStatus
// is the status of the last HTTP response when it was not 2xx (0 otherwise).
type Error struct {
	Code       int             `json:"code"`
	Message    string          `json:"message"`
	Data       json.RawMessage `json:"data,omitempty"`
	HTTPStatus int             `json:"http_status,omitempty"`
	Name       string          `json:"name,omitempty"`  // the SDK's error class, e.g. TaskNotFoundError
	Cause      string          `json:"cause,omitempty"` // e.g. ECONNREFUSED under "fetch failed"
}

// Decode unmarshals the raw result into v.
func (o Outcome) Decode(v any) error { return json.Unmarshal(o.Result, v) }

// Task returns the outcome's task as a JSON object: the result of Get, Cancel
// and Poll, the "task" of Send's (nil when there is none).
func (o Outcome) Task() map[string]any {
	var r struct {
		Task map[string]any `json:"task"`
		ID   *string        `json:"id"`
	}
	if !o.OK || json.Unmarshal(o.Result, &r) != nil {
		return nil
	}
	if r.Task != nil {
		return r.Task
	}
	if r.ID == nil {
		return nil
	}
	var t map[string]any
	_ = json.Unmarshal(o.Result, &t)
	return t
}

// task is the part of an A2A Task the helpers read.
type task struct {
	ID     string `json:"id"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
	Artifacts []struct {
		Parts []struct {
			Text *string `json:"text"`
		} `json:"parts"`
	} `json:"artifacts"`
}

func (o Outcome) task() task {
	var t task
	if m := o.Task(); m != nil {
		b, _ := json.Marshal(m)
		_ = json.Unmarshal(b, &t)
	}
	return t
}

// TaskID is the task's id ("" when the outcome has no task).
func (o Outcome) TaskID() string { return o.task().ID }

// State is the task's state by its short name: "completed" for A2A's
// TASK_STATE_COMPLETED, "input_required", … ("" when there is no task).
func (o Outcome) State() string { return ShortState(o.task().Status.State) }

// WireState is the task's state as sent, e.g. "TASK_STATE_COMPLETED".
func (o Outcome) WireState() string { return o.task().Status.State }

// ArtifactText joins the text parts of the task's artifacts with newlines.
func (o Outcome) ArtifactText() string {
	var parts []string
	for _, a := range o.task().Artifacts {
		for _, p := range a.Parts {
			if p.Text != nil {
				parts = append(parts, *p.Text)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// ShortState turns an A2A task state into its short name, as client.mjs does
// for Poll: TASK_STATE_INPUT_REQUIRED → input_required.
func ShortState(wire string) string {
	return strings.ToLower(strings.TrimPrefix(wire, "TASK_STATE_"))
}

// Tasks returns a List outcome's tasks, as JSON objects.
func (o Outcome) Tasks() []map[string]any {
	var r struct {
		Tasks []map[string]any `json:"tasks"`
	}
	if o.OK {
		_ = json.Unmarshal(o.Result, &r)
	}
	return r.Tasks
}
