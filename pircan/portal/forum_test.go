package portal_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// The forum pages over a real store: a verified owner confirms, declines,
// closes and reopens its agents' threads; agents' bodies are escaped;
// every refusal is the core's, and changes nothing.

func kp(s string) *pircan.Key { k := pircan.Key(s); return &k }
func sp(s string) *string     { return &s }

// forumAgent is an agent (registered on IRC) as the forum's doors see it.
func (b *browser) forumAgent(account string) pircan.Caller {
	b.t.Helper()
	b.agent(account)
	c, err := b.core.Caller(b.t.Context(), pircan.FaceParley, account, "")
	if err != nil {
		b.t.Fatal(err)
	}
	return c
}

// verifiedOwner signs the browser in as owner, confirms it as the owner of
// the agent of c in the portal, and has an operator verify it as name.
// It returns the signed-in page's CSRF token.
func (b *browser) verifiedOwner(c pircan.Caller, owner, name string) string {
	b.t.Helper()
	if _, err := b.core.Owner(b.t.Context(), c, pircan.OwnerArgs{Account: &owner}); err != nil {
		b.t.Fatal(err)
	}
	csrf := b.signIn(owner)
	if got := b.do("POST", "/owner/binding", url.Values{"csrf": {csrf}, "agent_id": {c.Agent.ID}, "decision": {"confirm"}}); got.status != http.StatusSeeOther {
		b.t.Fatalf("confirm binding: %d %s", got.status, got.body)
	}
	if name != "" {
		if _, err := b.core.VerifyOwner(b.t.Context(), pircan.OperatorCaller("operator:ops"), pircan.VerifyOwnerArgs{Account: &owner, Name: &name}); err != nil {
			b.t.Fatal(err)
		}
	}
	return csrf
}

func (b *browser) thread(id int64) pircan.Thread {
	b.t.Helper()
	t, err := shared.ForumThread(b.t.Context(), id)
	if err != nil {
		b.t.Fatal(err)
	}
	return t
}

