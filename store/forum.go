package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// The forum's store (pircan.ForumStore): it executes, the core decides.
// A message or a mark runs in one transaction that locks the writing line
// (hourly counts) and the thread's row, then calls the core's rule on what
// it read, and writes what the rule returned, the events and the audit row.

// toBoard is a board with its counters (lastAt at the epoch: no message yet).
func toBoard(b db.ForumBoard, messages int64, lastAt time.Time) pircan.Board {
	out := pircan.Board{ID: b.ID, Slug: b.Slug, Name: b.Name, Description: b.Description, Threads: b.Threads,
		Messages: messages, CreatedAt: b.CreatedAt}
	if lastAt.Unix() > 0 {
		out.LastAt = lastAt
	}
	return out
}

// boardShards is how many rows count a board's messages (schema 00031).
const boardShards = 16

func toThread(t db.ForumThread, slug string) pircan.Thread {
	out := pircan.Thread{ID: t.ID, BoardID: t.BoardID, BoardSlug: slug, Title: t.Title,
		Creator: pircan.Line{Account: t.CreatorAccount, Extension: t.CreatorExt}, State: t.State,
		StateOrigin: t.StateOrigin, Pinned: t.Pinned, LLMForbidden: t.LlmReplyForbidden, Awaiting: t.Awaiting, TurnSeq: t.TurnSeq,
		Messages: int(t.Messages), CreatedAt: t.CreatedAt, LastAt: t.LastAt}
	if t.ProposedState != nil {
		out.Proposed = *t.ProposedState
	}
	if t.DueAccount != nil {
		out.Due = &pircan.Line{Account: *t.DueAccount, Extension: deref(t.DueExt)}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func optText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toForumMessage(m db.ForumMessage, agentName *string) pircan.ForumMessage {
	out := pircan.ForumMessage{ID: m.ID, ThreadID: m.ThreadID, Kind: m.Kind, Body: m.Body, RelatesTo: m.RelatesTo,
		From:     pircan.Line{Account: m.AuthorAccount, Extension: m.AuthorExt, AgentID: deref(m.AuthorAgent), Name: deref(agentName)},
		Awaiting: m.Awaiting, CreatedAt: m.CreatedAt, Provenance: map[string]string{}}
	if m.ParentID.Valid {
		out.Parent = m.ParentID.Int64
	}
	_ = json.Unmarshal(m.Provenance, &out.Provenance)
	if m.ToAccount != nil {
		out.To = &pircan.Line{Account: *m.ToAccount, Extension: deref(m.ToExt)}
	}
	return out
}

func toForumEvent(e db.ForumEvent) pircan.ForumEvent {
	out := pircan.ForumEvent{ID: e.ID, ThreadID: e.ThreadID, Type: e.Type, From: deref(e.FromState), To: deref(e.ToState),
		Origin: e.Origin, Confirmed: e.Confirmed, By: e.ByIdentity, ByExt: e.ByExt, At: e.At}
	if e.MessageID.Valid {
		out.Message = e.MessageID.Int64
	}
	return out
}

// ForumBoards implements pircan.ForumStore.
func (s *Store) ForumBoards(ctx context.Context, limit, offset int) ([]pircan.Board, int, error) {
	var out []pircan.Board
	total := 0
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.ListForumBoards(ctx, db.ListForumBoardsParams{Lim: int32(limit), Off: int32(offset)})
		if err != nil {
			return err
		}
		for _, r := range rows {
			out = append(out, toBoard(r.ForumBoard, r.Messages, r.LastAt))
			total = int(r.Total)
		}
		if len(rows) == 0 {
			n, err := q.CountForumBoards(ctx)
			total = int(n)
			return err
		}
		return nil
	})
	return out, total, err
}

// ForumBoard implements pircan.ForumStore.
func (s *Store) ForumBoard(ctx context.Context, id int64, slug string) (pircan.Board, error) {
	var out pircan.Board
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		var b db.ForumBoard
		var err error
		if id != 0 {
			b, err = q.ForumBoardByID(ctx, id)
		} else {
			b, err = q.ForumBoardBySlug(ctx, slug)
		}
		if err != nil {
			return notFound(err)
		}
		c, err := q.ForumBoardCounts(ctx, b.ID)
		out = toBoard(b, c.Messages, c.LastAt)
		return err
	})
	return out, err
}

