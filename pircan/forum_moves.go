package pircan

import (
	"context"
	"errors"
	"strconv"
)

// The marks on a thread that are not messages (close, reopen, side
// states, pin), a human's confirmation or decline of a model's proposal,
// and the inbox. Agents (MCP, REST) and humans (portal, CLI) call the same
// operations; the rules decide by the actor.

// ThreadMarkArgs name a thread to mark, from an extension.
type ThreadMarkArgs struct {
	ID   *Key      `json:"id" check:"required"`
	From *FromArgs `json:"from"`
}

// ThreadStateArgs set a side state.
type ThreadStateArgs struct {
	ThreadMarkArgs
	State *string `json:"state" check:"required"`
}

// PinArgs pin (or with pinned false, unpin) a thread.
type PinArgs struct {
	ThreadMarkArgs
	Pinned *bool `json:"pinned"`
}

// ForumInboxArgs read the inbox: the threads where the caller is due.
type ForumInboxArgs struct {
	Since     *string `json:"since"`
	Extension *string `json:"extension"`
	Limit     *int    `json:"limit" check:"range=1-100,default=20"`
}

// ForumInboxAckArgs remember the inbox cursor.
type ForumInboxAckArgs struct {
	Cursor    *string `json:"cursor" check:"required"`
	Extension *string `json:"extension"`
}

// ForumInboxPage is a page of the inbox with the cursor to acknowledge.
type ForumInboxPage struct {
	Items  []Thread
	Total  int
	Since  string
	Cursor string
}

// InboxAck is what post_inbox_ack stored.
type InboxAck struct {
	Cursor    string
	Extension string
}

// CloseThread closes a thread (authority).
func (s *Service) CloseThread(ctx context.Context, c Caller, a ThreadMarkArgs) (Thread, error) {
	return s.mark(ctx, c, a, "", closeRule)
}

// ReopenThread reopens a thread (authority).
func (s *Service) ReopenThread(ctx context.Context, c Caller, a ThreadMarkArgs) (Thread, error) {
	return s.mark(ctx, c, a, "", reopenRule)
}

// SetThreadState sets a side state (authority): deferred, obsolete or
// rejected; any other value is state_not_settable.
func (s *Service) SetThreadState(ctx context.Context, c Caller, a ThreadStateArgs) (Thread, error) {
	if err := checkForumArgs(&a); err != nil {
		return Thread{}, err
	}
	state := *a.State
	if !isSideState(state) {
		return Thread{}, Errorf(CodeStateNotSettable, "%q is not set this way: post_threads_id_state sets deferred, obsolete or rejected; close, reopen and messages do the rest.", state)
	}
	return s.mark(ctx, c, a.ThreadMarkArgs, "", func(f ForumActor) func(ThreadView) (Change, error) {
		return sideRule(f, state)
	})
}

func isSideState(s string) bool {
	for _, x := range SideStates {
		if x == s {
			return true
		}
	}
	return false
}

// PinThread pins or unpins a thread (right pin).
func (s *Service) PinThread(ctx context.Context, c Caller, a PinArgs) (Thread, error) {
	if err := checkForumArgs(&a); err != nil {
		return Thread{}, err
	}
	pinned := a.Pinned == nil || *a.Pinned
	return s.mark(ctx, c, a.ThreadMarkArgs, RightPin, func(f ForumActor) func(ThreadView) (Change, error) {
		return pinRule(f, pinned)
	})
}

// ConfirmProposal is a human's confirmation of a thread's pending proposal.
func (s *Service) ConfirmProposal(ctx context.Context, c Caller, a ThreadMarkArgs) (Thread, error) {
	if !c.Human() {
		return Thread{}, errHumanOnly
	}
	return s.mark(ctx, c, a, "", func(f ForumActor) func(ThreadView) (Change, error) {
		return confirmRule(f, true)
	})
}

// DeclineProposal is a human's decline of a thread's pending proposal: the
// thread keeps its confirmed state.
func (s *Service) DeclineProposal(ctx context.Context, c Caller, a ThreadMarkArgs) (Thread, error) {
	if !c.Human() {
		return Thread{}, errHumanOnly
	}
	return s.mark(ctx, c, a, "", func(f ForumActor) func(ThreadView) (Change, error) {
		return confirmRule(f, false)
	})
}

// ForbidLLMReplies is a human's forbidding AI reactions on a thread it has
// authority over (llm_reply_forbidden): until it allows them again no
// model writes to the thread, and the thread is in nobody's inbox.
func (s *Service) ForbidLLMReplies(ctx context.Context, c Caller, a ThreadMarkArgs) (Thread, error) {
	return s.llmReplies(ctx, c, a, true)
}

// AllowLLMReplies is a human's allowing AI reactions on a thread again.
func (s *Service) AllowLLMReplies(ctx context.Context, c Caller, a ThreadMarkArgs) (Thread, error) {
	return s.llmReplies(ctx, c, a, false)
}

func (s *Service) llmReplies(ctx context.Context, c Caller, a ThreadMarkArgs, forbid bool) (Thread, error) {
	if !c.Human() {
		return Thread{}, errHumanOnly
	}
	return s.mark(ctx, c, a, "", func(f ForumActor) func(ThreadView) (Change, error) {
		return llmRule(f, forbid)
	})
}

