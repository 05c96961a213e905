package pircan

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// The forum's pure rules, table by table: no store.

func line(account, ext string) Line { return Line{Account: account, Extension: ext} }

func agentActor(account, ext string, lock bool) ForumActor {
	return ForumActor{Line: line(account, ext), Identity: "pircan:" + account, Lock: lock}
}

var (
	operatorActor = ForumActor{Line: Line{Human: "ops"}, Identity: "human:ops", Operator: "ops"}
	ownerActor    = ForumActor{Line: Line{Human: "Ann"}, Identity: "human:Ann", Owner: "ann"}
)

func view(state, proposed string) ThreadView {
	return ThreadView{Thread: Thread{ID: 1, Creator: line("alice", ""), State: state, StateOrigin: OriginLLM, Proposed: proposed}}
}

func code(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err != nil {
		return "?"
	}
	return ""
}

func TestMessageRuleStates(t *testing.T) {
	alice, bob := agentActor("alice", "", false), agentActor("bob", "w1", false)
	mod := agentActor("mod", "", true)
	for _, c := range []struct {
		name              string
		actor             ForumActor
		kind              string
		v                 ThreadView
		err               Code
		state, proposed   string
		events            int
		confirmedMoveWant bool
	}{
		{"answer proposes answered", bob, "answer", view(StateOpen, ""), "", StateOpen, StateAnswered, 1, false},
		{"lock holder's answer is confirmed", mod, "answer", view(StateOpen, ""), "", StateAnswered, "", 1, true},
		{"answer on answered moves nothing", bob, "answer", view(StateAnswered, ""), "", StateAnswered, "", 0, false},
		{"answer on decided moves nothing (backwards)", bob, "answer", view(StateDecided, ""), "", StateDecided, "", 0, false},
		{"decide by the creator from open: two steps", alice, "decide", view(StateOpen, ""), "", StateOpen, StateDecided, 1, false},
		{"decide by another line", bob, "decide", view(StateAnswered, ""), CodeThreadAuthorityMissing, "", "", 0, false},
		{"decide by a lock holder", mod, "decide", view(StateAnswered, ""), "", StateDecided, "", 1, true},
		{"note on a side state", bob, "note", view(StateDeferred, ""), "", StateDeferred, "", 0, false},
		{"confirmed closed refuses", mod, "note", view(StateClosed, ""), CodeThreadClosed, "", "", 0, false},
		{"a proposed close does not lock", bob, "note", view(StateDecided, StateClosed), "", StateDecided, StateClosed, 0, false},
		{"a proposed reopen does not unlock", alice, "note", view(StateClosed, StateOpen), CodeThreadClosed, "", "", 0, false},
	} {
		ch, err := messageRule(c.actor, c.kind, nil)(c.v, nil)
		if code(err) != c.err {
			t.Errorf("%s: got %v, want %s", c.name, err, c.err)
			continue
		}
		if err != nil {
			continue
		}
		if ch.Thread.State != c.state || ch.Thread.Proposed != c.proposed || len(ch.Events) != c.events {
			t.Errorf("%s: state %s proposed %q events %d; want %s %q %d", c.name, ch.Thread.State, ch.Thread.Proposed,
				len(ch.Events), c.state, c.proposed, c.events)
		}
		if c.events > 0 && ch.Events[0].Confirmed != c.confirmedMoveWant {
			t.Errorf("%s: event confirmed %v", c.name, ch.Events[0].Confirmed)
		}
	}
}

func TestSelfReply(t *testing.T) {
	v := view(StateOpen, "")
	same := line("bob", "w1")
	if _, err := messageRule(agentActor("BOB", "w1", false), "answer", nil)(v, &same); code(err) != CodeSelfReply {
		t.Fatalf("same account (any case) and extension: %v", err)
	}
	if _, err := messageRule(agentActor("bob", "w2", false), "answer", nil)(v, &same); err != nil {
		t.Fatalf("another extension of the same account may reply: %v", err)
	}
}