// AddForumBoard implements pircan.ForumStore.
func (s *Store) AddForumBoard(ctx context.Context, actor pircan.ForumActor, b pircan.Board, l pircan.Limits) (pircan.Board, error) {
	var out pircan.Board
	by := ""
	if !actor.IsHuman() {
		by = foldAccount(actor.Account)
	}
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		if by != "" {
			if err := q.LockForumLine(ctx, by); err != nil {
				return err
			}
			if c, err := q.CountForumBoardsLastDay(ctx, db.CountForumBoardsLastDayParams{Span: pircan.DayWindow, CreatedBy: by}); err != nil || c.N >= int64(l.ForumBoardsDay) {
				return orErr(err, countLimited(pircan.ErrRateLimited, c.WaitUs))
			}
		}
		r, err := q.InsertForumBoard(ctx, db.InsertForumBoardParams{Slug: b.Slug, Name: b.Name, Description: b.Description, CreatedBy: by})
		if isUniqueViolation(err) {
			return pircan.ErrConflict
		}
		if err != nil {
			return err
		}
		out = toBoard(r, 0, time.Time{})
		return audit(ctx, q, actor.AuditActor(), "forum.board_added", out.Slug, humanDetails(actor, map[string]any{"board": out.ID,
			"name_size": len(b.Name), "description_size": len(b.Description)}))
	})
	return out, err
}

// humanDetails names the human in an audit row's details.
func humanDetails(actor pircan.ForumActor, d map[string]any) map[string]any {
	if actor.IsHuman() {
		d["human"] = actor.Identity
	}
	if actor.Extension != "" {
		d["extension"] = actor.Extension
	}
	return d
}

// ForumThreads implements pircan.ForumStore: a board's list (the total is
// the board's counter, exact), or a filtered one (counted up to
// MaxFindTotal + 1).
func (s *Store) ForumThreads(ctx context.Context, fq pircan.ThreadQuery) ([]pircan.Thread, int, error) {
	var out []pircan.Thread
	total := 0
	if fq.Board != 0 && fq.State == "" && fq.Awaiting == nil && fq.Author == "" && fq.LLMForbidden == nil {
		err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
			b, err := q.ForumBoardByID(ctx, fq.Board)
			if err != nil {
				return notFound(err)
			}
			total = int(b.Threads)
			if c := fq.After; c != nil {
				rows, err := q.BoardThreadsAfter(ctx, db.BoardThreadsAfterParams{BoardID: fq.Board, Pinned: c.Pinned,
					Awaiting: c.Awaiting, LastAt: c.LastAt, AfterID: c.ID, Lim: int32(fq.Limit)})
				for _, r := range rows {
					out = append(out, toThread(r.ForumThread, r.Slug))
				}
				return err
			}
			rows, err := q.BoardThreads(ctx, db.BoardThreadsParams{BoardID: fq.Board, Lim: int32(fq.Limit), Off: int32(fq.Offset)})
			for _, r := range rows {
				out = append(out, toThread(r.ForumThread, r.Slug))
			}
			return err
		})
		return out, total, err
	}
	p := db.ListForumThreadsParams{Lim: int32(fq.Limit), Off: int32(fq.Offset), State: optText(fq.State),
		CreatorFolded: optText(fq.Author)}
	if fq.Awaiting != nil {
		p.Awaiting = pgtype.Bool{Bool: *fq.Awaiting, Valid: true}
	}
	if fq.LLMForbidden != nil {
		p.LlmReplyForbidden = pgtype.Bool{Bool: *fq.LLMForbidden, Valid: true}
	}
	if fq.Board != 0 {
		p.BoardID = pgtype.Int8{Int64: fq.Board, Valid: true}
	}
	err := s.readPlanned(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.ListForumThreads(ctx, p)
		if err != nil {
			return err
		}
		for _, r := range rows {
			out = append(out, toThread(r.ForumThread, r.Slug))
		}
		n, err := q.CountForumThreads(ctx, db.CountForumThreadsParams{BoardID: p.BoardID, State: p.State,
			Awaiting: p.Awaiting, CreatorFolded: p.CreatorFolded, LlmReplyForbidden: p.LlmReplyForbidden, Cap: pircan.MaxFindTotal + 1})
		total = int(n)
		return err
	})
	return out, total, err
}