func TestPortalForum(t *testing.T) {
	t.Parallel()
	b := newBrowser(t, pircan.DefaultLimits)
	ctx := t.Context()
	alice, bob := b.forumAgent(unique("alice")), b.forumAgent(unique("bob"))
	owner, name := unique("ann"), "Ann "+unique("")
	csrf := b.verifiedOwner(alice, owner, name)

	// alice asks, with markup in her body; bob answers (a proposal), and
	// alice proposes the close.
	markup := `<script>alert(1)</script><b>bold</b> & "quotes"` + "\nsecond line"
	open, err := b.core.OpenThread(ctx, alice, pircan.OpenThreadArgs{ID: kp("lobby"),
		EnvelopeArgs: pircan.EnvelopeArgs{Kind: sp("ask"), Body: &markup, From: &pircan.FromArgs{Extension: sp("main")}}})
	if err != nil {
		t.Fatal(err)
	}
	th := pircan.ThreadKey(open.Thread.ID)
	ans, err := b.core.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: kp(th), EnvelopeArgs: pircan.EnvelopeArgs{
		Kind: sp("answer"), Body: sp("<img src=x onerror=alert(2)>"), Parent: kp(pircan.MessageKey(open.Message.ID))}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.core.CloseThread(ctx, alice, pircan.ThreadMarkArgs{ID: kp(th)}); err != nil {
		t.Fatal(err)
	}
	// carol's thread: not one of ann's agents'.
	carol := b.forumAgent(unique("carol"))
	other, err := b.core.OpenThread(ctx, carol, pircan.OpenThreadArgs{ID: kp("lobby"),
		EnvelopeArgs: pircan.EnvelopeArgs{Kind: sp("note"), Body: sp("Not Ann's.")}})
	if err != nil {
		t.Fatal(err)
	}
	otherKey := pircan.ThreadKey(other.Thread.ID)

	// The main page links to the forum; the forum lists the proposal and
	// the thread, never carol's.
	if main := b.do("GET", "/owner", nil); !strings.Contains(main.body, `href="/owner/forum" id="nav-forum"`) {
		t.Fatalf("no link to the forum: %s", main.body)
	}
	list := b.do("GET", "/owner/forum", nil)
	if list.status != http.StatusOK || !strings.Contains(list.body, `id="pending-`+th+`"`) || !strings.Contains(list.body, `id="thread-`+th+`"`) ||
		strings.Contains(list.body, otherKey+`"`) {
		t.Fatalf("forum list: %d %s", list.status, list.body)
	}
	// Ann's agents' remembered extensions: alice's, not carol's.
	if !strings.Contains(list.body, `<td class="mono text" data-label="Account">pircan:`+alice.Account+`</td>`) ||
		!strings.Contains(list.body, `<span class="mono ext">main</span>`) || strings.Contains(list.body, carol.Account) {
		t.Fatalf("extensions: %s", list.body)
	}
	// Bodies are text: the title (the first line) escaped, never markup.
	if strings.Contains(list.body, "<script>alert") || !strings.Contains(list.body, "&lt;script&gt;alert(1)&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;") {
		t.Fatalf("title not escaped: %s", list.body)
	}

	page := b.do("GET", "/owner/forum/"+th, nil)
	body := page.body
	if page.status != http.StatusOK || strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") ||
		!strings.Contains(body, "&lt;img src=x onerror=alert(2)&gt;") || !strings.Contains(body, "&amp; &#34;quotes&#34;\nsecond line") {
		t.Fatalf("thread page not escaped: %d %s", page.status, body)
	}
	// The tree: bob's answer under alice's question.
	if !strings.Contains(body, `class="msg d0" id="`+pircan.MessageKey(open.Message.ID)+`"`) ||
		!strings.Contains(body, `class="msg d1" id="`+pircan.MessageKey(ans.Message.ID)+`"`) {
		t.Fatalf("no tree: %s", body)
	}
	// The shown state is alice's proposed close, unconfirmed; the buttons
	// are those the rules take: confirm, decline, close (confirms it), reopen.
	if !strings.Contains(body, `id="state">closed<`) || !strings.Contains(body, " · 2 messages") || !strings.Contains(body, "proposed, not confirmed (confirmed state: open)") {
		t.Fatalf("state: %s", body)
	}
	for _, m := range []string{"confirm", "decline", "close", "reopen"} {
		if !strings.Contains(body, `id="move-`+m+`"`) {
			t.Errorf("no %s button: %s", m, body)
		}
	}
	if strings.Contains(body, `id="move-deferred"`) {
		t.Errorf("a side state from a proposed close: %s", body)
	}

	// Forged forms change nothing. (The wrong token differs from the
	// right one in its first character, whichever that is.)
	wrong := "x" + csrf[1:]
	if csrf[0] == 'x' {
		wrong = "y" + csrf[1:]
	}
	for _, c := range []struct {
		name    string
		form    url.Values
		headers []string
	}{
		{"cross-site", url.Values{"csrf": {csrf}, "thread": {th}, "move": {"confirm"}}, []string{"Sec-Fetch-Site", "cross-site"}},
		{"no token", url.Values{"thread": {th}, "move": {"confirm"}}, nil},
		{"wrong token", url.Values{"csrf": {wrong}, "thread": {th}, "move": {"confirm"}}, nil},
	} {
		if got := b.do("POST", "/owner/forum/move", c.form, c.headers...); got.status != http.StatusForbidden {
			t.Errorf("%s: %d %s", c.name, got.status, got.body)
		}
	}
	if tt := b.thread(open.Thread.ID); tt.Proposed != pircan.StateClosed || tt.State != pircan.StateOpen {
		t.Fatalf("a forged form changed the thread: %+v", tt)
	}

	// Ann confirms: closed, confirmed, locked; the event names her.
	got := b.do("POST", "/owner/forum/move", url.Values{"csrf": {csrf}, "thread": {th}, "move": {"confirm"}})
	if got.status != http.StatusSeeOther || got.header.Get("Location") != "/owner/forum/"+th+"?done=confirm" {
		t.Fatalf("confirm: %d %v %s", got.status, got.header, got.body)
	}
	if tt := b.thread(open.Thread.ID); tt.State != pircan.StateClosed || tt.Proposed != "" || !tt.Locked() {
		t.Fatalf("after confirm: %+v", tt)
	}
	body = b.do("GET", got.header.Get("Location"), nil).body
	if !strings.Contains(body, "Proposal confirmed.") || !strings.Contains(body, `id="confirmed">confirmed<`) ||
		!strings.Contains(body, `<td class="mono by text" data-label="By">human:`+name+`</td>`) || !strings.Contains(body, `id="locked"`) {
		t.Fatalf("after confirm: %s", body)
	}
	// The core's refusal, in its words: nothing to confirm.
	got = b.do("POST", "/owner/forum/move", url.Values{"csrf": {csrf}, "thread": {th}, "move": {"confirm"}})
	if got.status != http.StatusConflict || find(t, headingRe, got.body) != "Nothing to confirm" || !strings.Contains(got.body, "has no pending proposal") {
		t.Fatalf("confirm again: %d %s", got.status, got.body)
	}
	if _, err := b.core.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: kp(th), EnvelopeArgs: pircan.EnvelopeArgs{
		Kind: sp("note"), Body: sp("late")}}); pircan.AsError(err).Code != pircan.CodeThreadClosed {
		t.Fatalf("a message to the confirmed close: %v", err)
	}
	// Reopen: open, confirmed, by a human.
	if got := b.do("POST", "/owner/forum/move", url.Values{"csrf": {csrf}, "thread": {th}, "move": {"reopen"}}); got.status != http.StatusSeeOther {
		t.Fatalf("reopen: %d %s", got.status, got.body)
	}
	if tt := b.thread(open.Thread.ID); tt.State != pircan.StateOpen || tt.StateOrigin != pircan.OriginUser || tt.Locked() {
		t.Fatalf("after reopen: %+v", tt)
	}
	// A proposal declined: the thread keeps its confirmed state.
	if _, err := b.core.SetThreadState(ctx, alice, pircan.ThreadStateArgs{ThreadMarkArgs: pircan.ThreadMarkArgs{ID: kp(th)}, State: sp("deferred")}); err != nil {
		t.Fatal(err)
	}
	if got := b.do("POST", "/owner/forum/move", url.Values{"csrf": {csrf}, "thread": {th}, "move": {"decline"}}); got.status != http.StatusSeeOther {
		t.Fatalf("decline: %d %s", got.status, got.body)
	}
	if tt := b.thread(open.Thread.ID); tt.State != pircan.StateOpen || tt.Proposed != "" {
		t.Fatalf("after decline: %+v", tt)
	}
	// Close, then a side state from a closed thread is the core's refusal.
	if got := b.do("POST", "/owner/forum/move", url.Values{"csrf": {csrf}, "thread": {th}, "move": {"close"}}); got.status != http.StatusSeeOther {
		t.Fatalf("close: %d %s", got.status, got.body)
	}
	got = b.do("POST", "/owner/forum/move", url.Values{"csrf": {csrf}, "thread": {th}, "move": {"obsolete"}})
	if got.status != http.StatusConflict || find(t, headingRe, got.body) != "Thread closed" {
		t.Fatalf("side state of a closed thread: %d %s", got.status, got.body)
	}
	got = b.do("POST", "/owner/forum/move", url.Values{"csrf": {csrf}, "thread": {th}, "move": {"open"}})
	if got.status != http.StatusBadRequest || !strings.Contains(got.body, "is not set this way") {
		t.Fatalf("an unknown move: %d %s", got.status, got.body)
	}

	// carol's thread: readable, no buttons, and a forged mark refused.
	body = b.do("GET", "/owner/forum/"+otherKey, nil).body
	if !strings.Contains(body, `id="no-authority"`) || strings.Contains(body, `id="move-`) {
		t.Fatalf("another's thread: %s", body)
	}
	got = b.do("POST", "/owner/forum/move", url.Values{"csrf": {csrf}, "thread": {otherKey}, "move": {"close"}})
	if got.status != http.StatusForbidden || find(t, headingRe, got.body) != "No authority over this thread" || !strings.Contains(got.body, "the owner of its creator&#39;s agent") {
		t.Fatalf("close another's thread: %d %s", got.status, got.body)
	}
	if tt := b.thread(other.Thread.ID); tt.Shown() != pircan.StateOpen {
		t.Fatalf("another's thread changed: %+v", tt)
	}
	for _, path := range []string{"/owner/forum/th_999999999", "/owner/forum/nothing"} {
		if got := b.do("GET", path, nil); got.status != http.StatusNotFound {
			t.Errorf("%s: %d", path, got.status)
		}
	}

	// The audit log: each mark by ann's account from her session, naming her.
	entries, err := shared.AuditLatest(ctx, 200)
	if err != nil {
		t.Fatal(err)
	}
	var marks []string
	for _, e := range entries {
		if e.Subject != th || !strings.HasPrefix(e.Action, "forum.") || e.ActorAccount != owner {
			continue
		}
		var d map[string]any
		if err := json.Unmarshal(e.Details, &d); err != nil {
			t.Fatal(err)
		}
		if d["human"] != "human:"+name || d["session"] == nil {
			t.Errorf("%s: %s", e.Action, e.Details)
		}
		marks = append(marks, e.Action)
	}
	if want := "forum.confirmed forum.state forum.declined forum.state"; strings.Join(marks, " ") != want {
		t.Fatalf("audit: %v, want %s", marks, want)
	}
}

