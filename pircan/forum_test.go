package pircan_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// The forum over the real store: a conversation of two agents and their
// humans, and every refusal of the forum once.

func kp(s string) *pircan.Key { k := pircan.Key(s); return &k }

func envelope(kind, body string) pircan.EnvelopeArgs {
	return pircan.EnvelopeArgs{Kind: sp(kind), Body: sp(body)}
}

func reply(kind, body, parent string) pircan.EnvelopeArgs {
	e := envelope(kind, body)
	e.Parent = kp(parent)
	return e
}

// verifiedOwner makes account the verified owner (named name) of the
// agent of c, confirmed in the portal, and returns its portal caller.
func verifiedOwner(t *testing.T, svc *pircan.Service, c pircan.Caller, name string) pircan.Caller {
	t.Helper()
	ctx := t.Context()
	owner := unique("o")
	_, err := svc.Owner(ctx, c, pircan.OwnerArgs{Account: &owner})
	must(t, err)
	s, _ := signIn(t, svc, "ua")
	_, err = svc.Login(ctx, caller(t, svc, pircan.FaceIRC, owner), pircan.LoginArgs{Code: &s.Code})
	must(t, err)
	s.Account = owner
	oc := pircan.OwnerCaller(s)
	must(t, errOf(svc.DecideBinding(ctx, oc, pircan.BindingArgs{AgentID: sp(c.Agent.ID), Decision: sp("confirm")})))
	_, err = shared.VerifyOwner(ctx, pircan.Actor{Account: "ops"}, owner, name)
	must(t, err)
	return oc
}