func TestTurn(t *testing.T) {
	creator, bob, carol := line("alice", ""), line("bob", "w1"), line("carol", "")
	for _, c := range []struct {
		name     string
		kind     string
		author   Line
		parent   *Line
		to       *Line
		awaiting bool
		due      *Line
	}{
		{"answer awaits nobody", "answer", bob, &creator, nil, false, nil},
		{"ask with a parent: its author", "ask", bob, &carol, nil, true, &carol},
		{"handover without parent: to", "handover", bob, nil, &carol, true, &carol},
		{"handover with a parent: the parent's author first", "handover", bob, &creator, &carol, true, &creator},
		{"ask by another: the creator", "ask", bob, nil, nil, true, &creator},
		{"ask by the creator: nobody in particular", "ask", creator, nil, nil, true, nil},
		{"propose to oneself under another extension", "propose", line("alice", "x"), nil, nil, true, &creator},
		{"request, refute expect replies", "refute", bob, nil, nil, true, &creator},
		{"note expects none", "note", bob, nil, nil, false, nil},
	} {
		aw, due := turnAfter(c.kind, c.author, c.parent, c.to, creator)
		if aw != c.awaiting || (due == nil) != (c.due == nil) || (due != nil && !due.Same(*c.due)) {
			t.Errorf("%s: awaiting %v due %+v; want %v %+v", c.name, aw, due, c.awaiting, c.due)
		}
	}
}

func TestMarks(t *testing.T) {
	alice, bob, mod := agentActor("alice", "", false), agentActor("bob", "", false), agentActor("mod", "", true)
	owned := view(StateDecided, "")
	owned.OwnedByActor = true
	for _, c := range []struct {
		name            string
		rule            func(ThreadView) (Change, error)
		v               ThreadView
		err             Code
		state, proposed string
	}{
		{"creator proposes close", closeRule(alice), view(StateDecided, ""), "", StateDecided, StateClosed},
		{"creator closes from open", closeRule(alice), view(StateOpen, ""), "", StateOpen, StateClosed},
		{"another line may not close", closeRule(bob), view(StateOpen, ""), CodeThreadAuthorityMissing, "", ""},
		{"lock holder closes, confirmed", closeRule(mod), view(StateAnswered, ""), "", StateClosed, ""},
		{"lock holder confirms a proposed close by closing", closeRule(mod), view(StateDecided, StateClosed), "", StateClosed, ""},
		{"creator cannot propose close twice", closeRule(alice), view(StateDecided, StateClosed), CodeStateInvalid, "", ""},
		{"closing a closed thread", closeRule(operatorActor), view(StateClosed, ""), CodeThreadClosed, "", ""},
		{"close from a side state", closeRule(alice), view(StateDeferred, ""), CodeStateInvalid, "", ""},
		{"owner of the creator's agent closes", closeRule(ownerActor), owned, "", StateClosed, ""},
		{"owner of another agent", closeRule(ownerActor), view(StateDecided, ""), CodeThreadAuthorityMissing, "", ""},
		{"operator reopens a closed thread", reopenRule(operatorActor), view(StateClosed, ""), "", StateOpen, ""},
		{"creator's reopen of a closed thread is a proposal", reopenRule(alice), view(StateClosed, ""), "", StateClosed, StateOpen},
		{"reopen an open thread", reopenRule(alice), view(StateOpen, ""), CodeStateInvalid, "", ""},
		{"reopen from a side state", reopenRule(mod), view(StateObsolete, ""), "", StateOpen, ""},
		{"side state from answered", sideRule(alice, StateDeferred), view(StateAnswered, ""), "", StateAnswered, StateDeferred},
		{"side state from a side state", sideRule(mod, StateRejected), view(StateDeferred, ""), CodeStateInvalid, "", ""},
		{"side state on a closed thread", sideRule(mod, StateRejected), view(StateClosed, ""), CodeThreadClosed, "", ""},
		{"confirm a proposal", confirmRule(operatorActor, true), view(StateOpen, StateAnswered), "", StateAnswered, ""},
		{"decline a proposal", confirmRule(operatorActor, false), view(StateOpen, StateAnswered), "", StateOpen, ""},
		{"confirm nothing", confirmRule(operatorActor, true), view(StateOpen, ""), CodeNothingToConfirm, "", ""},
		{"owner confirms another's", confirmRule(ownerActor, true), view(StateOpen, StateAnswered), CodeThreadAuthorityMissing, "", ""},
	} {
		ch, err := c.rule(c.v)
		if code(err) != c.err {
			t.Errorf("%s: got %v, want %s", c.name, err, c.err)
			continue
		}
		if err == nil && (ch.Thread.State != c.state || ch.Thread.Proposed != c.proposed || len(ch.Events) != 1) {
			t.Errorf("%s: state %s proposed %q events %d; want %s %q", c.name, ch.Thread.State, ch.Thread.Proposed, len(ch.Events), c.state, c.proposed)
		}
	}
}

