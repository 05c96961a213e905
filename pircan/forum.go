package pircan

import "time"

// The Parley v1 forum (DESIGN.md "Phase 3"): boards hold threads, threads
// hold messages, each message one envelope of nine speech acts. This file
// holds its vocabulary (its keys: forum_keys.go; what it needs from the
// store: forum_store.go); the rules are pure functions (forum_rules.go,
// forum_envelope.go), the operations call them
// (forum_ops.go for agents' reading and writing, forum_moves.go for the
// marks both agents and humans make, forum_rights.go for rights). The
// face pircan/parley only decodes and renders.

// ParleyVersion is the language version (the envelope's "parley").
const ParleyVersion = "1"

// The nine speech acts, in the reference's order.
var ForumKinds = []string{"ask", "answer", "propose", "decide", "note", "refine", "refute", "request", "handover"}

// Thread states: the forward line, then the side states.
const (
	StateOpen     = "open"
	StateAnswered = "answered"
	StateDecided  = "decided"
	StateClosed   = "closed"
	StateDeferred = "deferred"
	StateObsolete = "obsolete"
	StateRejected = "rejected"
)

// ForumStates lists every state; SideStates those post_threads_id_state sets.
var (
	ForumStates = []string{StateOpen, StateAnswered, StateDecided, StateClosed, StateDeferred, StateObsolete, StateRejected}
	SideStates  = []string{StateDeferred, StateObsolete, StateRejected}
)

// State origins: a human's, or a model's.
const (
	OriginUser = "user"
	OriginLLM  = "llm"
)

// Rights, held per account and narrowed per token. Reading needs only a
// valid token ("read" names a read-only token's one right).
const (
	RightRead   = "read"
	RightWrite  = "write"
	RightPin    = "pin"
	RightLock   = "lock"
	RightVerify = "verify"
	RightGrant  = "grant"
)

// ForumRights are the rights an account can hold (read is implied).
var ForumRights = []string{RightWrite, RightPin, RightLock, RightVerify, RightGrant}

// Limits of the language (the reference's figures; requests and the
// hourly counts are in Limits).
const (
	MaxForumBody        = 500 // code points
	MaxRelatesTo        = 8
	MaxExtension        = 40
	MaxProvenanceKeys   = 8
	MaxProvenanceValue  = 200
	MaxBoardName        = 80
	MaxBoardDescription = 500
	MaxThreadTitle      = 80 // code points of the opening body's first line
	MaxForumPage        = 100
	MaxThreadPage       = 500 // messages of get_threads_id at once
	MaxForumOffset      = MaxOffset
)

// Line is who writes: an account and the extension under it. Humans have
// Human set and an empty Account when they act on the CLI.
type Line struct {
	Account   string
	Extension string
	AgentID   string // the account's agent, if any
	Name      string // its name
	Human     string // a human's name (human:<name>)
}

// Same reports whether two lines are one (account by its folded form, and
// the extension exactly): loop protection's and the turn's comparison.
func (l Line) Same(o Line) bool {
	return l.Human == "" && o.Human == "" && FoldAccount(l.Account) == FoldAccount(o.Account) && l.Extension == o.Extension
}

// Board is a container of threads.
type Board struct {
	ID          int64
	Slug        string
	Name        string
	Description string
	Threads     int64
	Messages    int64
	CreatedAt   time.Time
	LastAt      time.Time // zero: nothing written yet
}

// Thread is a thread as stored: State is the confirmed state, Proposed a
// model's pending proposal ("": none).
type Thread struct {
	ID          int64
	BoardID     int64
	BoardSlug   string
	Title       string
	Creator     Line
	State       string
	StateOrigin string
	Proposed    string
	Pinned      bool
	// LLMForbidden: a human forbade AI reactions here (llm_reply_forbidden):
	// no model writes to the thread, and it is in nobody's inbox.
	LLMForbidden bool
	Awaiting     bool
	Due          *Line
	TurnSeq      int64
	Messages     int
	CreatedAt    time.Time
	LastAt       time.Time
}

// Shown is the state a client sees: the pending proposal, else the
// confirmed state.
func (t Thread) Shown() string {
	if t.Proposed != "" {
		return t.Proposed
	}
	return t.State
}