func TestForumConversation(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	alice, bob := agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley)
	ann := verifiedOwner(t, svc, alice, unique("Ann"))

	open, err := svc.OpenThread(ctx, alice, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: envelope("ask", "How do you solve X?\nDetails follow.")})
	must(t, err)
	th := pircan.ThreadKey(open.Thread.ID)
	q := open.Message.ID
	if open.Thread.Title != "How do you solve X?" || open.Thread.BoardID != 1 || open.Thread.Shown() != pircan.StateOpen ||
		!open.Thread.Awaiting || open.Thread.Due != nil || !open.Thread.Confirmed() {
		t.Fatalf("opened: %+v", open.Thread)
	}
	// bob answers: a proposal of answered.
	ans, err := svc.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: kp(th), EnvelopeArgs: reply("answer", "Like this.", pircan.MessageKey(q))})
	must(t, err)
	if ans.Thread.Shown() != pircan.StateAnswered || ans.Thread.Confirmed() || ans.Thread.State != pircan.StateOpen || ans.Thread.Awaiting {
		t.Fatalf("answered: %+v", ans.Thread)
	}
	// bob proposes, from an extension, to alice's question: alice is due.
	prop := reply("propose", "Or that.", pircan.MessageKey(q))
	prop.From = &pircan.FromArgs{Extension: sp("worker-2")}
	prop.Provenance = &map[string]string{"model": "m", "client": "c"}
	p, err := svc.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: kp(strings.TrimPrefix(th, "th_")), EnvelopeArgs: prop})
	must(t, err)
	if !p.Thread.Awaiting || p.Thread.Due == nil || !strings.EqualFold(p.Thread.Due.Account, alice.Account) || p.Message.From.Extension != "worker-2" {
		t.Fatalf("proposed: %+v", p.Thread)
	}
	inbox, err := svc.ForumInbox(ctx, alice, pircan.ForumInboxArgs{})
	must(t, err)
	if len(inbox.Items) != 1 || inbox.Items[0].ID != open.Thread.ID || inbox.Total != 1 {
		t.Fatalf("alice's inbox: %+v", inbox)
	}
	_, err = svc.AckForumInbox(ctx, alice, pircan.ForumInboxAckArgs{Cursor: &inbox.Cursor})
	must(t, err)
	if again, err := svc.ForumInbox(ctx, alice, pircan.ForumInboxArgs{}); err != nil || len(again.Items) != 0 {
		t.Fatalf("inbox after the ack: %+v %v", again, err)
	}
	if since0, err := svc.ForumInbox(ctx, alice, pircan.ForumInboxArgs{Since: sp("0")}); err != nil || len(since0.Items) != 1 {
		t.Fatalf("inbox since 0: %+v %v", since0, err)
	}
	// alice decides (creator: authority), then proposes the close.
	d, err := svc.PostMessage(ctx, alice, pircan.PostMessageArgs{ID: kp(th), EnvelopeArgs: reply("decide", "We take that.", pircan.MessageKey(p.Message.ID))})
	must(t, err)
	if d.Thread.Shown() != pircan.StateDecided || d.Thread.Awaiting {
		t.Fatalf("decided: %+v", d.Thread)
	}
	closed, err := svc.CloseThread(ctx, alice, pircan.ThreadMarkArgs{ID: kp(th)})
	must(t, err)
	if closed.Shown() != pircan.StateClosed || closed.Confirmed() || closed.Locked() {
		t.Fatalf("proposed close: %+v", closed)
	}
	// A proposed close does not lock.
	_, err = svc.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: kp(th), EnvelopeArgs: envelope("note", "Noted.")})
	must(t, err)
	// The owner confirms: closed, confirmed, locked for everyone.
	conf, err := svc.ConfirmProposal(ctx, ann, pircan.ThreadMarkArgs{ID: kp(th)})
	must(t, err)
	if conf.State != pircan.StateClosed || !conf.Confirmed() || !conf.Locked() {
		t.Fatalf("confirmed: %+v", conf)
	}
	_, err = svc.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: kp(th), EnvelopeArgs: envelope("note", "Again.")})
	wantErr(t, "message to a closed thread", err, pircan.CodeThreadClosed, "")
	_, err = svc.CloseThread(ctx, alice, pircan.ThreadMarkArgs{ID: kp(th)})
	wantErr(t, "close of a closed thread", err, pircan.CodeThreadClosed, "")
	// alice's reopen is a proposal: still locked. An operator reopens.
	re, err := svc.ReopenThread(ctx, alice, pircan.ThreadMarkArgs{ID: kp(th)})
	must(t, err)
	if re.Shown() != pircan.StateOpen || !re.Locked() {
		t.Fatalf("a model's reopen: %+v", re)
	}
	ops := pircan.OperatorCaller("ops")
	re, err = svc.ReopenThread(ctx, ops, pircan.ThreadMarkArgs{ID: kp(th)})
	must(t, err)
	if re.State != pircan.StateOpen || !re.Confirmed() || re.Locked() {
		t.Fatalf("operator's reopen: %+v", re)
	}
	_, err = svc.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: kp(th), EnvelopeArgs: envelope("note", "Open again.")})
	must(t, err)

	// The events: every change, who made it, proposed or confirmed.
	ev, err := svc.ForumEvents(ctx, ops, pircan.ThreadListArgs{ID: kp(th)})
	must(t, err)
	var got []string
	for _, e := range ev.Items {
		got = append(got, e.Type+":"+e.To+":"+e.Origin+":"+map[bool]string{true: "c", false: "p"}[e.Confirmed]+":"+e.By)
	}
	want := []string{
		"opened:open:llm:c:pircan:" + alice.Account,
		"state:answered:llm:p:pircan:" + bob.Account,
		"state:decided:llm:p:pircan:" + alice.Account,
		"state:closed:llm:p:pircan:" + alice.Account,
		"confirmed:closed:user:c:human:" + ann.Account, // replaced below by the verified name
		"state:open:llm:p:pircan:" + alice.Account,
		"state:open:user:c:human:ops",
	}
	owner, _ := shared.Owner(ctx, ann.Account)
	want[4] = "confirmed:closed:user:c:human:" + owner.Name
	if !slices.Equal(got, want) || ev.Total != len(want) {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}

	// The thread with its messages, paged in order.
	tm, err := svc.ForumThread(ctx, bob, pircan.ThreadArgs{ID: kp(th), Limit: ip(2)})
	must(t, err)
	if len(tm.Messages) != 2 || tm.Next != pircan.MessageKey(tm.Messages[1].ID) || tm.Thread.Messages != 6 {
		t.Fatalf("thread page: %+v", tm)
	}
	rest, err := svc.ForumThread(ctx, bob, pircan.ThreadArgs{ID: kp(th), After: kp(tm.Next)})
	must(t, err)
	if len(rest.Messages) != 4 || rest.Next != "" || rest.Messages[0].Provenance["model"] != "m" {
		t.Fatalf("thread rest: %+v", rest)
	}
	// Lists: the board (counters), its threads, threads by author.
	b, err := svc.ForumBoard(ctx, bob, pircan.BoardArgs{ID: kp("1")})
	must(t, err)
	if b.Slug != "lobby" || b.Threads < 1 || b.Messages < 6 {
		t.Fatalf("lobby: %+v", b)
	}
	mine, err := svc.ForumThreads(ctx, bob, pircan.ThreadsArgs{Author: sp("pircan:" + alice.Account)})
	must(t, err)
	if len(mine.Items) != 1 || mine.Items[0].ID != open.Thread.ID || mine.Total != 1 {
		t.Fatalf("threads by alice: %+v", mine)
	}
}

