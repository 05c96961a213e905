package pircan

import (
	"context"
	"time"
)

// What the forum needs from the store: its queries, the store's contract
// and the facts the store reports from inside its transactions.

// ThreadQuery lists threads: of a board (waiting first) or across boards.
type ThreadQuery struct {
	Board    int64  // 0: every board
	State    string // shown state ("": any)
	Awaiting *bool
	Author   string // creator's account, folded ("": any)
	// LLMForbidden: threads where a human forbade AI reactions (true) or
	// not (false); nil: either.
	LLMForbidden *bool
	Limit        int
	Offset       int
	After        *ThreadCursor // keyset: the rows after this one (board lists)
}

// ThreadCursor is the sort key of a board's thread list.
type ThreadCursor struct {
	Pinned, Awaiting bool
	LastAt           time.Time
	ID               int64
}

// InboxQuery lists the threads where a line is due.
type InboxQuery struct {
	Account   string
	Extension *string // nil: every extension
	Since     int64
	Limit     int
}

// ForumStore keeps the forum. Every change writes an audit row (ids and
// sizes, never bodies) in its transaction.
type ForumStore interface {
	// The dialectic profile, applications and feature requests.
	ClaimStore
	AccessStore
	FeatureStore
	ExtensionStore // remembered extensions (forum_extensions.go)

	ForumBoards(ctx context.Context, limit, offset int) ([]Board, int, error)
	// ForumBoard is a board by id or (id 0) slug: ErrNotFound.
	ForumBoard(ctx context.Context, id int64, slug string) (Board, error)
	// AddForumBoard adds a board: ErrConflict for a slug in use,
	// ErrRateLimited over l.ForumBoardsDay boards of an account in a day
	// (a human on the CLI is not counted).
	AddForumBoard(ctx context.Context, actor ForumActor, b Board, l Limits) (Board, error)
	ForumThreads(ctx context.Context, q ThreadQuery) ([]Thread, int, error)
	ForumThread(ctx context.Context, id int64) (Thread, error)
	// ForumMessages are a thread's messages after the message after, in
	// order, at most limit.
	ForumMessages(ctx context.Context, thread, after int64, limit int) ([]ForumMessage, error)
	ForumEvents(ctx context.Context, thread int64, limit, offset int) ([]ForumEvent, int, error)
	// PostForumMessage stores an envelope in one transaction: the actor's
	// hourly counts (ErrRateLimited: ErrForumThreadsHour or
	// ErrForumMessagesHour), the board (ErrBoardNotFound) or the thread
	// locked (ErrThreadNotFound), the parent in that thread
	// (ErrParentNotFound), the related keys (ErrRelatedNotFound), then
	// rule on the locked thread and its parent's author, whose error
	// refuses it all. The actor's extension (if any) is remembered with
	// the message, the account's beyond MaxRecentExtensions forgotten.
	PostForumMessage(ctx context.Context, actor ForumActor, m NewForumMessage, l Limits,
		rule func(t ThreadView, parent *Line) (Change, error)) (ForumPost, error)
	// ChangeThread locks a thread (ErrThreadNotFound), applies rule and
	// stores the change with its events and an audit row.
	ChangeThread(ctx context.Context, actor ForumActor, id int64, rule func(t ThreadView) (Change, error)) (Thread, error)
	// ForumInbox lists the threads where q's line is due after Since,
	// newest turn first, with their count.
	ForumInbox(ctx context.Context, q InboxQuery) ([]Thread, int, error)
	// ForumInboxCursor is the acknowledged cursor of a line (0: none).
	ForumInboxCursor(ctx context.Context, account, ext string) (int64, error)
	// ForumNewestTurn is the newest turn handed out (0: none yet): no
	// inbox cursor get_inbox gives is beyond it.
	ForumNewestTurn(ctx context.Context) (int64, error)
	AckForumInbox(ctx context.Context, actor ForumActor, ext string, cursor int64) error
	// ForumAccountRights are the rights an operator set for an account
	// (nil: none set, the default applies).
	ForumAccountRights(ctx context.Context, account string) ([]string, error)
	SetForumAccountRights(ctx context.Context, operator, account string, rights []string) error
	// PendingProposals are the threads with a pending proposal whose
	// creator's agent the owner account owns (confirmed binding).
	PendingProposals(ctx context.Context, owner string, limit int) ([]Thread, error)
	ForumHumanStore // what humans' pages read (forum_humans.go)
}
