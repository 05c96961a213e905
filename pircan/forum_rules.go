package pircan

import "slices"

// The forum's rules as pure functions over a locked thread (ThreadView):
// the store runs them inside the transaction that holds the thread's row,
// so two racing marks see each other. Each returns the thread as it is to
// become and the events to record, or a refusal.
//
// The one rule: a state a human sets is confirmed; a state a model sets is
// a proposal until a human confirms it, except a lock holder's, which is
// confirmed at once. A thread keeps its confirmed state (which decides
// whether it is locked) and a model's pending proposal apart; clients see
// the proposal as the state, with state_confirmed false.

// ExpectsReply reports whether an act expects a reply (sets awaiting).
func ExpectsReply(kind string) bool {
	switch kind {
	case "ask", "propose", "refute", "request", "handover":
		return true
	}
	return false
}

// forward is the place of a state on the forward line (-1: a side state).
func forward(state string) int {
	return slices.Index([]string{StateOpen, StateAnswered, StateDecided, StateClosed}, state)
}

// hasAuthority: the thread's creator (its account, any extension), a lock
// holder, an operator, or an owner of the creator's agent.
func hasAuthority(a ForumActor, v ThreadView) bool {
	switch {
	case a.Operator != "":
		return true
	case a.Owner != "":
		return v.OwnedByActor
	case a.Lock:
		return true
	}
	return FoldAccount(a.Account) == FoldAccount(v.Creator.Account)
}

// confirms reports whether the actor's marks are confirmed at once.
func confirms(a ForumActor) bool { return a.IsHuman() || a.Lock }

func originOf(a ForumActor) string {
	if a.IsHuman() {
		return OriginUser
	}
	return OriginLLM
}

// moveTo moves t to state by a: a confirmed move for a human or a lock
// holder (any pending proposal goes), else a proposal. The event names the
// shown state before and after.
func moveTo(a ForumActor, t Thread, to string, msg int64) (Thread, ForumEvent) {
	from := t.Shown()
	if confirms(a) {
		t.State, t.StateOrigin, t.Proposed = to, originOf(a), ""
	} else {
		t.Proposed = to
		if to == t.State { // back to the confirmed state: nothing left to confirm
			t.Proposed = ""
		}
	}
	return t, ForumEvent{ThreadID: t.ID, Type: EventState, From: from, To: to, Origin: originOf(a),
		Confirmed: confirms(a), By: a.Identity, ByExt: a.Extension, Message: msg}
}

// actTarget is the state an act moves the shown state to: answer opens
// → answered, decide open or answered → decided (two steps at once); an
// act that would move backwards, or from a side state, moves nothing.
func actTarget(kind, shown string) (string, bool) {
	switch {
	case kind == "answer" && shown == StateOpen:
		return StateAnswered, true
	case kind == "decide" && (shown == StateOpen || shown == StateAnswered):
		return StateDecided, true
	}
	return "", false
}

// turnAfter is the turn after a message: an act that expects a reply
// awaits, and names who is due: the author of its parent, else the `to`
// of a handover, else the thread's creator (when another line wrote it),
// else nobody in particular. Never the author itself.
func turnAfter(kind string, author Line, parent, to *Line, creator Line) (bool, *Line) {
	if !ExpectsReply(kind) {
		return false, nil
	}
	var due *Line
	switch {
	case parent != nil:
		due = parent
	case kind == "handover" && to != nil:
		due = to
	default:
		due = &creator
	}
	if due.Human != "" || due.Same(author) {
		return true, nil
	}
	d := Line{Account: due.Account, Extension: due.Extension}
	return true, &d
}

// llmBarred refuses a model's write in a thread where a human forbade AI
// reactions: a message, a mark, an attestation of its claims, whatever the
// model's rights (the human outranks a lock holder). A human is not barred.
// It comes before every other check: "do not react" is the last word for a
// model, where thread_closed would send it to reopen, which is barred too.
func llmBarred(a ForumActor, forbidden bool) error {
	if forbidden && !a.IsHuman() {
		return errLLMForbidden
	}
	return nil
}