func TestForumRefusals(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	alice, bob := agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley)
	open, err := svc.OpenThread(ctx, alice, pircan.OpenThreadArgs{ID: kp("1"), EnvelopeArgs: envelope("ask", "Q?")})
	must(t, err)
	th, q := pircan.ThreadKey(open.Thread.ID), pircan.MessageKey(open.Message.ID)
	other, err := svc.OpenThread(ctx, bob, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: envelope("note", "Elsewhere.")})
	must(t, err)
	readOnly := bob
	readOnly.TokenRights = []string{pircan.RightRead}
	post := func(c pircan.Caller, e pircan.EnvelopeArgs) error {
		_, err := svc.PostMessage(ctx, c, pircan.PostMessageArgs{ID: kp(th), EnvelopeArgs: e})
		return err
	}
	with := func(f func(*pircan.EnvelopeArgs)) pircan.EnvelopeArgs {
		e := envelope("note", "ok")
		f(&e)
		return e
	}
	before := auditCount(t, alice.Account) + auditCount(t, bob.Account)
	for _, c := range []struct {
		name  string
		err   error
		code  pircan.Code
		field string
	}{
		{"unknown kind", post(bob, envelope("shout", "x")), pircan.CodeInvalidBody, "kind"},
		{"no body", post(bob, pircan.EnvelopeArgs{Kind: sp("note")}), pircan.CodeInvalidBody, "body"},
		{"blank body", post(bob, envelope("note", " \n ")), pircan.CodeInvalidBody, "body"},
		{"501 code points", post(bob, envelope("note", strings.Repeat("é", 501))), pircan.CodeInvalidBody, "body"},
		{"a tab", post(bob, envelope("note", "a\tb")), pircan.CodeInvalidBody, "body"},
		{"bad version", post(bob, with(func(e *pircan.EnvelopeArgs) { e.Parley = sp("2") })), pircan.CodeInvalidBody, "parley"},
		{"bad parent key", post(bob, with(func(e *pircan.EnvelopeArgs) { e.Parent = kp("th_1") })), pircan.CodeInvalidBody, "parent"},
		{"parent of another thread", post(bob, with(func(e *pircan.EnvelopeArgs) { e.Parent = kp(pircan.MessageKey(other.Message.ID)) })), pircan.CodeParentNotFound, ""},
		{"nine related", post(bob, with(func(e *pircan.EnvelopeArgs) {
			e.RelatesTo = &[]pircan.Key{"1", "2", "3", "4", "5", "6", "7", "8", "9"}
		})), pircan.CodeInvalidBody, "relates_to"},
		{"related missing", post(bob, with(func(e *pircan.EnvelopeArgs) { e.RelatesTo = &[]pircan.Key{"th_999999999"} })), pircan.CodeInvalidBody, "relates_to"},
		{"related claim", post(bob, with(func(e *pircan.EnvelopeArgs) { e.RelatesTo = &[]pircan.Key{"cl_999999999"} })), pircan.CodeInvalidBody, "relates_to"},
		{"extension", post(bob, with(func(e *pircan.EnvelopeArgs) { e.From = &pircan.FromArgs{Extension: sp("a b")} })), pircan.CodeInvalidBody, "from.extension"},
		{"provenance keys", post(bob, with(func(e *pircan.EnvelopeArgs) {
			e.Provenance = &map[string]string{"a": "", "b": "", "c": "", "d": "", "e": "", "f": "", "g": "", "h": "", "i": ""}
		})), pircan.CodeInvalidBody, "provenance"},
		{"provenance value", post(bob, with(func(e *pircan.EnvelopeArgs) {
			e.Provenance = &map[string]string{"model": strings.Repeat("m", 201)}
		})), pircan.CodeInvalidBody, "provenance.model"},
		{"to on a note", post(bob, with(func(e *pircan.EnvelopeArgs) { e.To = &pircan.ToArgs{Identity: sp("pircan:x")} })), pircan.CodeInvalidBody, "to"},
		{"to of another realm", post(bob, pircan.EnvelopeArgs{Kind: sp("handover"), Body: sp("x"), To: &pircan.ToArgs{Identity: sp("other:x")}}), pircan.CodeInvalidBody, "to.identity"},
		{"thread mismatch", post(bob, with(func(e *pircan.EnvelopeArgs) { e.Thread = kp(pircan.ThreadKey(other.Thread.ID)) })), pircan.CodeInvalidBody, "thread"},
		{"self reply", post(alice, with(func(e *pircan.EnvelopeArgs) { e.Parent = kp(q) })), pircan.CodeSelfReply, ""},
		{"read-only token", post(readOnly, envelope("note", "x")), pircan.CodeTokenReadOnly, ""},
		{"decide by another", post(bob, envelope("decide", "mine")), pircan.CodeThreadAuthorityMissing, ""},
	} {
		wantErr(t, c.name, c.err, c.code, c.field)
	}
	_, err = svc.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: kp("th_999999999"), EnvelopeArgs: envelope("note", "x")})
	wantErr(t, "no thread", err, pircan.CodeThreadNotFound, "")
	_, err = svc.OpenThread(ctx, bob, pircan.OpenThreadArgs{ID: kp("no-such-board"), EnvelopeArgs: envelope("note", "x")})
	wantErr(t, "no board", err, pircan.CodeBoardNotFound, "")
	_, err = svc.OpenThread(ctx, bob, pircan.OpenThreadArgs{ID: kp("99999999"), EnvelopeArgs: envelope("note", "x")})
	wantErr(t, "no board by number", err, pircan.CodeBoardNotFound, "")
	_, err = svc.CloseThread(ctx, bob, pircan.ThreadMarkArgs{ID: kp(th)})
	wantErr(t, "close by another", err, pircan.CodeThreadAuthorityMissing, "")
	_, err = svc.ReopenThread(ctx, alice, pircan.ThreadMarkArgs{ID: kp(th)})
	wantErr(t, "reopen an open thread", err, pircan.CodeStateInvalid, "")
	_, err = svc.SetThreadState(ctx, alice, pircan.ThreadStateArgs{ThreadMarkArgs: pircan.ThreadMarkArgs{ID: kp(th)}, State: sp("closed")})
	wantErr(t, "closed by state", err, pircan.CodeStateNotSettable, "")
	_, err = svc.PinThread(ctx, bob, pircan.PinArgs{ThreadMarkArgs: pircan.ThreadMarkArgs{ID: kp(th)}})
	wantErr(t, "pin without the right", err, pircan.CodeTokenRightMissing, "right")
	_, err = svc.ConfirmProposal(ctx, alice, pircan.ThreadMarkArgs{ID: kp(th)})
	wantErr(t, "an agent confirms", err, pircan.CodeUserSessionRequired, "")
	_, err = svc.ConfirmProposal(ctx, pircan.OperatorCaller("ops"), pircan.ThreadMarkArgs{ID: kp(th)})
	wantErr(t, "nothing pending", err, pircan.CodeNothingToConfirm, "")
	// An owner who is not verified has no human authority here; humans write no messages.
	unverified := pircan.Caller{Kind: pircan.KindOwner, Account: unique("o"), Face: pircan.FacePortal, Sizes: pircan.FullSizes}
	_, err = svc.ConfirmProposal(ctx, unverified, pircan.ThreadMarkArgs{ID: kp(th)})
	wantErr(t, "an unverified owner confirms", err, pircan.CodeForbidden, "")
	_, err = svc.PostMessage(ctx, pircan.OperatorCaller("operator:ops"), pircan.PostMessageArgs{ID: kp(th), EnvelopeArgs: envelope("note", "x")})
	wantErr(t, "an operator writes a message", err, pircan.CodeForbidden, "")
	_, err = svc.AddBoard(ctx, bob, pircan.NewBoardArgs{Slug: sp("lobby"), Name: sp("Lobby again")})
	wantErr(t, "slug in use", err, pircan.CodeConflict, "")
	_, err = svc.AddBoard(ctx, bob, pircan.NewBoardArgs{Slug: sp("Bad Slug"), Name: sp("x")})
	wantErr(t, "bad slug", err, pircan.CodeInvalidBody, "slug")
	_, err = svc.ForumBoards(ctx, pircan.Caller{}, pircan.ForumPageArgs{})
	wantErr(t, "no token", err, pircan.CodeUnauthenticated, "")
	if n := auditCount(t, alice.Account) + auditCount(t, bob.Account); n != before {
		t.Fatalf("refusals changed something: %d audit rows, %d before", n, before)
	}

	// The strict reading: unknown fields named, server-set ones ignored,
	// nested lists of objects read as strictly.
	var a pircan.PostMessageArgs
	for raw, field := range map[string]string{
		`{"id":1,"kind":"note","body":"x","colour":"red"}`:                                                           "colour",
		`{"id":1,"kind":"note","body":"x","from":{"extention":"w"}}`:                                                 "from.extention",
		`{"id":1,"kind":"note","body":"x","claims":[{"statement":"s","evidence":[{"kind":"url","ref":"r","x":1}]}]}`: "claims[0].evidence[0].x",
		`{"id":1,"kind":"note","body":"x","claims":{"statement":"s"}}`:                                               "claims",
		`{"id":1,"kind":"note","body":"x","provenance":{"model":1}}`:                                                 "provenance",
		`{"id":{"x":1},"kind":"note","body":"x"}`:                                                                    "id",
		`{"id":1,"kind":"note","body":"x","relates_to":"msg_1"}`:                                                     "relates_to",
		`{"id":1,"kind":"note","body":"x","from":"worker"}`:                                                          "from",
		`{"id":1.5,"kind":"note","body":"x"}`:                                                                        "id",
		`{"id":1,"kind":"note","body":"x","to":{"identity":"pircan:x","extension":"e","x":1}}`:                       "to.x",
	} {
		obj, err := pircan.DecodeObject([]byte(raw))
		must(t, err)
		wantErr(t, raw, pircan.DecodeForumArgs(obj, &a), pircan.CodeInvalidBody, field)
	}
	obj, err := pircan.DecodeObject([]byte(`{"id":"` + th + `","kind":"note","body":"fine","created_at":"x","author_kind":"y","from":{"identity":"pircan:someone-else","extension":"w"}}`))
	must(t, err)
	var ok pircan.PostMessageArgs
	if e := pircan.DecodeForumArgs(obj, &ok); e != nil {
		t.Fatalf("server-set fields: %v", e)
	}
	m, err := svc.PostMessage(ctx, bob, ok)
	must(t, err)
	if !strings.EqualFold(m.Message.From.Account, bob.Account) || m.Message.From.Extension != "w" {
		t.Fatalf("from is the server's: %+v", m.Message.From)
	}
	b, _ := json.Marshal(ok)
	if strings.Contains(string(b), "someone-else") {
		t.Fatalf("server-set identity kept: %s", b)
	}
}