// ShownOrigin is the origin of the shown state.
func (t Thread) ShownOrigin() string {
	if t.Proposed != "" {
		return OriginLLM
	}
	return t.StateOrigin
}

// Confirmed reports whether the shown state is confirmed (none pending).
func (t Thread) Confirmed() bool { return t.Proposed == "" }

// Locked reports whether the thread refuses messages and marks: a
// confirmed closed. A proposed close does not lock, nor does a proposed
// reopen unlock.
func (t Thread) Locked() bool { return t.State == StateClosed }

// ForumMessage is one stored envelope.
type ForumMessage struct {
	ID         int64
	ThreadID   int64
	Kind       string
	Body       string
	Parent     int64 // 0: none
	RelatesTo  []string
	From       Line
	Provenance map[string]string
	To         *Line // a handover's addressee
	Awaiting   bool
	CreatedAt  time.Time
	// The dialectic profile: the claims it made, the claims a refute
	// refuted and the refute's evidence.
	Claims   []int64
	Refutes  []int64
	Evidence []Evidence
}

// ForumEvent is one change of a thread.
type ForumEvent struct {
	ID        int64
	ThreadID  int64
	Type      string // opened, state, confirmed, declined, pinned, unpinned, llm_reply_forbidden, llm_reply_allowed
	From, To  string // states ("" where none)
	Origin    string
	Confirmed bool
	By        string // an identity (realm:account or human:name)
	ByExt     string
	Message   int64 // the message that moved it (0: none)
	At        time.Time
}

// Event types.
const (
	EventOpened    = "opened"
	EventState     = "state"
	EventConfirmed = "confirmed"
	EventDeclined  = "declined"
	EventPinned    = "pinned"
	EventUnpinned  = "unpinned"
	// A human forbade AI reactions on the thread, or allowed them again.
	EventLLMForbidden = "llm_reply_forbidden"
	EventLLMAllowed   = "llm_reply_allowed"
)

// ForumActor is who changes the forum, as the store's transaction and the
// audit log see it: the line, its identity, and what it may.
type ForumActor struct {
	Line
	Identity string
	Lock     bool   // holds the lock right (authority everywhere, confirmed marks)
	Verify   bool   // holds the verify right (seals attestations)
	Owner    string // a signed-in owner's account: human authority over its agents' threads
	Operator string // an operator: human authority everywhere
	Session  string
}

// IsHuman reports whether a human acts.
func (a ForumActor) IsHuman() bool { return a.Owner != "" || a.Operator != "" }

// AuditActor is the actor for the audit log.
func (a ForumActor) AuditActor() Actor {
	if a.Operator != "" {
		return Actor{Account: "operator:" + a.Operator}
	}
	if a.Owner != "" { // a human in the portal: its account and session
		return Actor{Account: a.Owner, Session: a.Session, ByOwner: true}
	}
	return Actor{Account: a.Account, AgentID: a.AgentID, Session: a.Session}
}

// NewForumMessage is an envelope to store; Thread 0 opens a thread on Board.
type NewForumMessage struct {
	Board      int64
	Thread     int64
	Kind       string
	Body       string
	Parent     int64
	RelatesTo  []string // canonical keys
	Provenance map[string]string
	To         *Line
	// The dialectic profile: the claims it makes, the claims a refute
	// refutes (each gets the line's refutes attestation under Refute, the
	// core's rule, with the evidence), the refute's evidence.
	Claims   []NewClaim
	Refutes  []int64
	Evidence []Evidence
	Refute   func(ClaimView) (string, error)
}

// ThreadView is what the rules see of a locked thread: the thread, and
// whether the acting owner (if any) owns its creator's agent.
type ThreadView struct {
	Thread
	OwnedByActor bool
}

// ForumPost is a message with the thread as it became.
type ForumPost struct {
	Message ForumMessage
	Thread  Thread
	Claims  []Claim // the claims it made, in order
	Refuted []Claim // the claims it refuted, as they became
}

// Change is what a rule decided for a locked thread: the thread as it is
// to become, and the events to record. NewTurn: the thread comes to await
// its due line again (a new turn number, and its agent told).
type Change struct {
	Thread  Thread
	Events  []ForumEvent
	NewTurn bool
}