func TestKeys(t *testing.T) {
	for _, c := range []struct {
		key    Key
		prefix string
		n      int64
		ok     bool
	}{
		{"th_12", ThreadPrefix, 12, true}, {"12", ThreadPrefix, 12, true}, {"msg_3", MessagePrefix, 3, true},
		{"th_0", ThreadPrefix, 0, false}, {"th_012", ThreadPrefix, 0, false}, {"th_", ThreadPrefix, 0, false},
		{"msg_3", ThreadPrefix, 0, false}, {"th_1x", ThreadPrefix, 0, false}, {"-1", ThreadPrefix, 0, false},
		{"1234567890123456", ThreadPrefix, 0, false},
	} {
		if n, ok := c.key.number(c.prefix); n != c.n || ok != c.ok {
			t.Errorf("%q under %s: %d %v", c.key, c.prefix, n, ok)
		}
	}
}

func TestEnvelopeText(t *testing.T) {
	for _, c := range []struct {
		body string
		rule string
	}{
		{"fine\nwith a line break", ""},
		{"", RuleBlank}, {" \n ", RuleBlank}, {"tab\there", RuleControl}, {"bell\a", RuleControl},
		{"nel\u0085", RuleControl}, {"rlo\u202e", RuleControl},
		{string(make([]rune, 0)) + repeat("é", 500), ""}, {repeat("😀", 501), RuleLength},
	} {
		err := checkForumText("body", c.body, MaxForumBody, true)
		if (err == nil) != (c.rule == "") || (err != nil && err.Rule != c.rule) {
			t.Errorf("%q: %v, want rule %q", c.body, err, c.rule)
		}
	}
	if err := checkExtension("from.extension", "worker-2.a_b"); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"", "a b", repeat("x", 41), "ü"} {
		if checkExtension("from.extension", bad) == nil {
			t.Errorf("extension %q accepted", bad)
		}
	}
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

// A title is the first line whichever line break ends it: a lone CR (a
// line break the body may hold) does not carry the next line into it.
func TestThreadTitle(t *testing.T) {
	for body, want := range map[string]string{
		"How?\nDetails":         "How?",
		"title\rFAKE: all good": "title",
		"title\r\nnext":         "title",
		"\n\n  first  \nsecond": "first",
		"\r\nfirst\rsecond":     "first",
		strings.Repeat("é", 81): strings.Repeat("é", 79) + "…",
	} {
		if got := ThreadTitle(body); got != want {
			t.Errorf("ThreadTitle(%q) = %q, want %q", body, got, want)
		}
	}
}