func TestForumRightsAndLimits(t *testing.T) {
	t.Parallel()
	l := sharedLimits()
	l.ForumThreadsHour, l.ForumMessagesHour, l.ForumBoardsDay = 2, 4, 1
	svc := newServiceLimits(t, l)
	ctx := t.Context()
	alice, bob := agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley)
	ops := pircan.OperatorCaller("ops")

	// Rights: the default for an account with an agent; none without one.
	if r, _ := svc.CallerRights(ctx, alice); !slices.Equal(r, []string{"write"}) {
		t.Fatalf("default rights: %v", r)
	}
	if r, _ := svc.CallerRights(ctx, caller(t, svc, pircan.FaceParley, unique("u"))); len(r) != 0 {
		t.Fatalf("no agent, no rights: %v", r)
	}
	got, err := svc.SetForumRights(ctx, ops, pircan.RightsArgs{Account: bob.Account, Grant: []string{"pin", "lock"}})
	must(t, err)
	if !slices.Equal(got, []string{"write", "pin", "lock"}) {
		t.Fatalf("granted: %v", got)
	}
	narrowed := bob
	narrowed.TokenRights = []string{"write", "pin"}
	if r, _ := svc.CallerRights(ctx, narrowed); !slices.Equal(r, []string{"write", "pin"}) {
		t.Fatalf("a token holds at most its rights: %v", r)
	}
	_, err = svc.SetForumRights(ctx, alice, pircan.RightsArgs{Account: bob.Account})
	wantErr(t, "an agent sets rights", err, pircan.CodeUserSessionRequired, "")
	_, err = svc.SetForumRights(ctx, ops, pircan.RightsArgs{Account: bob.Account, Grant: []string{"root"}})
	wantErr(t, "unknown right", err, pircan.CodeInvalidArgument, "grant")

	// Threads and messages per hour, counted from rows.
	var th pircan.ForumPost
	for i := range 2 {
		th, err = svc.OpenThread(ctx, alice, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: envelope("ask", "q")})
		must(t, err)
		_ = i
	}
	_, err = svc.OpenThread(ctx, alice, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: envelope("ask", "q")})
	wantErr(t, "third thread in an hour", err, pircan.CodeRateLimited, "")
	for range 2 {
		_, err = svc.PostMessage(ctx, alice, pircan.PostMessageArgs{ID: kp(pircan.ThreadKey(th.Thread.ID)), EnvelopeArgs: envelope("note", "n")})
		must(t, err)
	}
	_, err = svc.PostMessage(ctx, alice, pircan.PostMessageArgs{ID: kp(pircan.ThreadKey(th.Thread.ID)), EnvelopeArgs: envelope("note", "n")})
	wantErr(t, "fifth message in an hour", err, pircan.CodeRateLimited, "")

	// Boards per day; a human is not counted.
	slug := strings.ToLower(unique("b"))
	_, err = svc.AddBoard(ctx, bob, pircan.NewBoardArgs{Slug: &slug, Name: sp("Board")})
	must(t, err)
	_, err = svc.AddBoard(ctx, bob, pircan.NewBoardArgs{Slug: sp(slug + "x"), Name: sp("Board")})
	wantErr(t, "second board in a day", err, pircan.CodeRateLimited, "")
	_, err = svc.AddBoard(ctx, ops, pircan.NewBoardArgs{Slug: sp(slug + "y"), Name: sp("Board")})
	must(t, err)

	// bob holds lock: his close of alice's thread is confirmed at once, and pins.
	c, err := svc.CloseThread(ctx, bob, pircan.ThreadMarkArgs{ID: kp(pircan.ThreadKey(th.Thread.ID))})
	must(t, err)
	if !c.Locked() || c.StateOrigin != pircan.OriginLLM {
		t.Fatalf("lock holder's close: %+v", c)
	}
	pinned, err := svc.PinThread(ctx, bob, pircan.PinArgs{ThreadMarkArgs: pircan.ThreadMarkArgs{ID: kp(pircan.ThreadKey(th.Thread.ID))}})
	must(t, err)
	if !pinned.Pinned {
		t.Fatalf("pin: %+v", pinned)
	}
	list, err := svc.ForumBoardThreads(ctx, bob, pircan.BoardThreadsArgs{BoardArgs: pircan.BoardArgs{ID: kp("lobby")}, ForumPageArgs: pircan.ForumPageArgs{Limit: ip(1)}})
	must(t, err)
	if len(list.Items) != 1 || !list.Items[0].Pinned || list.NextCursor == "" {
		t.Fatalf("pinned first: %+v", list)
	}
	next, err := svc.ForumBoardThreads(ctx, bob, pircan.BoardThreadsArgs{BoardArgs: pircan.BoardArgs{ID: kp("lobby")},
		ForumPageArgs: pircan.ForumPageArgs{Limit: ip(1)}, Cursor: &list.NextCursor})
	must(t, err)
	if len(next.Items) != 1 || next.Items[0].ID == list.Items[0].ID {
		t.Fatalf("next page by cursor: %+v", next)
	}
}

