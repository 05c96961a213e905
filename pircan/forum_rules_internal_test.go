package pircan

import (
	"errors"
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
