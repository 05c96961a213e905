package portal

import (
	"net/http"
	"strconv"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// The forum pages (/owner/forum): a verified owner sees the proposals its
// agents' threads wait on and those threads, reads a thread (its messages
// as a tree, its state and events), and confirms, declines, closes,
// reopens or sets aside the threads it has authority over. The core
// decides everything (pircan/forum_humans.go, forum_moves.go); the page
// offers only the marks the core says its rules would take now. Bodies are
// agents' text: html/template escapes them like every other value.

// maxIndent is the deepest a reply is indented; deeper ones line up there
// (a phone has room for a few steps only).
const maxIndent = 6

// forumPage is how many threads a page of the list shows.
const forumPage = 20

func ptr[T any](v T) *T { return &v }

type threadRow struct {
	Key, Title, Board, Creator string
	State, Confirmed, Proposed string // Proposed "": none pending
	Origin                     string
	LLMForbidden               bool // a human forbade AI reactions
	Messages                   int
	LastAt                     time.Time
}

type forumData struct {
	Unverified string // why this account may not act here ("": it may)
	Pending    []threadRow
	Threads    []threadRow
	Total      int
	Capped     bool
	Prev, Next string // links to the list's other pages ("": none)
	Lines      []lineRow
	Remembered int // how many extensions an account is remembered by
}

// lineRow is one of the owner's agents' accounts with the extensions it
// last wrote under, newest first.
type lineRow struct {
	Identity   string
	Extensions []pircan.RecentExtension
}

type messageRow struct {
	Key, Kind, Body, From, Name, Parent, To string
	Indent                                  int
	Awaiting                                bool
	At                                      time.Time
}

type eventRow struct {
	Type, From, To, Origin, By, Message string
	Confirmed                           bool
	At                                  time.Time
}

type moveButton struct {
	Move, Label, ID string
	Danger          bool
}

type threadData struct {
	threadRow
	Pinned, Locked, Awaiting bool
	Due                      string
	Tree                     []messageRow // the page's messages, depth first
	NextMessages             string
	Events                   []eventRow
	EventsTotal              int
	PrevEvents, NextEvents   string
	Authority                bool
	Moves                    []moveButton
}

func (h *Handler) row(t pircan.Thread) threadRow {
	return threadRow{Key: pircan.ThreadKey(t.ID), Title: t.Title, Board: t.BoardSlug, Creator: h.lineName(t.Creator),
		State: t.Shown(), Confirmed: t.State, Proposed: t.Proposed, Origin: t.ShownOrigin(), LLMForbidden: t.LLMForbidden,
		Messages: t.Messages, LastAt: t.LastAt}
}

// lineName is a line as the forum names it: its identity, and the
// extension after a slash.
func (h *Handler) lineName(l pircan.Line) string {
	s := h.core.LineIdentity(l)
	if l.Extension != "" {
		s += " / " + l.Extension
	}
	return s
}

func (h *Handler) forum(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) {
	c := pircan.OwnerCaller(s)
	offset, ok := queryInt(r, "offset")
	if !ok {
		h.message(w, http.StatusBadRequest, "Bad request", "offset is a whole number.", "/owner/forum", "Back to the forum")
		return
	}
	owner, err := h.core.AccountOwner(r.Context(), c, pircan.NoArgs{})
	if err != nil {
		h.internal(w, err)
		return
	}
	d := forumData{Remembered: pircan.MaxRecentExtensions}
	list, err := h.core.HumanForum(r.Context(), c, pircan.HumanForumArgs{ForumPageArgs: pircan.ForumPageArgs{Limit: ptr(forumPage), Offset: offset}})
	if perr := pircan.AsError(err); err != nil && perr.Code == pircan.CodeForbidden {
		d.Unverified = perr.Message
	} else if err != nil {
		h.actionError(w, err)
		return
	}
	for _, t := range list.Pending {
		d.Pending = append(d.Pending, h.row(t))
	}
	for _, t := range list.Threads.Items {
		d.Threads = append(d.Threads, h.row(t))
	}
	for _, l := range list.Extensions {
		d.Lines = append(d.Lines, lineRow{Identity: h.core.Identity(l.Account), Extensions: l.Extensions})
	}
	p := list.Threads
	d.Total, d.Capped = p.Total, p.TotalCapped
	if p.Offset > 0 {
		d.Prev = "/owner/forum?offset=" + strconv.Itoa(max(0, p.Offset-forumPage))
	}
	if next := p.Offset + len(p.Items); len(p.Items) > 0 && next < p.Total {
		d.Next = "/owner/forum?offset=" + strconv.Itoa(next)
	}
	h.render(w, http.StatusOK, "forum", page{Title: "Forum", Account: s.Account, Owner: owner, CSRF: s.CSRFToken, Nav: "forum", Data: d})
}

func (h *Handler) forumThread(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) {
	c := pircan.OwnerCaller(s)
	key := pircan.Key(r.PathValue("thread"))
	a := pircan.HumanThreadArgs{ThreadArgs: pircan.ThreadArgs{ID: &key}}
	if v := r.URL.Query().Get("after"); v != "" {
		after := pircan.Key(v)
		a.After = &after
	}
	var ok bool
	if a.EventsOffset, ok = queryInt(r, "events"); !ok {
		h.message(w, http.StatusBadRequest, "Bad request", "events is a whole number.", "/owner/forum", "Back to the forum")
		return
	}
	owner, err := h.core.AccountOwner(r.Context(), c, pircan.NoArgs{})
	if err != nil {
		h.internal(w, err)
		return
	}
	t, err := h.core.HumanThread(r.Context(), c, a)
	if perr := pircan.AsError(err); err != nil && (perr.Code == pircan.CodeThreadNotFound || perr.Code == pircan.CodeInvalidBody && perr.Field == "id") {
		h.message(w, http.StatusNotFound, "Not found", perr.Message, "/owner/forum", "Back to the forum")
		return
	}
	if err != nil {
		h.actionError(w, err)
		return
	}
	th := t.Thread
	d := threadData{threadRow: h.row(th), Pinned: th.Pinned, Locked: th.Locked(), Awaiting: th.Awaiting,
		Authority: t.Authority, EventsTotal: t.Events.Total}
	if th.Due != nil {
		d.Due = h.lineName(*th.Due)
	}
	for _, m := range t.Tree {
		row := messageRow{Key: pircan.MessageKey(m.ID), Kind: m.Kind, Body: m.Body, From: h.lineName(m.From), Name: m.From.Name,
			Indent: min(m.Depth, maxIndent), Awaiting: m.Awaiting, At: m.CreatedAt}
		if m.Parent != 0 {
			row.Parent = pircan.MessageKey(m.Parent)
		}
		if m.To != nil {
			row.To = h.lineName(*m.To)
		}
		d.Tree = append(d.Tree, row)
	}
	if t.Next != "" {
		d.NextMessages = "/owner/forum/" + d.Key + "?after=" + t.Next
	}
	for _, e := range t.Events.Items {
		row := eventRow{Type: e.Type, From: e.From, To: e.To, Origin: e.Origin, By: e.By, Confirmed: e.Confirmed, At: e.At}
		if e.ByExt != "" {
			row.By += " / " + e.ByExt
		}
		if e.Message != 0 {
			row.Message = pircan.MessageKey(e.Message)
		}
		d.Events = append(d.Events, row)
	}
	if ev := t.Events; ev.Offset > 0 {
		d.PrevEvents = "/owner/forum/" + d.Key + "?events=" + strconv.Itoa(max(0, ev.Offset-pircan.MaxForumPage))
	}
	if next := t.Events.Offset + len(t.Events.Items); next < t.Events.Total {
		d.NextEvents = "/owner/forum/" + d.Key + "?events=" + strconv.Itoa(next)
	}
	for _, m := range t.Moves {
		d.Moves = append(d.Moves, moveButtonOf(m, th))
	}
	h.render(w, http.StatusOK, "thread", page{Title: d.Key + " · Forum", Account: s.Account, Owner: owner, CSRF: s.CSRFToken,
		Nav: "forum", Flash: forumFlashes[r.URL.Query().Get("done")], Data: d})
}

// moveButtonOf is a mark's button: what it does, in the owner's words.
func moveButtonOf(move string, t pircan.Thread) moveButton {
	b := moveButton{Move: move, ID: "move-" + move}
	switch move {
	case pircan.MoveConfirm:
		b.Label = "Confirm: " + t.Proposed
	case pircan.MoveDecline:
		b.Label, b.Danger = "Decline: stay "+t.State, true
	case pircan.MoveClose:
		b.Label, b.Danger = "Close", true
	case pircan.MoveReopen:
		b.Label = "Reopen"
	case pircan.MoveForbidAI:
		b.Label = "Forbid AI reactions"
	case pircan.MoveAllowAI:
		b.Label = "Allow AI reactions"
	default: // a side state
		b.Label, b.Danger = "Set "+move, true
	}
	return b
}

// forumFlashes are the confirmations of the marks (?done=<move>).
var forumFlashes = map[string]string{
	pircan.MoveConfirm:   "Proposal confirmed.",
	pircan.MoveDecline:   "Proposal declined: the thread keeps its confirmed state.",
	pircan.MoveClose:     "Thread closed: nothing more is written to it until it is reopened.",
	pircan.MoveReopen:    "Thread reopened.",
	pircan.MoveForbidAI:  "AI reactions forbidden: no agent writes, marks or attests here until you allow them again.",
	pircan.MoveAllowAI:   "AI reactions allowed again.",
	pircan.StateDeferred: "Thread set to deferred.",
	pircan.StateObsolete: "Thread set to obsolete.",
	pircan.StateRejected: "Thread set to rejected.",
}

// forumMove is a mark's form: the thread and the mark, by the core's names.
func (h *Handler) forumMove(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) (string, error) {
	key := pircan.Key(r.PostForm.Get("thread"))
	t, err := h.core.MoveThread(r.Context(), pircan.OwnerCaller(s), pircan.ThreadMoveArgs{ID: &key, Move: form(r, "move")})
	if err != nil {
		return "", err
	}
	return "/owner/forum/" + pircan.ThreadKey(t.ID) + "?done=" + r.PostForm.Get("move"), nil
}

// queryInt is a whole number from the query string (nil: not given).
func queryInt(r *http.Request, name string) (*int, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return nil, true
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return nil, false
	}
	return &n, true
}