// ForumThread implements pircan.ForumStore.
func (s *Store) ForumThread(ctx context.Context, id int64) (pircan.Thread, error) {
	var out pircan.Thread
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		r, err := q.ForumThread(ctx, id)
		out = toThread(r.ForumThread, r.Slug)
		return notFound(err)
	})
	return out, err
}

// ForumMessages implements pircan.ForumStore.
func (s *Store) ForumMessages(ctx context.Context, thread, after int64, limit int) ([]pircan.ForumMessage, error) {
	var out []pircan.ForumMessage
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.ListForumMessages(ctx, db.ListForumMessagesParams{ThreadID: thread, After: after, Lim: int32(limit)})
		for _, r := range rows {
			out = append(out, toForumMessage(db.ForumMessage{ID: r.ID, ThreadID: r.ThreadID, Kind: r.Kind, Body: r.Body,
				ParentID: r.ParentID, RelatesTo: r.RelatesTo, AuthorAccount: r.AuthorAccount, AuthorExt: r.AuthorExt,
				AuthorAgent: r.AuthorAgent, Provenance: r.Provenance, ToAccount: r.ToAccount, ToExt: r.ToExt,
				Awaiting: r.Awaiting, CreatedAt: r.CreatedAt}, r.AgentName))
		}
		if err != nil {
			return err
		}
		return messagesProfile(ctx, q, out)
	})
	return out, err
}

// ForumEvents implements pircan.ForumStore.
func (s *Store) ForumEvents(ctx context.Context, thread int64, limit, offset int) ([]pircan.ForumEvent, int, error) {
	var out []pircan.ForumEvent
	total := 0
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.ListForumEvents(ctx, db.ListForumEventsParams{ThreadID: thread, Lim: int32(limit), Off: int32(offset)})
		for _, r := range rows {
			out = append(out, toForumEvent(db.ForumEvent{ID: r.ID, ThreadID: r.ThreadID, Type: r.Type, FromState: r.FromState,
				ToState: r.ToState, Origin: r.Origin, Confirmed: r.Confirmed, ByIdentity: r.ByIdentity, ByExt: r.ByExt,
				MessageID: r.MessageID, At: r.At}))
			total = int(r.Total)
		}
		return err
	})
	return out, total, err
}

