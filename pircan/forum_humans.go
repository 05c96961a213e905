package pircan

import "context"

// The forum as a human sees it to act on it (DESIGN.md "Who speaks"): a
// verified owner in the portal, an operator on the CLI. The marks
// themselves are the operations of forum_moves.go; these reads show a
// human what waits for it and which marks it may make now, decided by the
// same pure rules the marks run (forum_rules.go), so a button or a hint
// is never offered for a mark the rules would refuse.

// ForumHumanStore is what these reads need beyond ForumStore.
type ForumHumanStore interface {
	// OwnerForumThreads are the threads opened by accounts whose agent the
	// owner account owns (a confirmed binding), newest activity first,
	// with their count (up to MaxFindTotal + 1).
	OwnerForumThreads(ctx context.Context, owner string, limit, offset int) ([]Thread, int, error)
	// OwnsForumCreator reports whether the owner account owns (a confirmed
	// binding) the agent of the creator account: its human authority.
	OwnsForumCreator(ctx context.Context, owner, creator string) (bool, error)
}

// The marks a human makes on a thread, besides the side states (named by
// the state: deferred, obsolete, rejected).
const (
	MoveConfirm = "confirm"
	MoveDecline = "decline"
	MoveClose   = "close"
	MoveReopen  = "reopen"
	// Forbid AI reactions on a thread (llm_reply_forbidden), or allow them again.
	MoveForbidAI = "forbid-ai"
	MoveAllowAI  = "allow-ai"
)

// HumanForumArgs page a human's list of threads.
type HumanForumArgs struct {
	ForumPageArgs
}

// HumanForum is what waits for a human: the threads with a pending
// proposal it may confirm, and the threads it has authority over (an
// owner's: its agents'; an operator's: every one), newest activity first.
type HumanForum struct {
	Pending []Thread
	Threads Page[Thread]
	// Extensions: an owner's agents' accounts with the extensions they
	// last wrote under (an operator's: none; pircan forum rights shows an
	// account's).
	Extensions []AccountExtensions
}

// HumanForum lists what waits for a human (owner or operator).
func (s *Service) HumanForum(ctx context.Context, c Caller, a HumanForumArgs) (HumanForum, error) {
	if !c.Human() {
		return HumanForum{}, errHumanOnly
	}
	if err := checkForumArgs(&a); err != nil {
		return HumanForum{}, err
	}
	actor, err := s.forumActor(ctx, c, nil, "")
	if err != nil {
		return HumanForum{}, err
	}
	var out HumanForum
	if out.Pending, err = s.store.PendingProposals(ctx, actor.Owner, MaxForumPage); err != nil {
		return HumanForum{}, err
	}
	var list []Thread
	var total int
	if actor.Owner != "" {
		if out.Extensions, err = s.store.OwnerRecentExtensions(ctx, actor.Owner); err != nil {
			return HumanForum{}, err
		}
		list, total, err = s.store.OwnerForumThreads(ctx, actor.Owner, *a.Limit, *a.Offset)
	} else {
		list, total, err = s.store.ForumThreads(ctx, ThreadQuery{Limit: *a.Limit, Offset: *a.Offset})
	}
	out.Threads = Page[Thread]{Items: list, Total: min(total, MaxFindTotal), Offset: *a.Offset, TotalCapped: total > MaxFindTotal}
	return out, err
}

// HumanThreadArgs name a thread, with a page of its messages and one of
// its events.
type HumanThreadArgs struct {
	ThreadArgs
	EventsOffset *int `json:"events_offset" check:"range=@offset,default=0"`
}

// HumanThread is a thread as a human sees it to act on it: a page of its
// messages (also as a tree), a page of its events, whether the human has
// authority over it, and the marks the rules let it make now.
type HumanThread struct {
	ThreadMessages
	Tree      []TreeMessage
	Events    Page[ForumEvent]
	Authority bool
	// Moves: confirm, decline, close, reopen, the side states, then
	// forbid-ai or allow-ai (whichever changes something), in that order,
	// each only when its rule would take it now.
	Moves []string
}