// mark runs a thread rule for c; an agent needs the right need (""
// write).
func (s *Service) mark(ctx context.Context, c Caller, a ThreadMarkArgs, need string,
	rule func(ForumActor) func(ThreadView) (Change, error)) (Thread, error) {
	if err := checkForumArgs(&a); err != nil {
		return Thread{}, err
	}
	id, perr := threadRef("id", *a.ID)
	if perr != nil {
		return Thread{}, perr
	}
	var ext *string
	if a.From != nil {
		ext = a.From.Extension
	}
	if need == "" {
		need = RightWrite
	}
	actor, err := s.forumActor(ctx, c, ext, need)
	if err != nil {
		return Thread{}, err
	}
	t, err := s.store.ChangeThread(ctx, actor, id, rule(actor))
	if errors.Is(err, ErrThreadNotFound) {
		return Thread{}, errNoThread(id)
	}
	return t, err
}

// PendingProposals are the threads with a pending proposal that a human
// may confirm: an owner's, those opened by its agents' accounts; an
// operator's, all of them.
func (s *Service) PendingProposals(ctx context.Context, c Caller, a LimitArgs) (PendingResult, error) {
	if !c.Human() {
		return PendingResult{}, errHumanOnly
	}
	if err := checkForumArgs(&a); err != nil {
		return PendingResult{}, err
	}
	owner := ""
	if c.Kind == KindOwner {
		if _, err := s.forumActor(ctx, c, nil, ""); err != nil {
			return PendingResult{}, err
		}
		owner = c.Account
	}
	threads, err := s.store.PendingProposals(ctx, owner, *a.Limit)
	return PendingResult{Threads: threads}, err
}

// PendingResult are the threads with a proposal a human may confirm.
type PendingResult struct {
	Threads []Thread
}

// ForumInbox lists the threads where the caller (with extension: that
// line, or the account with none given) is due, newest turn first, after
// since (else after the acknowledged cursor), with the cursor to
// acknowledge: the newest turn listed.
func (s *Service) ForumInbox(ctx context.Context, c Caller, a ForumInboxArgs) (ForumInboxPage, error) {
	if err := checkForumArgs(&a); err != nil {
		return ForumInboxPage{}, err
	}
	if err := inboxExtension(a.Extension); err != nil {
		return ForumInboxPage{}, err
	}
	actor, err := s.forumActor(ctx, c, a.Extension, "")
	if err != nil {
		return ForumInboxPage{}, err
	}
	if actor.IsHuman() {
		return ForumInboxPage{}, Errorf(CodeForbidden, "The inbox is an agent's: humans see pending proposals instead.")
	}
	q := InboxQuery{Account: c.Account, Extension: a.Extension, Limit: *a.Limit}
	if a.Since != nil {
		n, ok := inboxCursor(*a.Since)
		if !ok {
			return ForumInboxPage{}, invalidBody("since", RuleKey, `"since" is a cursor get_inbox gave.`)
		}
		q.Since = n
	} else if q.Since, err = s.store.ForumInboxCursor(ctx, c.Account, actor.Extension); err != nil {
		return ForumInboxPage{}, err
	}
	list, total, err := s.store.ForumInbox(ctx, q)
	if err != nil {
		return ForumInboxPage{}, err
	}
	in := ForumInboxPage{Items: list, Total: total, Since: strconv.FormatInt(q.Since, 10), Cursor: strconv.FormatInt(q.Since, 10)}
	if len(list) > 0 {
		in.Cursor = strconv.FormatInt(list[0].TurnSeq, 10)
	}
	return in, nil
}

// inboxExtension checks the inbox's "extension" argument under its own
// name: forumActor would name it from.extension, a field the call has not.
func inboxExtension(ext *string) *Error {
	if ext == nil {
		return nil
	}
	return checkExtension("extension", *ext)
}

// inboxCursor reads a cursor in the one form get_inbox writes it
// (strconv.FormatInt of a turn): "+1", "01" or "-1" are none of its.
func inboxCursor(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= 0 && strconv.FormatInt(n, 10) == s
}

// AckForumInbox stores the inbox cursor of the caller's line (account and
// extension): a later get_inbox without since starts there.
func (s *Service) AckForumInbox(ctx context.Context, c Caller, a ForumInboxAckArgs) (InboxAck, error) {
	if err := checkForumArgs(&a); err != nil {
		return InboxAck{}, err
	}
	if err := inboxExtension(a.Extension); err != nil {
		return InboxAck{}, err
	}
	actor, err := s.forumActor(ctx, c, a.Extension, "")
	if err != nil {
		return InboxAck{}, err
	}
	if actor.IsHuman() {
		return InboxAck{}, Errorf(CodeForbidden, "The inbox is an agent's.")
	}
	n, ok := inboxCursor(*a.Cursor)
	if ok {
		// A cursor beyond the newest turn would hide every later turn
		// until the sequence passed it: get_inbox never gives one.
		newest, err := s.store.ForumNewestTurn(ctx)
		if err != nil {
			return InboxAck{}, err
		}
		ok = n <= newest
	}
	if !ok {
		return InboxAck{}, invalidBody("cursor", RuleKey, `"cursor" is a cursor get_inbox gave.`)
	}
	if err := s.store.AckForumInbox(ctx, actor, actor.Extension, n); err != nil {
		return InboxAck{}, err
	}
	return InboxAck{Cursor: *a.Cursor, Extension: actor.Extension}, nil
}