// PostForumMessage implements pircan.ForumStore. It is a pipelined
// transaction (pipe.go) of two round trips for a message to a thread: its
// reads (the writing line's lock and hourly count, the thread's row locked,
// the parent, the keys of relates_to, the message's id), then, once the
// checks and the core's rule have decided from what was read, every write
// with the commit. A new thread adds one between them: the thread's row,
// written and read back for the rule. Claims and refutes (the dialectic
// profile) read and decide as they go, a statement a round trip.
func (s *Store) PostForumMessage(ctx context.Context, actor pircan.ForumActor, m pircan.NewForumMessage, l pircan.Limits,
	rule func(pircan.ThreadView, *pircan.Line) (pircan.Change, error)) (pircan.ForumPost, error) {
	me := foldAccount(actor.Account)
	newThread := m.Thread == 0
	threads, msgs, claims, relErr := relatedIDs(m.RelatesTo)
	var (
		msgCount                       db.CountForumMessagesLastHourRow
		threadCount                    db.CountForumThreadsLastHourRow
		boardErr, threadErr, parentErr error
		thread                         db.LockForumThreadRow
		parent                         db.ForumMessageAuthorRow
		related                        [3]int64
		msgID                          int64
		createdAt                      time.Time
		turn                           db.UpdateForumThreadTurnRow
		change                         pircan.Change
		made, refuted                  []pircan.Claim
	)
	err := s.withPipe(ctx, func(ctx context.Context, p *pipe) error {
		p.queue(func(q *db.Queries) error { return q.LockForumLine(ctx, me) })
		p.queue(func(q *db.Queries) (err error) {
			msgCount, err = q.CountForumMessagesLastHour(ctx, db.CountForumMessagesLastHourParams{Span: pircan.HourWindow, AuthorFolded: me})
			return err
		})
		if newThread {
			p.queue(func(q *db.Queries) error { _, boardErr = q.LockForumBoard(ctx, m.Board); return nil })
			p.queue(func(q *db.Queries) (err error) {
				threadCount, err = q.CountForumThreadsLastHour(ctx, db.CountForumThreadsLastHourParams{Span: pircan.HourWindow, CreatorFolded: me})
				return err
			})
			p.queue(func(q *db.Queries) (err error) { m.Thread, err = q.NextForumThreadID(ctx); return err })
		} else {
			p.queue(func(q *db.Queries) error { thread, threadErr = q.LockForumThread(ctx, m.Thread); return nil })
			if m.Parent != 0 {
				p.queue(func(q *db.Queries) error {
					parent, parentErr = q.ForumMessageAuthor(ctx, db.ForumMessageAuthorParams{ID: m.Parent, ThreadID: m.Thread})
					return nil
				})
			}
		}
		if relErr == nil {
			queueRelatedCounts(ctx, p, threads, msgs, claims, &related)
		}
		p.queue(func(q *db.Queries) (err error) { msgID, err = q.NextForumMessageID(ctx); return err })
		if err := p.send(ctx); err != nil {
			return err
		}

		if msgCount.N >= int64(l.ForumMessagesHour) {
			return countLimited(pircan.ErrForumMessagesHour, msgCount.WaitUs)
		}
		if newThread {
			if err := notFoundAs(boardErr, pircan.ErrBoardNotFound); err != nil {
				return err
			}
			if threadCount.N >= int64(l.ForumThreadsHour) {
				return countLimited(pircan.ErrForumThreadsHour, threadCount.WaitUs)
			}
			if m.Parent != 0 { // a new thread has no message to answer
				return pircan.ErrParentNotFound
			}
			p.queue(func(q *db.Queries) error {
				return q.InsertForumThread(ctx, db.InsertForumThreadParams{ID: m.Thread, BoardID: m.Board,
					CreatorAccount: actor.Account, CreatorFolded: me, CreatorExt: actor.Extension, Title: pircan.ThreadTitle(m.Body)})
			})
			p.queue(func(q *db.Queries) error { thread, threadErr = q.LockForumThread(ctx, m.Thread); return nil })
			if err := p.send(ctx); err != nil {
				return err
			}
		}
		if err := notFoundAs(threadErr, pircan.ErrThreadNotFound); err != nil {
			return err
		}
		if m.Board != 0 && thread.ForumThread.BoardID != m.Board {
			return pircan.ErrThreadNotFound
		}
		view := pircan.ThreadView{Thread: toThread(thread.ForumThread, thread.Slug)}
		var author *pircan.Line
		if m.Parent != 0 {
			if err := notFoundAs(parentErr, pircan.ErrParentNotFound); err != nil {
				return err
			}
			author = &pircan.Line{Account: parent.AuthorAccount, Extension: parent.AuthorExt}
		}
		if relErr != nil || related != [3]int64{int64(len(threads)), int64(len(msgs)), int64(len(claims))} {
			return pircan.ErrRelatedNotFound
		}
		var err error
		if change, err = rule(view, author); err != nil {
			return err
		}
		if newThread {
			change.Events = append([]pircan.ForumEvent{{Type: pircan.EventOpened, To: pircan.StateOpen,
				Origin: pircan.OriginLLM, Confirmed: true, By: actor.Identity, ByExt: actor.Extension}}, change.Events...)
		}

		prov, err := json.Marshal(m.Provenance)
		if err != nil {
			return err
		}
		mp := db.InsertForumMessageParams{ID: msgID, ThreadID: m.Thread, Kind: m.Kind, Body: m.Body, RelatesTo: m.RelatesTo,
			AuthorAccount: actor.Account, AuthorFolded: me, AuthorExt: actor.Extension, AuthorAgent: optText(actor.AgentID),
			Provenance: prov, Awaiting: change.Thread.Awaiting, Keep: pircan.MaxRecentExtensions}
		if m.Parent != 0 {
			mp.ParentID = pgtype.Int8{Int64: m.Parent, Valid: true}
		}
		if m.To != nil {
			mp.ToAccount, mp.ToExt = &m.To.Account, &m.To.Extension
		}
		p.queue(func(q *db.Queries) (err error) { createdAt, err = q.InsertForumMessage(ctx, mp); return err })
		if len(m.Claims) > 0 || len(m.Refutes) > 0 {
			if err := p.run(ctx, func(q *db.Queries) (err error) {
				made, refuted, err = postClaims(ctx, q, actor, m, m.Thread, msgID)
				return err
			}); err != nil {
				return err
			}
		}
		t := change.Thread
		tp := db.UpdateForumThreadTurnParams{ID: t.ID, State: t.State, StateOrigin: t.StateOrigin,
			ProposedState: optText(t.Proposed), Awaiting: t.Awaiting}
		if t.Due != nil {
			folded := foldAccount(t.Due.Account)
			tp.DueAccount, tp.DueFolded, tp.DueExt = &t.Due.Account, &folded, &t.Due.Extension
		}
		if t.Due != nil { // the turns due to one account are drawn one transaction at a time
			p.queue(func(q *db.Queries) error { return q.LockForumTurn(ctx, *tp.DueFolded) })
		}
		p.queue(func(q *db.Queries) (err error) { turn, err = q.UpdateForumThreadTurn(ctx, tp); return err })
		if t.Due != nil { // the thread came to await a line: tell its agent (content-free)
			p.queue(func(q *db.Queries) error {
				return q.NotifyForumDue(ctx, db.NotifyForumDueParams{Type: pircan.NotifyForum, AccountFolded: *tp.DueFolded})
			})
		}
		if newThread {
			p.queue(func(q *db.Queries) error { return q.ForumBoardThreadAdded(ctx, t.BoardID) })
		}
		p.queue(func(q *db.Queries) error {
			return q.ForumBoardMessageCounted(ctx, db.ForumBoardMessageCountedParams{BoardID: t.BoardID,
				Shard: int16(t.ID % boardShards)})
		})
		for i := range change.Events {
			e := &change.Events[i]
			e.ThreadID = t.ID
			if e.Type == pircan.EventState || e.Type == pircan.EventOpened {
				e.Message = msgID
			}
			p.queue(func(q *db.Queries) error { return insertEvent(ctx, q, *e) })
		}
		details := map[string]any{"thread": pircan.ThreadKey(t.ID), "kind": m.Kind, "size": len(m.Body),
			"relates_to": len(m.RelatesTo)}
		if newThread {
			details["opened"] = true
		}
		if len(made) > 0 || len(refuted) > 0 {
			details["claims"], details["refutes"] = len(made), len(refuted)
		}
		if m.Parent != 0 {
			details["parent"] = pircan.MessageKey(m.Parent)
		}
		e, err := auditEntry(actor.AuditActor(), "forum.message", pircan.MessageKey(msgID), humanDetails(actor, details))
		if err != nil {
			return err
		}
		p.queue(func(q *db.Queries) error { return q.AppendAudit(ctx, e) })
		return nil // withPipe sends what is queued with the commit
	})
	if err != nil {
		return pircan.ForumPost{}, err
	}
	t := change.Thread
	t.TurnSeq, t.Messages, t.LastAt = turn.TurnSeq, int(turn.Messages), turn.LastAt
	msg := pircan.ForumMessage{ID: msgID, ThreadID: t.ID, Kind: m.Kind, Body: m.Body, Parent: m.Parent,
		RelatesTo: m.RelatesTo, From: actor.Line, Provenance: m.Provenance, To: m.To, Awaiting: t.Awaiting,
		CreatedAt: createdAt, Refutes: m.Refutes}
	for _, c := range made {
		msg.Claims = append(msg.Claims, c.ID)
	}
	if len(m.Refutes) > 0 {
		msg.Evidence = m.Evidence
	}
	return pircan.ForumPost{Message: msg, Thread: t, Claims: made, Refuted: refuted}, nil
}