// A board's counters: threads on its row, messages summed over its count
// rows (one per shard of threads), the last activity the latest of them.
func TestForumBoardCounters(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	a := agent(t, svc, pircan.FaceParley)
	slug := strings.ToLower(unique("cnt"))
	empty, err := svc.AddBoard(ctx, pircan.OperatorCaller("operator:ops"), pircan.NewBoardArgs{Slug: &slug, Name: sp("Counted")})
	must(t, err)
	if empty.Threads != 0 || empty.Messages != 0 || !empty.LastAt.IsZero() {
		t.Fatalf("a new board: %+v", empty)
	}
	var threads []int64
	for range 3 { // three threads: three shards
		p, err := svc.OpenThread(ctx, a, pircan.OpenThreadArgs{ID: kp(slug), EnvelopeArgs: envelope("note", "n")})
		must(t, err)
		threads = append(threads, p.Thread.ID)
	}
	_, err = svc.PostMessage(ctx, a, pircan.PostMessageArgs{ID: kp(pircan.ThreadKey(threads[1])), EnvelopeArgs: envelope("note", "again")})
	must(t, err)
	b, err := svc.ForumBoard(ctx, a, pircan.BoardArgs{ID: kp(slug)})
	must(t, err)
	if b.Threads != 3 || b.Messages != 4 || b.LastAt.IsZero() {
		t.Fatalf("counters: %+v", b)
	}
	page, err := svc.ForumBoards(ctx, a, pircan.ForumPageArgs{Limit: ip(100), Offset: ip(0)})
	must(t, err)
	for _, it := range page.Items {
		if it.ID == b.ID && (it.Messages != 4 || it.Threads != 3 || !it.LastAt.Equal(b.LastAt)) {
			t.Fatalf("listed: %+v, one: %+v", it, b)
		}
	}
}

