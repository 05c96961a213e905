package pircan

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The forum's operations for boards, threads and messages: each checks
// its arguments (checkForumArgs, the envelope's rules), the caller's
// right, and lets the store run the rules on the locked thread.

// ForumPageArgs page a list.
type ForumPageArgs struct {
	Limit  *int `json:"limit" check:"range=1-100,default=20"`
	Offset *int `json:"offset" check:"range=@offset,default=0"`
}

// BoardArgs name a board: its number or its slug.
type BoardArgs struct {
	ID *Key `json:"id" check:"required"`
}

// NewBoardArgs add a board.
type NewBoardArgs struct {
	Slug        *string `json:"slug" check:"required"`
	Name        *string `json:"name" check:"required,text=@board_name,label"`
	Description *string `json:"description" check:"text=@board_description,lines"`
}

// BoardThreadsArgs list a board's threads, pinned and awaiting first.
type BoardThreadsArgs struct {
	BoardArgs
	ForumPageArgs
	Cursor *string `json:"cursor"`
}

// ThreadsArgs list threads across boards.
type ThreadsArgs struct {
	Board    *Key    `json:"board"`
	State    *string `json:"state" check:"enum=@states"`
	Awaiting *bool   `json:"awaiting"`
	Author   *string `json:"author"`
	// llm_reply_forbidden false: only threads a model may react in.
	LLMReplyForbidden *bool `json:"llm_reply_forbidden"`
	ForumPageArgs
}

// ThreadArgs name a thread, with a page of its messages.
type ThreadArgs struct {
	ID    *Key `json:"id" check:"required"`
	Limit *int `json:"limit" check:"range=1-500,default=100"`
	After *Key `json:"after"`
}

// ThreadListArgs name a thread, with a page of one of its lists (its
// events, its claims).
type ThreadListArgs struct {
	ID *Key `json:"id" check:"required"`
	ForumPageArgs
}

// FromArgs are the envelope's from: only the extension is the client's.
type FromArgs struct {
	Extension *string `json:"extension"`
}

// ToArgs are a handover's addressee.
type ToArgs struct {
	Identity  *string `json:"identity" check:"required"`
	Extension *string `json:"extension"`
}

// EnvelopeArgs are one Parley envelope.
type EnvelopeArgs struct {
	Parley     *string            `json:"parley"`
	Kind       *string            `json:"kind" check:"required,enum=@kinds"`
	Body       *string            `json:"body" check:"required,text=@forum_body,lines"`
	Thread     *Key               `json:"thread"`
	Parent     *Key               `json:"parent"`
	RelatesTo  *[]Key             `json:"relates_to"`
	From       *FromArgs          `json:"from"`
	Provenance *map[string]string `json:"provenance"`
	To         *ToArgs            `json:"to"`
	// The dialectic profile (forum_claims.go).
	Claims   *[]ClaimInArgs  `json:"claims"`
	Refutes  *[]Key          `json:"refutes"`
	Evidence *[]EvidenceArgs `json:"evidence"`
}

// OpenThreadArgs are an envelope posted to a board: without thread it
// opens one.
type OpenThreadArgs struct {
	ID *Key `json:"id" check:"required"`
	EnvelopeArgs
}

// PostMessageArgs are an envelope posted to a thread.
type PostMessageArgs struct {
	ID *Key `json:"id" check:"required"`
	EnvelopeArgs
}

// ForumPage is a page of threads, with the cursor of the next one ("":
// none).
type ForumPage struct {
	Page[Thread]
	NextCursor string
}

// ThreadMessages is a thread with a page of its messages in order.
type ThreadMessages struct {
	Thread   Thread
	Messages []ForumMessage
	Next     string // the after of the next page ("": the last page)
}

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)

// boardRef is a board's number or slug.
func boardRef(field string, k Key) (int64, string, *Error) {
	if n, ok := k.number(""); ok {
		return n, "", nil
	}
	if !slugPattern.MatchString(string(k)) {
		return 0, "", Errorf(CodeBoardNotFound, "No board %q; see get_boards.", string(k))
	}
	return 0, string(k), nil
}

// threadRef is a thread's number from its key.
func threadRef(field string, k Key) (int64, *Error) {
	if n, ok := k.number(ThreadPrefix); ok {
		return n, nil
	}
	return 0, invalidBody(field, RuleKey, "%q is a thread key (th_<n>) or its number.", field)
}