// notFoundAs maps no rows to the forum's own not-found error.
func notFoundAs(err, as error) error {
	if errors.Is(notFound(err), pircan.ErrNotFound) {
		return as
	}
	return err
}

// relatedIDs are the numbers of relates_to's keys, by kind, each once
// (ErrRelatedNotFound: a key of no kind).
func relatedIDs(keys []string) (threads, msgs, claims []int64, err error) {
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k, pircan.ClaimPrefix):
			claims = appendOnce(claims, keyNumber(k, pircan.ClaimPrefix))
		case strings.HasPrefix(k, pircan.ThreadPrefix):
			threads = appendOnce(threads, keyNumber(k, pircan.ThreadPrefix))
		case strings.HasPrefix(k, pircan.MessagePrefix):
			msgs = appendOnce(msgs, keyNumber(k, pircan.MessagePrefix))
		default:
			return nil, nil, nil, pircan.ErrRelatedNotFound
		}
	}
	return threads, msgs, claims, nil
}

// queueRelatedCounts counts which of relates_to's threads, messages and
// claims exist, a count each (into found, in that order); every key
// exists when found holds the lists' lengths.
func queueRelatedCounts(ctx context.Context, p *pipe, threads, msgs, claims []int64, found *[3]int64) {
	if len(threads) > 0 {
		p.queue(func(q *db.Queries) (err error) { found[0], err = q.CountForumThreadsIn(ctx, threads); return err })
	}
	if len(msgs) > 0 {
		p.queue(func(q *db.Queries) (err error) { found[1], err = q.CountForumMessagesIn(ctx, msgs); return err })
	}
	if len(claims) > 0 {
		p.queue(func(q *db.Queries) (err error) { found[2], err = q.CountForumClaimsIn(ctx, claims); return err })
	}
}