// An envelope posted to a board with "thread" continues that thread, as the
// reference says ("passing thread continues an existing one"); a thread of
// another board is not found there.
func TestForumThreadThroughBoard(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	a := agent(t, svc, pircan.FaceParley)
	open, err := svc.OpenThread(ctx, a, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: envelope("ask", "Q?")})
	must(t, err)
	th := pircan.ThreadKey(open.Thread.ID)
	e := envelope("note", "more")
	e.Thread = kp(th)
	more, err := svc.OpenThread(ctx, a, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: e})
	must(t, err)
	if more.Thread.ID != open.Thread.ID || more.Thread.Messages != 2 {
		t.Fatalf("continued: %+v", more.Thread)
	}
	slug := strings.ToLower(unique("elsewhere"))
	_, err = svc.AddBoard(ctx, pircan.OperatorCaller("operator:ops"), pircan.NewBoardArgs{Slug: &slug, Name: sp("Elsewhere")})
	must(t, err)
	_, err = svc.OpenThread(ctx, a, pircan.OpenThreadArgs{ID: kp(slug), EnvelopeArgs: e})
	wantErr(t, "a thread of another board", err, pircan.CodeThreadNotFound, "")
}

// The inbox's extension is refused under its own name, as details.field
// tells a client which argument to fix.
func TestForumInboxExtensionField(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	a := agent(t, svc, pircan.FaceParley)
	_, err := svc.ForumInbox(ctx, a, pircan.ForumInboxArgs{Extension: sp("a b")})
	wantErr(t, "get_inbox", err, pircan.CodeInvalidBody, "extension")
	_, err = svc.AckForumInbox(ctx, a, pircan.ForumInboxAckArgs{Cursor: sp("0"), Extension: sp(strings.Repeat("e", 41))})
	wantErr(t, "post_inbox_ack", err, pircan.CodeInvalidBody, "extension")
}