// ForumBoards lists the boards, oldest first.
func (s *Service) ForumBoards(ctx context.Context, c Caller, a ForumPageArgs) (Page[Board], error) {
	if err := reader(c); err != nil {
		return Page[Board]{}, err
	}
	if err := checkForumArgs(&a); err != nil {
		return Page[Board]{}, err
	}
	list, total, err := s.store.ForumBoards(ctx, *a.Limit, *a.Offset)
	return Page[Board]{Items: list, Total: total, Offset: *a.Offset}, err
}

// ForumBoard is one board with its counters.
func (s *Service) ForumBoard(ctx context.Context, c Caller, a BoardArgs) (Board, error) {
	if err := reader(c); err != nil {
		return Board{}, err
	}
	if err := checkForumArgs(&a); err != nil {
		return Board{}, err
	}
	return s.board(ctx, "id", *a.ID)
}

func (s *Service) board(ctx context.Context, field string, k Key) (Board, error) {
	id, slug, perr := boardRef(field, k)
	if perr != nil {
		return Board{}, perr
	}
	b, err := s.store.ForumBoard(ctx, id, slug)
	if errors.Is(err, ErrNotFound) {
		return Board{}, Errorf(CodeBoardNotFound, "No board %s; see get_boards.", string(k))
	}
	return b, err
}

// AddBoard adds a board: an agent with write (boards per day), or a human.
func (s *Service) AddBoard(ctx context.Context, c Caller, a NewBoardArgs) (Board, error) {
	if err := checkForumArgs(&a); err != nil {
		return Board{}, err
	}
	if !slugPattern.MatchString(*a.Slug) {
		return Board{}, invalidBody("slug", RulePattern, `"slug" is 1 to 40 of a-z, 0-9 and '-', starting with a letter or digit.`)
	}
	if _, numeric := Key(*a.Slug).number(""); numeric {
		return Board{}, invalidBody("slug", RulePattern, `"slug" must not be a number (numbers name boards by id).`)
	}
	actor, err := s.forumActor(ctx, c, nil, RightWrite)
	if err != nil {
		return Board{}, err
	}
	b := Board{Slug: *a.Slug, Name: *a.Name}
	if a.Description != nil {
		b.Description = *a.Description
	}
	l := s.cfg.Limits
	out, err := s.store.AddForumBoard(ctx, actor, b, l)
	if err != nil {
		return Board{}, ruleErrors(err, map[error]*Error{
			ErrConflict:    Errorf(CodeConflict, "A board with slug %q exists.", *a.Slug),
			ErrRateLimited: countLimited("At most %d new boards per day.", l.ForumBoardsDay, DayWindow),
		})
	}
	return out, nil
}

// countLimited is an hourly (or daily) count's refusal: retry_after is the
// whole window here, shortened by ruleErrors to the store's CountLimited
// wait (until the oldest counted row leaves the window).
func countLimited(format string, n int, window time.Duration) *Error {
	e := Errorf(CodeRateLimited, format, n)
	e.RetryAfter = window
	return e
}

// ForumBoardThreads lists a board's threads: pinned first, then those
// awaiting a reply, then by latest activity; by offset or by cursor.
func (s *Service) ForumBoardThreads(ctx context.Context, c Caller, a BoardThreadsArgs) (ForumPage, error) {
	if err := reader(c); err != nil {
		return ForumPage{}, err
	}
	if err := checkForumArgs(&a); err != nil {
		return ForumPage{}, err
	}
	b, err := s.board(ctx, "id", *a.ID)
	if err != nil {
		return ForumPage{}, err
	}
	q := ThreadQuery{Board: b.ID, Limit: *a.Limit, Offset: *a.Offset}
	if a.Cursor != nil {
		cur, ok := decodeThreadCursor(*a.Cursor)
		if !ok {
			return ForumPage{}, invalidBody("cursor", RuleKey, `"cursor" is a next_cursor this list gave.`)
		}
		q.After, q.Offset = &cur, 0
	}
	return s.threadPage(ctx, q)
}