// messageRule is the rule of a message of kind by a on a thread (a new
// one or not): a model's where AI reactions are forbidden is refused, a
// confirmed closed refuses it, a parent by the same line is self_reply,
// decide needs authority; then the act's move and the turn.
func messageRule(a ForumActor, kind string, to *Line) func(v ThreadView, parent *Line) (Change, error) {
	return func(v ThreadView, parent *Line) (Change, error) {
		if err := llmBarred(a, v.LLMForbidden); err != nil {
			return Change{}, err
		}
		if v.Locked() {
			return Change{}, errThreadClosed
		}
		if parent != nil && parent.Same(a.Line) {
			return Change{}, Errorf(CodeSelfReply, "The parent is your own message (same identity and extension); reply from another extension, or not at all.")
		}
		if kind == "decide" && !hasAuthority(a, v) {
			return Change{}, errAuthority
		}
		t := v.Thread
		var events []ForumEvent
		if target, ok := actTarget(kind, t.Shown()); ok {
			var ev ForumEvent
			t, ev = moveTo(a, t, target, 0)
			events = append(events, ev)
		}
		t.Awaiting, t.Due = turnAfter(kind, a.Line, parent, to, t.Creator)
		return Change{Thread: t, Events: events}, nil
	}
}

// mayMove is what a move by authority checks first: a model where AI
// reactions are forbidden is refused, a confirmed closed thread refuses
// it, and the caller holds authority on the thread.
func mayMove(a ForumActor, v ThreadView) error {
	if err := llmBarred(a, v.LLMForbidden); err != nil {
		return err
	}
	if v.Locked() {
		return errThreadClosed
	}
	if !hasAuthority(a, v) {
		return errAuthority
	}
	return nil
}

// closeRule closes a thread (authority): from open, answered or decided;
// a pending proposed close is confirmed by a human or lock holder.
func closeRule(a ForumActor) func(ThreadView) (Change, error) {
	return func(v ThreadView) (Change, error) {
		if err := mayMove(a, v); err != nil {
			return Change{}, err
		}
		shown := v.Shown()
		if forward(shown) < 0 || (shown == StateClosed && !confirms(a)) {
			return Change{}, stateInvalid(shown, StateClosed)
		}
		t, ev := moveTo(a, v.Thread, StateClosed, 0)
		return Change{Thread: t, Events: []ForumEvent{ev}}, nil
	}
}

// reopenRule moves a thread back to open (authority), from any other
// state. A model's reopen of a confirmed closed thread is a proposal and
// does not unlock it: a proposal never changes what is locked.
func reopenRule(a ForumActor) func(ThreadView) (Change, error) {
	return func(v ThreadView) (Change, error) {
		if err := llmBarred(a, v.LLMForbidden); err != nil {
			return Change{}, err
		}
		if !hasAuthority(a, v) {
			return Change{}, errAuthority
		}
		if v.Shown() == StateOpen && (v.State == StateOpen || !confirms(a)) {
			return Change{}, stateInvalid(StateOpen, StateOpen)
		}
		t, ev := moveTo(a, v.Thread, StateOpen, 0)
		return Change{Thread: t, Events: []ForumEvent{ev}}, nil
	}
}

// sideRule sets a side state (authority) from open, answered or decided.
func sideRule(a ForumActor, state string) func(ThreadView) (Change, error) {
	return func(v ThreadView) (Change, error) {
		if err := mayMove(a, v); err != nil {
			return Change{}, err
		}
		shown := v.Shown()
		if f := forward(shown); f < 0 || f > forward(StateDecided) {
			return Change{}, stateInvalid(shown, state)
		}
		t, ev := moveTo(a, v.Thread, state, 0)
		return Change{Thread: t, Events: []ForumEvent{ev}}, nil
	}
}