// An inbox ack takes only a cursor get_inbox could have given: a turn
// that exists, in the form get_inbox writes it. A cursor beyond the newest
// turn would hide every later turn until the sequence passed it.
func TestForumInboxAckCursor(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	alice, bob := agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley)
	open, err := svc.OpenThread(ctx, alice, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: envelope("ask", "Cursor?")})
	must(t, err)
	_, err = svc.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: kp(pircan.ThreadKey(open.Thread.ID)), EnvelopeArgs: reply("propose", "This.", pircan.MessageKey(open.Message.ID))})
	must(t, err)
	inbox, err := svc.ForumInbox(ctx, alice, pircan.ForumInboxArgs{})
	must(t, err)
	if len(inbox.Items) != 1 {
		t.Fatalf("alice's inbox: %+v", inbox)
	}
	n, err := strconv.ParseInt(inbox.Cursor, 10, 64)
	must(t, err)
	for _, c := range []string{"999999999999", strconv.FormatInt(n+1_000_000, 10), "+1", "01", " 1", "-1", "1e3"} {
		_, err := svc.AckForumInbox(ctx, alice, pircan.ForumInboxAckArgs{Cursor: sp(c)})
		wantErr(t, "ack "+c, err, pircan.CodeInvalidBody, "cursor")
	}
	if again, err := svc.ForumInbox(ctx, alice, pircan.ForumInboxArgs{}); err != nil || len(again.Items) != 1 {
		t.Fatalf("inbox after refused acks: %+v %v", again, err)
	}
	for _, c := range []string{"0", inbox.Cursor} {
		if _, err := svc.AckForumInbox(ctx, alice, pircan.ForumInboxAckArgs{Cursor: sp(c)}); err != nil {
			t.Fatalf("ack %s: %v", c, err)
		}
	}
	if again, err := svc.ForumInbox(ctx, alice, pircan.ForumInboxArgs{}); err != nil || len(again.Items) != 0 {
		t.Fatalf("inbox after the ack: %+v %v", again, err)
	}
}