// AI reactions forbidden: every write of a model in the thread is refused
// before any other rule (lock holders and the creator too); humans' marks
// are not; only a human with authority forbids or allows them.
func TestLLMReplyForbidden(t *testing.T) {
	alice, bob, mod := agentActor("alice", "", false), agentActor("bob", "w1", false), agentActor("mod", "", true)
	forbidden := func(state, proposed string) ThreadView {
		v := view(state, proposed)
		v.LLMForbidden = true
		return v
	}
	owned := forbidden(StateOpen, StateAnswered)
	owned.OwnedByActor = true
	msg := func(a ForumActor, kind string) func(ThreadView) (Change, error) {
		return func(v ThreadView) (Change, error) { return messageRule(a, kind, nil)(v, nil) }
	}
	for _, c := range []struct {
		name string
		rule func(ThreadView) (Change, error)
		v    ThreadView
		err  Code
	}{
		{"a model's note", msg(bob, "note"), forbidden(StateOpen, ""), CodeLLMReplyForbidden},
		{"the creator's answer", msg(alice, "answer"), forbidden(StateOpen, ""), CodeLLMReplyForbidden},
		{"a lock holder's decide", msg(mod, "decide"), forbidden(StateAnswered, ""), CodeLLMReplyForbidden},
		{"before thread_closed", msg(bob, "note"), forbidden(StateClosed, ""), CodeLLMReplyForbidden},
		{"the creator's close", closeRule(alice), forbidden(StateDecided, ""), CodeLLMReplyForbidden},
		{"a lock holder's close", closeRule(mod), forbidden(StateDecided, ""), CodeLLMReplyForbidden},
		{"the creator's reopen of a closed thread", reopenRule(alice), forbidden(StateClosed, ""), CodeLLMReplyForbidden},
		{"a side state", sideRule(alice, StateDeferred), forbidden(StateOpen, ""), CodeLLMReplyForbidden},
		{"a pin", pinRule(mod, true), forbidden(StateOpen, ""), CodeLLMReplyForbidden},
		{"a model's note where allowed", msg(bob, "note"), view(StateOpen, ""), ""},
		{"an operator closes", closeRule(operatorActor), forbidden(StateDecided, ""), ""},
		{"an operator reopens", reopenRule(operatorActor), forbidden(StateClosed, ""), ""},
		{"an operator sets a side state", sideRule(operatorActor, StateObsolete), forbidden(StateOpen, ""), ""},
		{"an operator pins", pinRule(operatorActor, true), forbidden(StateOpen, ""), ""},
		{"an owner confirms", confirmRule(ownerActor, true), owned, ""},
		{"an owner declines", confirmRule(ownerActor, false), owned, ""},
		{"an agent may not forbid", llmRule(mod, true), view(StateOpen, ""), CodeUserSessionRequired},
		{"nor allow", llmRule(alice, false), forbidden(StateOpen, ""), CodeUserSessionRequired},
		{"an owner of another's thread", llmRule(ownerActor, true), view(StateOpen, ""), CodeThreadAuthorityMissing},
	} {
		if _, err := c.rule(c.v); code(err) != c.err {
			t.Errorf("%s: got %v, want %q", c.name, err, c.err)
		}
	}

	// Forbidding: an event by the human, confirmed, on a closed thread too.
	ch, err := llmRule(operatorActor, true)(view(StateClosed, ""))
	if err != nil || !ch.Thread.LLMForbidden || ch.NewTurn || len(ch.Events) != 1 {
		t.Fatalf("forbid: %+v %v", ch, err)
	}
	if e := ch.Events[0]; e.Type != EventLLMForbidden || e.By != "human:ops" || e.Origin != OriginUser || !e.Confirmed || e.To != "" {
		t.Fatalf("forbid's event: %+v", e)
	}
	// Setting what is set changes nothing and records nothing.
	if ch, err := llmRule(operatorActor, true)(forbidden(StateOpen, "")); err != nil || len(ch.Events) != 0 || !ch.Thread.LLMForbidden {
		t.Fatalf("forbid twice: %+v %v", ch, err)
	}
	if ch, err := llmRule(operatorActor, false)(view(StateOpen, "")); err != nil || len(ch.Events) != 0 || ch.NewTurn {
		t.Fatalf("allow what is allowed: %+v %v", ch, err)
	}
	// Allowing: a thread awaiting a line gets a new turn; one awaiting
	// nobody in particular does not.
	due := forbidden(StateOpen, "")
	due.Awaiting, due.Due, due.OwnedByActor = true, &Line{Account: "alice"}, true
	ch, err = llmRule(ownerActor, false)(due)
	if err != nil || ch.Thread.LLMForbidden || !ch.NewTurn || ch.Events[0].Type != EventLLMAllowed || ch.Events[0].By != "human:Ann" {
		t.Fatalf("allow with a due line: %+v %v", ch, err)
	}
	nobody := forbidden(StateOpen, "")
	nobody.Awaiting, nobody.OwnedByActor = true, true
	if ch, err := llmRule(ownerActor, false)(nobody); err != nil || ch.NewTurn {
		t.Fatalf("allow with nobody due: %+v %v", ch, err)
	}

	// The marks a human is offered: forbid-ai, or allow-ai where forbidden.
	if got := humanMoves(operatorActor, view(StateOpen, "")); got[len(got)-1] != MoveForbidAI || slices.Contains(got, MoveAllowAI) {
		t.Fatalf("moves of an allowed thread: %v", got)
	}
	if got := humanMoves(operatorActor, forbidden(StateClosed, "")); !slices.Equal(got, []string{MoveReopen, MoveAllowAI}) {
		t.Fatalf("moves of a closed thread where AI reactions are forbidden: %v", got)
	}
	if got := humanMoves(ownerActor, forbidden(StateOpen, "")); len(got) != 0 {
		t.Fatalf("an owner's moves on another's thread: %v", got)
	}
}
