package mcp_test

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// fakeTasks is the real store with in-memory tasks in place of
// store/tasks.go: the task tools' test runs over it whatever the store's
// state. An agreement granting task:<skill> is stood in by grant (the real
// rule, from agreements, is the store's: see TestTaskToolsRealStore).
type fakeTasks struct {
	*store.Store
	mu     sync.Mutex
	list   []pircan.Task              // oldest first
	grants map[[2]string][]string     // {requester, target}: skills granted
	names  map[string]pircan.PartyRef // by agent id
}

func newFakeTasks() *fakeTasks {
	return &fakeTasks{Store: shared, grants: map[[2]string][]string{}, names: map[string]pircan.PartyRef{}}
}

// grant lets from ask to for tasks of skill.
func (f *fakeTasks) grant(from, to pircan.PartyRef, skill string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.names[from.AgentID], f.names[to.AgentID] = from, to
	k := [2]string{from.AgentID, to.AgentID}
	f.grants[k] = append(f.grants[k], skill)
}

func (f *fakeTasks) AddTask(_ context.Context, actor pircan.Actor, n pircan.NewTask, rule pircan.TaskRule) (pircan.Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	facts := pircan.TaskFacts{TargetExists: true} // the fake keeps no directory
	for _, skill := range f.grants[[2]string{actor.AgentID, n.To}] {
		facts.Active = append(facts.Active, pircan.TaskGranting{ID: uuid(), Scopes: []string{"task:" + skill}})
	}
	grant, refusal := rule.Decide(actor.AgentID, n, facts)
	if refusal != nil {
		return pircan.Task{}, refusal
	}
	t := pircan.Task{ID: uuid(), Skill: grant.Skill, From: f.names[actor.AgentID], To: f.names[n.To],
		At: time.Now().UTC().Truncate(time.Second), State: pircan.TaskOpen, Text: n.Text}
	f.list = append(f.list, t)
	return t, nil
}

func (f *fakeTasks) Tasks(_ context.Context, q pircan.TaskQuery) ([]pircan.Task, int, error) {
	agentID, incoming, status, limit, offset := q.AgentID, q.Incoming, q.Status, q.Limit, q.Offset
	f.mu.Lock()
	defer f.mu.Unlock()
	var match []pircan.Task
	for _, t := range slices.Backward(f.list) { // newest first; open ones first below
		party := t.From.AgentID
		if incoming {
			party = t.To.AgentID
		}
		if party == agentID && (status == "any" || status == t.State) {
			match = append(match, t)
		}
	}
	slices.SortStableFunc(match, func(a, b pircan.Task) int {
		return boolInt(b.State == pircan.TaskOpen) - boolInt(a.State == pircan.TaskOpen)
	})
	page := match[min(offset, len(match)):]
	return page[:min(limit, len(page))], len(match), nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (f *fakeTasks) Task(_ context.Context, agentID, id string) (pircan.Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.list {
		if t.ID == id && (t.From.AgentID == agentID || t.To.AgentID == agentID) {
			return t, nil
		}
	}
	return pircan.Task{}, pircan.ErrNotFound
}

// decide moves the actor's open task id to state: the actor must be its
// target (answer) or its requester (cancel).
func (f *fakeTasks) decide(actor pircan.Actor, id string, target bool, state, answer string) (pircan.Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, t := range f.list {
		party := t.From.AgentID
		if target {
			party = t.To.AgentID
		}
		if t.ID != id || party != actor.AgentID {
			continue
		}
		if t.State != pircan.TaskOpen {
			return pircan.Task{}, pircan.ErrNotPending
		}
		t.State, t.Answer, t.AnsweredAt = state, answer, time.Now().UTC()
		f.list[i] = t
		return t, nil
	}
	return pircan.Task{}, pircan.ErrNotFound
}

func (f *fakeTasks) AnswerTask(_ context.Context, actor pircan.Actor, id, outcome, text string) (pircan.Task, error) {
	return f.decide(actor, id, true, outcome, text)
}

func (f *fakeTasks) CancelTask(_ context.Context, actor pircan.Actor, id string) (pircan.Task, error) {
	return f.decide(actor, id, false, pircan.TaskCanceled, "")
}