// confirmRule is a human's confirmation (confirm) or decline of the
// pending proposal of a thread it has authority over.
func confirmRule(a ForumActor, confirm bool) func(ThreadView) (Change, error) {
	return func(v ThreadView) (Change, error) {
		if !hasAuthority(a, v) {
			return Change{}, errAuthority
		}
		if v.Proposed == "" {
			return Change{}, Errorf(CodeNothingToConfirm, "Thread %s has no pending proposal.", ThreadKey(v.ID))
		}
		t := v.Thread
		ev := ForumEvent{ThreadID: t.ID, Origin: OriginUser, Confirmed: true, By: a.Identity, ByExt: a.Extension}
		if confirm {
			ev.Type, ev.From, ev.To = EventConfirmed, t.State, t.Proposed
			t.State, t.StateOrigin = t.Proposed, OriginLLM
		} else {
			ev.Type, ev.From, ev.To = EventDeclined, t.Proposed, t.State
		}
		t.Proposed = ""
		return Change{Thread: t, Events: []ForumEvent{ev}}, nil
	}
}

// pinRule pins or unpins a thread (the pin right is the operation's check);
// a model may not where AI reactions are forbidden.
func pinRule(a ForumActor, pinned bool) func(ThreadView) (Change, error) {
	return func(v ThreadView) (Change, error) {
		if err := llmBarred(a, v.LLMForbidden); err != nil {
			return Change{}, err
		}
		t := v.Thread
		if t.Pinned == pinned {
			return Change{Thread: t}, nil
		}
		t.Pinned = pinned
		return Change{Thread: t, Events: []ForumEvent{flagEvent(a, t, pinned, EventPinned, EventUnpinned)}}, nil
	}
}

// flagEvent is the event of a's setting (on) or clearing a thread's flag
// (pinned, AI reactions forbidden): confirmed at once, whoever sets it.
func flagEvent(a ForumActor, t Thread, on bool, onType, offType string) ForumEvent {
	typ := offType
	if on {
		typ = onType
	}
	return ForumEvent{ThreadID: t.ID, Type: typ, Origin: originOf(a), Confirmed: true, By: a.Identity, ByExt: a.Extension}
}

// llmRule is a human's forbidding (forbid) or allowing again of AI
// reactions on a thread it has authority over, whatever its state (a
// closed thread too: the word holds once it is reopened). Setting what is
// set changes nothing and records nothing. Allowing a thread that awaits a
// line gives it a new turn: it comes to await that line again (its inbox,
// NOTIFY forum), past any cursor acknowledged while it was hidden.
func llmRule(a ForumActor, forbid bool) func(ThreadView) (Change, error) {
	return func(v ThreadView) (Change, error) {
		if !a.IsHuman() {
			return Change{}, errHumanOnly
		}
		if !hasAuthority(a, v) {
			return Change{}, errAuthority
		}
		t := v.Thread
		if t.LLMForbidden == forbid {
			return Change{Thread: t}, nil
		}
		t.LLMForbidden = forbid
		return Change{Thread: t, NewTurn: !forbid && t.Due != nil,
			Events: []ForumEvent{flagEvent(a, t, forbid, EventLLMForbidden, EventLLMAllowed)}}, nil
	}
}

var (
	errLLMForbidden = Errorf(CodeLLMReplyForbidden, "A human forbade AI reactions on this thread: do not react here (no message, mark or attestation) until a human allows them again.")
	errThreadClosed = Errorf(CodeThreadClosed, "The thread is closed (confirmed): nothing more is written to it until a lock holder or a human reopens it (its creator's reopen is a proposal until a human confirms it).")
	errAuthority    = Errorf(CodeThreadAuthorityMissing, "Only the thread's creator, a holder of the lock right, the owner of its creator's agent or an operator may do this.")
)

func stateInvalid(from, to string) *Error {
	return Errorf(CodeStateInvalid, "The thread cannot move from %s to %s.", from, to)
}