// An owner not verified by an operator reads why, and its marks are refused.
func TestPortalForumUnverified(t *testing.T) {
	t.Parallel()
	b := newBrowser(t, pircan.DefaultLimits)
	alice := b.forumAgent(unique("alice"))
	csrf := b.verifiedOwner(alice, unique("ann"), "")
	open, err := b.core.OpenThread(t.Context(), alice, pircan.OpenThreadArgs{ID: kp("lobby"),
		EnvelopeArgs: pircan.EnvelopeArgs{Kind: sp("ask"), Body: sp("Why?")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.core.CloseThread(t.Context(), alice, pircan.ThreadMarkArgs{ID: kp(pircan.ThreadKey(open.Thread.ID))}); err != nil {
		t.Fatal(err)
	}
	list := b.do("GET", "/owner/forum", nil)
	if list.status != http.StatusOK || !strings.Contains(list.body, `id="unverified"`) || !strings.Contains(list.body, "pircan owner verify") {
		t.Fatalf("unverified list: %d %s", list.status, list.body)
	}
	got := b.do("POST", "/owner/forum/move", url.Values{"csrf": {csrf}, "thread": {pircan.ThreadKey(open.Thread.ID)}, "move": {"confirm"}})
	if got.status != http.StatusForbidden || find(t, headingRe, got.body) != "Not allowed" {
		t.Fatalf("an unverified confirm: %d %s", got.status, got.body)
	}
	if tt := b.thread(open.Thread.ID); tt.Proposed != pircan.StateClosed {
		t.Fatalf("an unverified owner's mark changed the thread: %+v", tt)
	}
}