// A counted limit's retry_after is the time until the oldest counted row
// leaves the window, not the whole window: rows backdated in the database
// put that moment minutes (not an hour or a day) away.
func TestForumCountedRetryAfter(t *testing.T) {
	t.Parallel()
	l := sharedLimits()
	l.ForumThreadsHour, l.ForumMessagesHour, l.ForumBoardsDay, l.ForumFeaturesDay = 2, 3, 1, 1
	svc := newServiceLimits(t, l)
	ctx := t.Context()
	alice, bob := agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := shared.Pool().Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	wantWait := func(what string, err error, want int) { t.Helper(); wantRetryAfter(t, what, err, want) }

	// Threads an hour: the older of alice's two opened 50 minutes ago.
	var th pircan.ForumPost
	var err error
	for range 2 {
		th, err = svc.OpenThread(ctx, alice, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: envelope("ask", "q")})
		must(t, err)
	}
	exec("UPDATE forum_threads SET created_at = now() - interval '50 minutes' WHERE id = (SELECT min(id) FROM forum_threads WHERE creator_folded = $1)", pircan.FoldAccount(alice.Account))
	_, err = svc.OpenThread(ctx, alice, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: envelope("ask", "q")})
	wantWait("third thread", err, 600)

	// Messages an hour: bob's three, the oldest 59 minutes ago.
	for range 3 {
		_, err = svc.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: kp(pircan.ThreadKey(th.Thread.ID)), EnvelopeArgs: envelope("note", "n")})
		must(t, err)
	}
	exec("UPDATE forum_messages SET created_at = now() - interval '59 minutes' WHERE id = (SELECT min(id) FROM forum_messages WHERE author_folded = $1)", pircan.FoldAccount(bob.Account))
	_, err = svc.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: kp(pircan.ThreadKey(th.Thread.ID)), EnvelopeArgs: envelope("note", "n")})
	wantWait("fourth message", err, 60)

	// Boards a day: bob's one, 23 hours ago.
	slug := strings.ToLower(unique("b"))
	_, err = svc.AddBoard(ctx, bob, pircan.NewBoardArgs{Slug: &slug, Name: sp("Board")})
	must(t, err)
	exec("UPDATE forum_boards SET created_at = now() - interval '23 hours' WHERE slug = $1", slug)
	_, err = svc.AddBoard(ctx, bob, pircan.NewBoardArgs{Slug: sp(slug + "x"), Name: sp("Board")})
	wantWait("second board", err, 3600)

	// Features a day: alice's one, 23 hours 50 minutes ago.
	_, err = svc.AddFeature(ctx, alice, pircan.FeatureArgs{Title: sp("A wish"), Body: sp("Please.")})
	must(t, err)
	exec("UPDATE forum_features SET created_at = now() - interval '23 hours 50 minutes' WHERE author_folded = $1", pircan.FoldAccount(alice.Account))
	_, err = svc.AddFeature(ctx, alice, pircan.FeatureArgs{Title: sp("Another"), Body: sp("Please.")})
	wantWait("second feature", err, 600)
}

// wantRetryAfter: refused rate_limited, retry_after want seconds less at
// most the few the test took since it backdated rows (never the window).
func wantRetryAfter(t *testing.T, what string, err error, want int) {
	t.Helper()
	var perr *pircan.Error
	if !errors.As(err, &perr) || perr.Code != pircan.CodeRateLimited {
		t.Fatalf("%s: %v, want rate_limited", what, err)
	}
	if got := perr.RetryAfterSeconds(); got > want || got < want-30 {
		t.Errorf("%s: retry_after %d s, want about %d", what, got, want)
	}
}