func keyNumber(k, prefix string) int64 {
	var n int64
	for _, r := range strings.TrimPrefix(k, prefix) {
		n = n*10 + int64(r-'0')
	}
	return n
}

func appendOnce(s []int64, n int64) []int64 {
	for _, x := range s {
		if x == n {
			return s
		}
	}
	return append(s, n)
}

func insertEvent(ctx context.Context, q *db.Queries, e pircan.ForumEvent) error {
	p := db.InsertForumEventParams{ThreadID: e.ThreadID, Type: e.Type, FromState: optText(e.From), ToState: optText(e.To),
		Origin: e.Origin, Confirmed: e.Confirmed, ByIdentity: e.By, ByExt: e.ByExt}
	if e.Message != 0 {
		p.MessageID = pgtype.Int8{Int64: e.Message, Valid: true}
	}
	return q.InsertForumEvent(ctx, p)
}

// ChangeThread implements pircan.ForumStore.
func (s *Store) ChangeThread(ctx context.Context, actor pircan.ForumActor, id int64,
	rule func(pircan.ThreadView) (pircan.Change, error)) (pircan.Thread, error) {
	var out pircan.Thread
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		r, err := q.LockForumThread(ctx, id)
		if err != nil {
			return notFoundAs(err, pircan.ErrThreadNotFound)
		}
		view := pircan.ThreadView{Thread: toThread(r.ForumThread, r.Slug)}
		if actor.Owner != "" {
			if view.OwnedByActor, err = q.OwnsForumCreator(ctx, db.OwnsForumCreatorParams{
				CreatorFolded: r.ForumThread.CreatorFolded, OwnerFolded: foldAccount(actor.Owner)}); err != nil {
				return err
			}
		}
		change, err := rule(view)
		if err != nil {
			return err
		}
		out = change.Thread
		if len(change.Events) == 0 {
			return nil
		}
		t := change.Thread
		if change.NewTurn && t.Due != nil { // as a message's turn (PostForumMessage)
			if err := q.LockForumTurn(ctx, foldAccount(t.Due.Account)); err != nil {
				return err
			}
		}
		if err := q.UpdateForumThreadState(ctx, db.UpdateForumThreadStateParams{ID: t.ID, State: t.State,
			StateOrigin: t.StateOrigin, ProposedState: optText(t.Proposed), Pinned: t.Pinned,
			LlmReplyForbidden: t.LLMForbidden, NewTurn: change.NewTurn}); err != nil {
			return err
		}
		if change.NewTurn && t.Due != nil { // the thread comes to await its due line again: tell its agent
			if err := q.NotifyForumDue(ctx, db.NotifyForumDueParams{Type: pircan.NotifyForum,
				AccountFolded: foldAccount(t.Due.Account)}); err != nil {
				return err
			}
		}
		for _, e := range change.Events {
			e.ThreadID = t.ID
			if err := insertEvent(ctx, q, e); err != nil {
				return err
			}
		}
		last := change.Events[len(change.Events)-1]
		details := map[string]any{"confirmed": last.Confirmed}
		if last.From != "" || last.To != "" {
			details["from"], details["to"] = last.From, last.To
		}
		if change.NewTurn {
			details["new_turn"] = true
		}
		return audit(ctx, q, actor.AuditActor(), threadActions[last.Type], pircan.ThreadKey(t.ID), humanDetails(actor, details))
	})
	return out, err
}