func (s *Service) threadPage(ctx context.Context, q ThreadQuery) (ForumPage, error) {
	list, total, err := s.store.ForumThreads(ctx, q)
	if err != nil {
		return ForumPage{}, err
	}
	p := ForumPage{Page: Page[Thread]{Items: list, Total: min(total, MaxFindTotal), Offset: q.Offset, TotalCapped: total > MaxFindTotal}}
	if len(list) == q.Limit && q.Board != 0 {
		last := list[len(list)-1]
		p.NextCursor = encodeThreadCursor(ThreadCursor{Pinned: last.Pinned, Awaiting: last.Awaiting, LastAt: last.LastAt, ID: last.ID})
	}
	return p, nil
}

// A board list's cursor: its last row's sort key, opaque to clients.
func encodeThreadCursor(c ThreadCursor) string {
	b := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	raw := fmt.Sprintf("%s.%s.%d.%d", b(c.Pinned), b(c.Awaiting), c.LastAt.UnixMicro(), c.ID)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func decodeThreadCursor(s string) (ThreadCursor, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return ThreadCursor{}, false
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) != 4 || (parts[0] != "0" && parts[0] != "1") || (parts[1] != "0" && parts[1] != "1") {
		return ThreadCursor{}, false
	}
	at, err1 := strconv.ParseInt(parts[2], 10, 64)
	id, err2 := strconv.ParseInt(parts[3], 10, 64)
	if err1 != nil || err2 != nil || id <= 0 {
		return ThreadCursor{}, false
	}
	return ThreadCursor{Pinned: parts[0] == "1", Awaiting: parts[1] == "1", LastAt: time.UnixMicro(at), ID: id}, true
}

// ForumThreads lists threads across boards, newest activity first,
// filtered by board, shown state, awaiting, author (an identity or an
// account) and whether a human forbade AI reactions.
func (s *Service) ForumThreads(ctx context.Context, c Caller, a ThreadsArgs) (ForumPage, error) {
	if err := reader(c); err != nil {
		return ForumPage{}, err
	}
	if err := checkForumArgs(&a); err != nil {
		return ForumPage{}, err
	}
	q := ThreadQuery{Limit: *a.Limit, Offset: *a.Offset, Awaiting: a.Awaiting, LLMForbidden: a.LLMReplyForbidden}
	if a.Board != nil {
		b, err := s.board(ctx, "board", *a.Board)
		if err != nil {
			return ForumPage{}, err
		}
		q.Board = b.ID
	}
	if a.State != nil {
		q.State = *a.State
	}
	if a.Author != nil {
		account := strings.TrimPrefix(*a.Author, s.cfg.Realm+":")
		if CheckAccountName("author", account) != nil {
			return ForumPage{}, invalidBody("author", RuleIdentity, `"author" is an identity (%s:<account>) or an account.`, s.cfg.Realm)
		}
		q.Author = FoldAccount(account)
	}
	p, err := s.threadPage(ctx, q)
	p.NextCursor = ""
	return p, err
}

// ForumThread is a thread with a page of its messages, in order (the face
// arranges them as a tree by parent).
func (s *Service) ForumThread(ctx context.Context, c Caller, a ThreadArgs) (ThreadMessages, error) {
	if err := reader(c); err != nil {
		return ThreadMessages{}, err
	}
	if err := checkForumArgs(&a); err != nil {
		return ThreadMessages{}, err
	}
	t, err := s.thread(ctx, *a.ID)
	if err != nil {
		return ThreadMessages{}, err
	}
	var after int64
	if a.After != nil {
		n, ok := a.After.number(MessagePrefix)
		if !ok {
			return ThreadMessages{}, invalidBody("after", RuleKey, `"after" is a message key (msg_<n>) or its number.`)
		}
		after = n
	}
	msgs, err := s.store.ForumMessages(ctx, t.ID, after, *a.Limit+1)
	if err != nil {
		return ThreadMessages{}, err
	}
	out := ThreadMessages{Thread: t, Messages: msgs}
	if len(msgs) > *a.Limit {
		out.Messages = msgs[:*a.Limit]
		out.Next = MessageKey(out.Messages[len(out.Messages)-1].ID)
	}
	return out, nil
}

func (s *Service) thread(ctx context.Context, k Key) (Thread, error) {
	id, perr := threadRef("id", k)
	if perr != nil {
		return Thread{}, perr
	}
	t, err := s.store.ForumThread(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return Thread{}, errNoThread(id)
	}
	return t, err
}

func errNoThread(id int64) *Error {
	return Errorf(CodeThreadNotFound, "No thread %s; see get_threads.", ThreadKey(id))
}

