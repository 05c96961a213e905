package parley

import (
	"time"

	"github.com/creatimus/pircan/pircan"
)

// The JSON every door answers: the same value for a tool's
// structuredContent, its text content, the REST body and
// call_api_operation's result.

// Board is a board with its counters.
type Board struct {
	ID          int64  `json:"id"`
	Slug        string `json:"slug"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Threads     int64  `json:"threads"`
	Messages    int64  `json:"messages"`
	CreatedAt   string `json:"created_at"`
	LastAt      string `json:"last_at,omitempty"`
}

// Who is a line: a server-set identity and the extension under it.
type Who struct {
	Identity  string `json:"identity"`
	Extension string `json:"extension,omitempty"`
	AgentID   string `json:"agent_id,omitempty"`
	Name      string `json:"name,omitempty"`
}

// BoardRef names a thread's board.
type BoardRef struct {
	ID   int64  `json:"id"`
	Slug string `json:"slug"`
}

// Thread is a thread's head: its state as clients see it (a pending
// proposal shows with state_confirmed false), the confirmed state beside,
// whether a human forbade AI reactions, and its turn.
type Thread struct {
	ID                string   `json:"id"`
	Board             BoardRef `json:"board"`
	Title             string   `json:"title"`
	State             string   `json:"state"`
	StateOrigin       string   `json:"state_origin"`
	StateConfirmed    bool     `json:"state_confirmed"`
	ConfirmedState    string   `json:"confirmed_state"`
	Pinned            bool     `json:"pinned"`
	LLMReplyForbidden bool     `json:"llm_reply_forbidden"`
	Awaiting          bool     `json:"awaiting"`
	Due               *Who     `json:"due"`
	Creator           Who      `json:"creator"`
	Messages          int      `json:"messages"`
	CreatedAt         string   `json:"created_at"`
	LastAt            string   `json:"last_at"`
}

// MessageFields are one envelope as stored, the server's fields set.
type MessageFields struct {
	Parley     string            `json:"parley"`
	ID         string            `json:"id"`
	Thread     string            `json:"thread"`
	Kind       string            `json:"kind"`
	Body       string            `json:"body"`
	Parent     string            `json:"parent,omitempty"`
	RelatesTo  []string          `json:"relates_to"`
	From       Who               `json:"from"`
	AuthorKind string            `json:"author_kind"`
	Provenance map[string]string `json:"provenance"`
	To         *Who              `json:"to,omitempty"`
	Awaiting   bool              `json:"awaiting"`
	CreatedAt  string            `json:"created_at"`
	// The dialectic profile: the claims it made, what a refute refuted and its evidence.
	Claims   []string   `json:"claims,omitempty"`
	Refutes  []string   `json:"refutes,omitempty"`
	Evidence []Evidence `json:"evidence,omitempty"`
}

// Message is an envelope with its replies (in get_threads_id's tree).
type Message struct {
	MessageFields
	Replies []Message `json:"replies,omitempty"`
}

// messageShape is Message for its JSON Schema, which cannot recurse:
// replies are messages of the same shape.
type messageShape struct {
	MessageFields
	Replies []map[string]any `json:"replies,omitempty"`
}

// Posted is a message written and its thread as it became.
type Posted struct {
	Message MessageFields `json:"message"`
	Thread  Thread        `json:"thread"`
	Claims  []Claim       `json:"claims,omitempty"`  // the claims it made
	Refuted []Claim       `json:"refuted,omitempty"` // the claims a refute refuted, as they became
}

// ThreadTree is a thread with a page of its messages as a tree: its
// messages key holds the tree (the thread's count of messages is total).
type ThreadTree struct {
	Thread
	Tree     []Message `json:"messages"`
	Returned int       `json:"returned"`
	Total    int       `json:"total"`
	Next     string    `json:"next,omitempty"`
}

type threadTreeShape struct {
	Thread
	Tree     []messageShape `json:"messages"`
	Returned int            `json:"returned"`
	Total    int            `json:"total"`
	Next     string         `json:"next,omitempty"`
}

// List is a page of a list.
type List[T any] struct {
	Items       []T    `json:"items"`
	Returned    int    `json:"returned"`
	Total       int    `json:"total"`
	Offset      int    `json:"offset"`
	TotalCapped bool   `json:"total_capped,omitempty"`
	NextCursor  string `json:"next_cursor,omitempty"`
}

// Event is one change of a thread.
type Event struct {
	ID             int64  `json:"id"`
	Thread         string `json:"thread"`
	Type           string `json:"type"`
	FromState      string `json:"from_state,omitempty"`
	ToState        string `json:"to_state,omitempty"`
	StateOrigin    string `json:"state_origin"`
	StateConfirmed bool   `json:"state_confirmed"`
	By             Who    `json:"by"`
	Message        string `json:"message,omitempty"`
	At             string `json:"at"`
}

// Inbox is the threads where the caller is due.
type Inbox struct {
	Items    []Thread `json:"items"`
	Returned int      `json:"returned"`
	Total    int      `json:"total"`
	Since    string   `json:"since"`
	Cursor   string   `json:"cursor"`
}

// InboxAck is what post_inbox_ack stored.
type InboxAck struct {
	Cursor    string `json:"cursor"`
	Extension string `json:"extension,omitempty"`
}

func timeText(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func optTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return timeText(t)
}

func (f *Face) renderBoard(b pircan.Board) Board {
	return Board{ID: b.ID, Slug: b.Slug, Name: b.Name, Description: b.Description, Threads: b.Threads,
		Messages: b.Messages, CreatedAt: timeText(b.CreatedAt), LastAt: optTime(b.LastAt)}
}

func (f *Face) who(l pircan.Line) Who {
	return Who{Identity: f.core.LineIdentity(l), Extension: l.Extension, AgentID: l.AgentID, Name: l.Name}
}

func (f *Face) renderThread(t pircan.Thread) Thread {
	out := Thread{ID: pircan.ThreadKey(t.ID), Board: BoardRef{ID: t.BoardID, Slug: t.BoardSlug}, Title: t.Title,
		State: t.Shown(), StateOrigin: t.ShownOrigin(), StateConfirmed: t.Confirmed(), ConfirmedState: t.State,
		Pinned: t.Pinned, LLMReplyForbidden: t.LLMForbidden, Awaiting: t.Awaiting, Creator: f.who(t.Creator), Messages: t.Messages,
		CreatedAt: timeText(t.CreatedAt), LastAt: timeText(t.LastAt)}
	if t.Due != nil {
		d := f.who(*t.Due)
		out.Due = &d
	}
	return out
}

func (f *Face) renderMessage(m pircan.ForumMessage) Message {
	out := Message{MessageFields: MessageFields{Parley: pircan.ParleyVersion, ID: pircan.MessageKey(m.ID),
		Thread: pircan.ThreadKey(m.ThreadID), Kind: m.Kind, Body: m.Body, RelatesTo: m.RelatesTo, From: f.who(m.From),
		AuthorKind: pircan.OriginLLM, Provenance: m.Provenance, Awaiting: m.Awaiting, CreatedAt: timeText(m.CreatedAt)}}
	if out.RelatesTo == nil {
		out.RelatesTo = []string{}
	}
	if out.Provenance == nil {
		out.Provenance = map[string]string{}
	}
	if m.Parent != 0 {
		out.Parent = pircan.MessageKey(m.Parent)
	}
	if m.To != nil {
		to := f.who(*m.To)
		out.To = &to
	}
	for _, c := range m.Claims {
		out.Claims = append(out.Claims, pircan.ClaimKey(c))
	}
	for _, c := range m.Refutes {
		out.Refutes = append(out.Refutes, pircan.ClaimKey(c))
	}
	if len(m.Evidence) > 0 {
		out.Evidence = renderEvidence(m.Evidence)
	}
	return out
}

func (f *Face) renderPosted(p pircan.ForumPost) Posted {
	return Posted{Message: f.renderMessage(p.Message).MessageFields, Thread: f.renderThread(p.Thread),
		Claims: f.renderClaims(p.Claims), Refuted: f.renderClaims(p.Refuted)}
}

// renderTree arranges a page of messages (in order) as a tree by parent: a
// message whose parent is not on the page is a root here.
func (f *Face) renderTree(tm pircan.ThreadMessages) ThreadTree {
	children := map[int64][]int{}
	on := map[int64]bool{}
	for _, m := range tm.Messages {
		on[m.ID] = true
	}
	var roots []int
	for i, m := range tm.Messages {
		if m.Parent != 0 && on[m.Parent] {
			children[m.Parent] = append(children[m.Parent], i)
		} else {
			roots = append(roots, i)
		}
	}
	// Iteratively, deepest first: a 500-message chain must not recurse 500 deep.
	built := make([]Message, len(tm.Messages))
	for i := len(tm.Messages) - 1; i >= 0; i-- {
		m := f.renderMessage(tm.Messages[i])
		for _, c := range children[tm.Messages[i].ID] {
			m.Replies = append(m.Replies, built[c])
		}
		built[i] = m
	}
	out := ThreadTree{Thread: f.renderThread(tm.Thread), Tree: []Message{}, Returned: len(tm.Messages),
		Total: tm.Thread.Messages, Next: tm.Next}
	for _, r := range roots {
		out.Tree = append(out.Tree, built[r])
	}
	return out
}

func (f *Face) renderEvent(e pircan.ForumEvent) Event {
	out := Event{ID: e.ID, Thread: pircan.ThreadKey(e.ThreadID), Type: e.Type, FromState: e.From, ToState: e.To,
		StateOrigin: e.Origin, StateConfirmed: e.Confirmed, By: Who{Identity: e.By, Extension: e.ByExt}, At: timeText(e.At)}
	if e.Message != 0 {
		out.Message = pircan.MessageKey(e.Message)
	}
	return out
}

func listOf[T, O any](p pircan.Page[T], item func(T) O) List[O] {
	out := List[O]{Items: make([]O, 0, len(p.Items)), Returned: len(p.Items), Total: p.Total, Offset: p.Offset, TotalCapped: p.TotalCapped}
	for _, it := range p.Items {
		out.Items = append(out.Items, item(it))
	}
	return out
}

func (f *Face) renderThreads(p pircan.ForumPage) List[Thread] {
	out := listOf(p.Page, f.renderThread)
	out.NextCursor = p.NextCursor
	return out
}

func (f *Face) renderInbox(in pircan.ForumInboxPage) Inbox {
	out := Inbox{Items: make([]Thread, 0, len(in.Items)), Returned: len(in.Items), Total: in.Total, Since: in.Since, Cursor: in.Cursor}
	for _, t := range in.Items {
		out.Items = append(out.Items, f.renderThread(t))
	}
	return out
}
