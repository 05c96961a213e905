// Package a2aclient tests an A2A 1.0 agent (JSON-RPC binding) end to end with
// a client PIRCAN did not write: the official A2A JavaScript SDK, driven by
// testdata/a2aclient/client.mjs under node. A test hands Run a plan of steps
// and gets one Outcome per step.
package a2aclient

import (
	"encoding/json"
	"github.com/creatimus/pircan/internal/nodeclient"
	"testing"
)

// Terminal are the task states a Poll with no states waits for: PIRCAN's
// final ones (A2A's TASK_STATE_COMPLETED is "completed", and so on).
var Terminal = []string{"completed", "failed", "rejected", "canceled"}

// Step is one thing the client does (see client.mjs).
type Step struct {
	Op         string   `json:"op"`
	URL        string   `json:"url,omitempty"`
	Base       string   `json:"base,omitempty"`
	Text       string   `json:"text,omitempty"`
	Skill      string   `json:"skill,omitempty"`
	ID         string   `json:"id,omitempty"`
	Until      []string `json:"until,omitempty"`
	TimeoutMS  int      `json:"timeout_ms,omitempty"`
	IntervalMS int      `json:"interval_ms,omitempty"`
}

// Card resolves the agent card at url (Run's cardURL when empty) with the
// SDK's resolver and makes the client of later steps from it; its result is
// the card as served. Without a Card step the first step makes the client
// from Run's cardURL.
func Card(url string) Step { return Step{Op: "card", URL: url} }

// CardFrom is Card as a user of the SDK writes it with an agent's URL:
// createFromUrl(base), the SDK finding the card below base by its own
// rule (.well-known/agent-card.json resolved against base).
func CardFrom(base string) Step { return Step{Op: "card", Base: base} }

// Send sends a user message with one text part (SendMessage); skill, when not
// empty, is the message's metadata.skill. Its result is the
// SendMessageResponse: {"task":{...}} or {"message":{...}}.
func Send(text, skill string) Step { return Step{Op: "send", Text: text, Skill: skill} }

// Get fetches a task (GetTask).
func Get(id string) Step { return Step{Op: "get", ID: id} }

// List lists the caller's tasks (ListTasks, no filter).
func List() Step { return Step{Op: "list"} }

// Cancel cancels a task (CancelTask).
func Cancel(id string) Step { return Step{Op: "cancel", ID: id} }

// Poll repeats GetTask, as an A2A client without streaming does, until the
// task's state is one of states (short names: "completed"; Terminal when
// none), for up to 20 s. Its result is the task; on timeout its Err's Data
// holds {"last": task}.
func Poll(id string, states ...string) Step {
	if len(states) == 0 {
		states = Terminal
	}
	return Step{Op: "poll", ID: id, Until: states, TimeoutMS: 20000, IntervalMS: 100}
}

// Run has the SDK's client, made from the agent card at cardURL, run the steps
// with "Authorization: Bearer token" on every request (none when token is
// empty) and returns their outcomes, in order. It skips the test when node is
// not installed and fails it, with the client's stderr, when the harness
// itself fails.
func Run(t testing.TB, cardURL, token string, steps ...Step) []Outcome {
	t.Helper()
	lines := nodeclient.Run(t, "testdata/a2aclient", []string{"A2A_CARD_URL=" + cardURL, "A2A_TOKEN=" + token}, steps, len(steps))
	outcomes := make([]Outcome, len(lines))
	for i, line := range lines {
		if err := json.Unmarshal(line, &outcomes[i]); err != nil {
			t.Fatalf("a2aclient: outcome line %d: %v: %s", i+1, err, line)
		}
		outcomes[i].Line = string(line)
	}
	return outcomes
}