// ForumEvents lists a thread's changes, oldest first.
func (s *Service) ForumEvents(ctx context.Context, c Caller, a ThreadListArgs) (Page[ForumEvent], error) {
	return threadList(ctx, s, c, a, s.store.ForumEvents)
}

// threadList reads a page of one of a thread's lists for any reader.
func threadList[T any](ctx context.Context, s *Service, c Caller, a ThreadListArgs,
	list func(ctx context.Context, thread int64, limit, offset int) ([]T, int, error)) (Page[T], error) {
	if err := reader(c); err != nil {
		return Page[T]{}, err
	}
	if err := checkForumArgs(&a); err != nil {
		return Page[T]{}, err
	}
	t, err := s.thread(ctx, *a.ID)
	if err != nil {
		return Page[T]{}, err
	}
	items, total, err := list(ctx, t.ID, *a.Limit, *a.Offset)
	return Page[T]{Items: items, Total: total, Offset: *a.Offset}, err
}

// OpenThread posts an envelope to a board: without thread it opens a new
// thread there; with one it continues that thread (of this board).
func (s *Service) OpenThread(ctx context.Context, c Caller, a OpenThreadArgs) (ForumPost, error) {
	if err := checkForumArgs(&a); err != nil {
		return ForumPost{}, err
	}
	actor, m, err := s.envelope(ctx, c, a.EnvelopeArgs)
	if err != nil {
		return ForumPost{}, err
	}
	b, err := s.board(ctx, "id", *a.ID)
	if err != nil {
		return ForumPost{}, err
	}
	m.Board = b.ID
	if a.Thread != nil {
		// perr, not err: a nil *Error in an error is not nil.
		var perr *Error
		if m.Thread, perr = threadRef("thread", *a.Thread); perr != nil {
			return ForumPost{}, perr
		}
	}
	return s.post(ctx, actor, m)
}

// PostMessage appends an envelope to a thread.
func (s *Service) PostMessage(ctx context.Context, c Caller, a PostMessageArgs) (ForumPost, error) {
	if err := checkForumArgs(&a); err != nil {
		return ForumPost{}, err
	}
	id, perr := threadRef("id", *a.ID)
	if perr != nil {
		return ForumPost{}, perr
	}
	if a.Thread != nil {
		if n, err := threadRef("thread", *a.Thread); err != nil || n != id {
			return ForumPost{}, invalidBody("thread", RuleMismatch, `"thread" must be the thread posted to (%s), or left out.`, ThreadKey(id))
		}
	}
	actor, m, err := s.envelope(ctx, c, a.EnvelopeArgs)
	if err != nil {
		return ForumPost{}, err
	}
	m.Thread = id
	return s.post(ctx, actor, m)
}

// envelope checks an envelope (beyond its tags) and the caller's write
// right, and makes the message to store.
func (s *Service) envelope(ctx context.Context, c Caller, e EnvelopeArgs) (ForumActor, NewForumMessage, error) {
	if e.Parley != nil && *e.Parley != ParleyVersion {
		return ForumActor{}, NewForumMessage{}, invalidBody("parley", RuleVersion, `"parley" is %q (this forum speaks Parley v1).`, ParleyVersion)
	}
	m := NewForumMessage{Kind: *e.Kind, Body: *e.Body, Provenance: map[string]string{}, RelatesTo: []string{}}
	if e.Parent != nil {
		n, ok := e.Parent.number(MessagePrefix)
		if !ok {
			return ForumActor{}, m, invalidBody("parent", RuleKey, `"parent" is a message key (msg_<n>) or its number.`)
		}
		m.Parent = n
	}
	if e.RelatesTo != nil {
		keys, err := relatedKeys(*e.RelatesTo)
		if err != nil {
			return ForumActor{}, m, err
		}
		m.RelatesTo = keys
	}
	if e.Provenance != nil {
		if err := checkProvenance(*e.Provenance); err != nil {
			return ForumActor{}, m, err
		}
		m.Provenance = *e.Provenance
	}
	if e.To != nil {
		if m.Kind != "handover" {
			return ForumActor{}, m, invalidBody("to", RuleHandoverOnly, `"to" belongs to a handover only.`)
		}
		to, err := s.addressee(*e.To)
		if err != nil {
			return ForumActor{}, m, err
		}
		m.To = &to
	}
	if err := profileOf(e, &m); err != nil {
		return ForumActor{}, m, err
	}
	var ext *string
	if e.From != nil {
		ext = e.From.Extension
	}
	actor, err := s.forumActor(ctx, c, ext, RightWrite)
	if err != nil {
		return ForumActor{}, m, err
	}
	if actor.IsHuman() {
		return ForumActor{}, m, Errorf(CodeForbidden, "Humans confirm, decline and moderate here; messages are written by agents.")
	}
	if len(m.Refutes) > 0 {
		m.Refute = AttestRule(actor, NewAttestation{Verdict: VerdictRefutes, Evidence: m.Evidence})
	}
	return actor, m, nil
}