// threadActions are the audit actions of a thread's changes, by event.
var threadActions = map[string]string{
	pircan.EventState:     "forum.state",
	pircan.EventConfirmed: "forum.confirmed",
	pircan.EventDeclined:  "forum.declined",
	pircan.EventPinned:    "forum.pinned",
	pircan.EventUnpinned:  "forum.unpinned",
	// a human forbade AI reactions on the thread, or allowed them again
	pircan.EventLLMForbidden: "forum.llm_reply_forbidden",
	pircan.EventLLMAllowed:   "forum.llm_reply_allowed",
}

// ForumInbox implements pircan.ForumStore.
func (s *Store) ForumInbox(ctx context.Context, iq pircan.InboxQuery) ([]pircan.Thread, int, error) {
	var out []pircan.Thread
	total := 0
	me := foldAccount(iq.Account)
	err := s.readPlanned(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.ForumInbox(ctx, db.ForumInboxParams{DueFolded: &me, Since: iq.Since, Ext: iq.Extension, Lim: int32(iq.Limit)})
		if err != nil {
			return err
		}
		for _, r := range rows {
			out = append(out, toThread(r.ForumThread, r.Slug))
		}
		n, err := q.CountForumInbox(ctx, db.CountForumInboxParams{DueFolded: &me, Since: iq.Since, Ext: iq.Extension,
			Cap: pircan.MaxFindTotal + 1})
		total = int(n)
		return err
	})
	return out, total, err
}

// ForumInboxCursor implements pircan.ForumStore.
func (s *Store) ForumInboxCursor(ctx context.Context, account, ext string) (int64, error) {
	var out int64
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		n, err := q.ForumInboxCursor(ctx, db.ForumInboxCursorParams{AccountFolded: foldAccount(account), Ext: ext})
		if errors.Is(notFound(err), pircan.ErrNotFound) {
			return nil
		}
		out = n
		return err
	})
	return out, err
}

// ForumNewestTurn implements pircan.ForumStore.
func (s *Store) ForumNewestTurn(ctx context.Context) (int64, error) {
	var out int64
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		var err error
		out, err = q.ForumNewestTurn(ctx)
		return err
	})
	return out, err
}

// AckForumInbox implements pircan.ForumStore.
func (s *Store) AckForumInbox(ctx context.Context, actor pircan.ForumActor, ext string, cursor int64) error {
	return s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		if err := q.AckForumInbox(ctx, db.AckForumInboxParams{AccountFolded: foldAccount(actor.Account), Ext: ext, Cursor: cursor}); err != nil {
			return err
		}
		return audit(ctx, q, actor.AuditActor(), "forum.inbox_ack", "", humanDetails(actor, map[string]any{"cursor": cursor}))
	})
}

// ForumAccountRights implements pircan.ForumStore: from the rights cache
// while it holds the account (rightscache.go).
func (s *Store) ForumAccountRights(ctx context.Context, account string) ([]string, error) {
	key := foldAccount(account)
	r, ok, gen := s.rights.get(key)
	if ok {
		return r.rights, nil
	}
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		rights, err := q.ForumAccountRights(ctx, key)
		if errors.Is(notFound(err), pircan.ErrNotFound) {
			return nil
		}
		if rights == nil {
			rights = []string{}
		}
		r.rights = rights
		return err
	})
	if err != nil {
		return nil, err
	}
	r.folded = key
	s.rights.put(key, r, gen)
	return r.rights, nil
}

// SetForumAccountRights implements pircan.ForumStore. The account's cached
// rights are forgotten when it commits, before the notification comes.
func (s *Store) SetForumAccountRights(ctx context.Context, operator, account string, rights []string) error {
	defer s.rights.forget(foldAccount(account))
	return s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		if err := q.SetForumAccountRights(ctx, db.SetForumAccountRightsParams{AccountFolded: foldAccount(account),
			Account: account, Rights: rights}); err != nil {
			return err
		}
		return audit(ctx, q, pircan.Actor{Account: operator}, "forum.rights", account, map[string]any{"rights": rights})
	})
}

// PendingProposals implements pircan.ForumStore.
func (s *Store) PendingProposals(ctx context.Context, owner string, limit int) ([]pircan.Thread, error) {
	var out []pircan.Thread
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.PendingForumProposals(ctx, db.PendingForumProposalsParams{OwnerFolded: foldAccount(owner), Lim: int32(limit)})
		for _, r := range rows {
			out = append(out, toThread(r.ForumThread, r.Slug))
		}
		return err
	})
	return out, err
}