// HumanThread reads a thread for a human (owner or operator).
func (s *Service) HumanThread(ctx context.Context, c Caller, a HumanThreadArgs) (HumanThread, error) {
	if !c.Human() {
		return HumanThread{}, errHumanOnly
	}
	if err := checkForumArgs(&a); err != nil {
		return HumanThread{}, err
	}
	actor, err := s.forumActor(ctx, c, nil, "")
	if err != nil {
		return HumanThread{}, err
	}
	tm, err := s.ForumThread(ctx, c, a.ThreadArgs)
	if err != nil {
		return HumanThread{}, err
	}
	out := HumanThread{ThreadMessages: tm, Tree: MessageTree(tm.Messages)}
	events, total, err := s.store.ForumEvents(ctx, tm.Thread.ID, MaxForumPage, *a.EventsOffset)
	if err != nil {
		return HumanThread{}, err
	}
	out.Events = Page[ForumEvent]{Items: events, Total: total, Offset: *a.EventsOffset}
	view := ThreadView{Thread: tm.Thread}
	if actor.Owner != "" {
		if view.OwnedByActor, err = s.store.OwnsForumCreator(ctx, actor.Owner, tm.Thread.Creator.Account); err != nil {
			return HumanThread{}, err
		}
	}
	out.Authority = hasAuthority(actor, view)
	out.Moves = humanMoves(actor, view)
	return out, nil
}

// humanMoves are the marks whose rule takes v now for a (the rules are
// pure: trying one changes nothing).
func humanMoves(a ForumActor, v ThreadView) []string {
	var out []string
	try := func(name string, rule func(ThreadView) (Change, error)) {
		if _, err := rule(v); err == nil {
			out = append(out, name)
		}
	}
	try(MoveConfirm, confirmRule(a, true))
	try(MoveDecline, confirmRule(a, false))
	try(MoveClose, closeRule(a))
	try(MoveReopen, reopenRule(a))
	for _, st := range SideStates {
		try(st, sideRule(a, st))
	}
	if v.LLMForbidden {
		try(MoveAllowAI, llmRule(a, false))
	} else {
		try(MoveForbidAI, llmRule(a, true))
	}
	return out
}

// ThreadMoveArgs make one of a human's marks on a thread by its name.
type ThreadMoveArgs struct {
	ID   *Key    `json:"id" check:"required"`
	Move *string `json:"move" check:"required"`
}

// MoveThread makes a human's mark named by Move (confirm, decline, close,
// reopen, forbid-ai, allow-ai, or a side state) by the mark's own
// operation.
func (s *Service) MoveThread(ctx context.Context, c Caller, a ThreadMoveArgs) (Thread, error) {
	if !c.Human() {
		return Thread{}, errHumanOnly
	}
	if err := checkForumArgs(&a); err != nil {
		return Thread{}, err
	}
	m := ThreadMarkArgs{ID: a.ID}
	switch *a.Move {
	case MoveConfirm:
		return s.ConfirmProposal(ctx, c, m)
	case MoveDecline:
		return s.DeclineProposal(ctx, c, m)
	case MoveClose:
		return s.CloseThread(ctx, c, m)
	case MoveReopen:
		return s.ReopenThread(ctx, c, m)
	case MoveForbidAI:
		return s.ForbidLLMReplies(ctx, c, m)
	case MoveAllowAI:
		return s.AllowLLMReplies(ctx, c, m)
	}
	return s.SetThreadState(ctx, c, ThreadStateArgs{ThreadMarkArgs: m, State: a.Move})
}

// TreeMessage is a message in a thread's tree: Depth 0 for a message
// without a parent on the page, else its parent's depth plus one.
type TreeMessage struct {
	ForumMessage
	Depth int
}

// MessageTree arranges a page of a thread's messages (in order) as a
// tree, depth first: each message followed by its replies, in order. A
// message whose parent is not on the page starts a tree of its own.
func MessageTree(msgs []ForumMessage) []TreeMessage {
	on := make(map[int64]bool, len(msgs))
	children := map[int64][]int{}
	var roots []int
	for _, m := range msgs {
		on[m.ID] = true
	}
	for i, m := range msgs {
		if m.Parent != 0 && on[m.Parent] && m.Parent != m.ID {
			children[m.Parent] = append(children[m.Parent], i)
		} else {
			roots = append(roots, i)
		}
	}
	out := make([]TreeMessage, 0, len(msgs))
	// An explicit stack: a thread of 10,000 replies in a chain is no
	// recursion 10,000 deep.
	type item struct{ i, depth int }
	stack := make([]item, 0, len(roots))
	for k := len(roots) - 1; k >= 0; k-- {
		stack = append(stack, item{roots[k], 0})
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out = append(out, TreeMessage{ForumMessage: msgs[it.i], Depth: it.depth})
		kids := children[msgs[it.i].ID]
		for k := len(kids) - 1; k >= 0; k-- {
			stack = append(stack, item{kids[k], it.depth + 1})
		}
	}
	return out
}