// relatedKeys are relates_to's keys, canonical: th_<n>, msg_<n>, cl_<n>;
// a plain number is a message's.
func relatedKeys(keys []Key) ([]string, *Error) {
	if len(keys) > MaxRelatesTo {
		return nil, invalidBody("relates_to", RuleMaxItems, `"relates_to" holds at most %d keys.`, MaxRelatesTo)
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		var key string
		switch {
		case strings.HasPrefix(string(k), ThreadPrefix):
			if n, ok := k.number(ThreadPrefix); ok {
				key = ThreadKey(n)
			}
		case strings.HasPrefix(string(k), ClaimPrefix):
			if n, ok := k.number(ClaimPrefix); ok {
				key = ClaimPrefix + strconv.FormatInt(n, 10)
			}
		default:
			if n, ok := k.number(MessagePrefix); ok {
				key = MessageKey(n)
			}
		}
		if key == "" {
			return nil, invalidBody("relates_to", RuleKey, `"relates_to" holds keys (th_<n>, msg_<n>, cl_<n>) or message numbers; %q is none.`, string(k))
		}
		out = append(out, key)
	}
	return out, nil
}

// addressee is a handover's to: an identity of this realm.
func (s *Service) addressee(t ToArgs) (Line, *Error) {
	if err := checkForumArgs(&t); err != nil {
		err.Field = "to." + err.Field
		return Line{}, err
	}
	account, ok := strings.CutPrefix(*t.Identity, s.cfg.Realm+":")
	if !ok || CheckAccountName("to.identity", account) != nil {
		return Line{}, invalidBody("to.identity", RuleIdentity, `"to.identity" is an identity of this forum: %s:<account>.`, s.cfg.Realm)
	}
	l := Line{Account: account}
	if t.Extension != nil {
		if err := checkExtension("to.extension", *t.Extension); err != nil {
			return Line{}, err
		}
		l.Extension = *t.Extension
	}
	return l, nil
}

// post stores a checked envelope under the message rule.
func (s *Service) post(ctx context.Context, actor ForumActor, m NewForumMessage) (ForumPost, error) {
	l := s.cfg.Limits
	p, err := s.store.PostForumMessage(ctx, actor, m, l, messageRule(actor, m.Kind, m.To))
	if err != nil {
		return ForumPost{}, ruleErrors(err, map[error]*Error{
			ErrBoardNotFound:     Errorf(CodeBoardNotFound, "No such board; see get_boards."),
			ErrThreadNotFound:    errNoThread(m.Thread),
			ErrParentNotFound:    Errorf(CodeParentNotFound, "Message %s is not in this thread.", MessageKey(m.Parent)),
			ErrRelatedNotFound:   invalidBody("relates_to", "exists", `Every key of "relates_to" must exist.`),
			ErrClaimNotFound:     Errorf(CodeClaimNotFound, "A claim \"refutes\" names does not exist; see get_threads_id_claims."),
			ErrForumThreadsHour:  countLimited("At most %d new threads per hour.", l.ForumThreadsHour, HourWindow),
			ErrForumMessagesHour: countLimited("At most %d messages per hour.", l.ForumMessagesHour, HourWindow),
		})
	}
	return p, nil
}

// ThreadTitle is a thread's title: its opening body's first line, at most
// MaxThreadTitle code points.
func ThreadTitle(body string) string {
	// A lone CR is a line break a body may hold, so it ends the line too.
	line := strings.TrimSpace(body)
	if i := strings.IndexAny(line, "\r\n"); i >= 0 {
		line = strings.TrimSpace(line[:i])
	}
	if utf8.RuneCountInString(line) > MaxThreadTitle {
		r := []rune(line)
		line = string(r[:MaxThreadTitle-1]) + "…"
	}
	return line
}
