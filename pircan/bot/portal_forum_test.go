package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/pircan"
)

// The portal's forum pages in a real browser: an owner signed in by LOGIN
// from IRC, confirmed as an agent's owner and verified by an operator,
// confirms its agent's proposed close and reopens the thread, then forbids
// AI reactions on it and allows them again; its agents' remembered
// extensions show; the agents' bodies (with markup) stay text; every page
// fits 360 px.
func TestPortalForumInBrowser(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Limits: raised(), HTTPAddr: "127.0.0.1:0"})
	cl := bot.Agents(t, "forum", 3)
	alice, bob, ann := cl[0], cl[1], cl[2] // ann: a person's own IRC account
	aliceID := alice.Hello(`{"name":"Alice Agent"}`)
	bob.Hello(`{"name":"Bob Agent"}`)
	if r := alice.Ask(`PIRCAN/1 OWNER {"account":"` + ann.Account + `"}`); r.Str("status") != "pending" {
		t.Fatalf("OWNER: %s", r.Raw)
	}
	b := newBrowser(t, bot)
	b.signIn(ann)
	b.submit("confirm the binding", chromedp.Click(chromedp.ID("confirm-"+aliceID)))
	annName := "Ann Example"
	_, err := bot.Core().VerifyOwner(t.Context(), pircan.OperatorCaller("operator:ops"), pircan.VerifyOwnerArgs{Account: &ann.Account, Name: &annName})
	must(t, err)

	// The agents speak through the forum's doors (the core, here): alice
	// asks with markup in her body, bob answers, alice proposes the close.
	core := bot.Core()
	ac, err := core.Caller(t.Context(), pircan.FaceParley, alice.Account, "")
	must(t, err)
	bc, err := core.Caller(t.Context(), pircan.FaceParley, bob.Account, "")
	must(t, err)
	lobby, ask, answer := pircan.Key("lobby"), "ask", "answer"
	q := `Which <b>solvent</b>? <script>document.title="owned"</script>` + "\n<img src=x onerror=alert(1)>"
	mainExt := "main"
	open, err := core.OpenThread(t.Context(), ac, pircan.OpenThreadArgs{ID: &lobby, EnvelopeArgs: pircan.EnvelopeArgs{Kind: &ask, Body: &q,
		From: &pircan.FromArgs{Extension: &mainExt}}})
	must(t, err)
	th := pircan.Key(pircan.ThreadKey(open.Thread.ID))
	parent := pircan.Key(pircan.MessageKey(open.Message.ID))
	a := "Acetone, " + strings.Repeat("x", 300) // a long word at 360 px
	ans, err := core.PostMessage(t.Context(), bc, pircan.PostMessageArgs{ID: &th, EnvelopeArgs: pircan.EnvelopeArgs{Kind: &answer, Body: &a, Parent: &parent}})
	must(t, err)
	_, err = core.CloseThread(t.Context(), ac, pircan.ThreadMarkArgs{ID: &th})
	must(t, err)

	// From the main page to the forum: the proposal waits.
	b.open("/owner")
	b.submit("open the forum", chromedp.Click(chromedp.ID("nav-forum")))
	if row := b.text("pending-" + string(th)); !strings.Contains(row, "Which <b>solvent</b>?") || !strings.Contains(row, "closed") {
		t.Fatalf("pending row: %q", row)
	}
	b.text("thread-" + string(th))
	if ext := b.text("extensions"); !strings.Contains(ext, "pircan:"+alice.Account) || !strings.Contains(ext, "main (") {
		t.Fatalf("alice's remembered extensions: %q", ext)
	}
	b.fits("forum")

	b.submit("open the thread", chromedp.Click(chromedp.CSS(`#pending-`+string(th)+` a`)))
	if got := b.text(pircan.MessageKey(open.Message.ID)); !strings.Contains(got, q) {
		t.Fatalf("the question as text: %q", got)
	}
	if !strings.Contains(b.text(pircan.MessageKey(ans.Message.ID)), "Acetone") {
		t.Fatalf("answer: %s", b.html())
	}
	b.noMarkup()
	if s, c := b.text("state"), b.text("confirmed"); s != "closed" || !strings.Contains(c, "not confirmed") {
		t.Fatalf("state %q, %q", s, c)
	}
	b.fits("forum-thread")

	b.submit("confirm", chromedp.Click(chromedp.ID("move-confirm")))
	if f := b.text("flash"); f != "Proposal confirmed." {
		t.Fatalf("flash: %q", f)
	}
	if s, c := b.text("state"), b.text("confirmed"); s != "closed" || c != "confirmed" || b.text("locked") == "" {
		t.Fatalf("after confirm: %q %q", s, c)
	}
	if ev := b.text("events"); !strings.Contains(ev, "confirmed: open → closed") || !strings.Contains(ev, "human:"+annName) {
		t.Fatalf("events: %q", ev)
	}
	b.noMarkup()
	b.fitsAs("forum-thread-closed", false)
	note := "note"
	late := "late"
	if _, err := core.PostMessage(t.Context(), bc, pircan.PostMessageArgs{ID: &th, EnvelopeArgs: pircan.EnvelopeArgs{Kind: &note, Body: &late}}); pircan.AsError(err).Code != pircan.CodeThreadClosed {
		t.Fatalf("a message to a confirmed close: %v", err)
	}

	b.submit("reopen", chromedp.Click(chromedp.ID("move-reopen")))
	if s, o := b.text("state"), b.text("origin"); s != "open" || o != "a human" {
		t.Fatalf("after reopen: %q %q", s, o)
	}
	tt, err := bot.Store().ForumThread(t.Context(), open.Thread.ID)
	must(t, err)
	if tt.State != pircan.StateOpen || tt.StateOrigin != pircan.OriginUser || tt.Proposed != "" {
		t.Fatalf("stored: %+v", tt)
	}
	if ev := b.text("events"); strings.Count(ev, "human:"+annName) != 2 {
		t.Fatalf("events: %q", ev)
	}

	// Ann forbids AI reactions: the thread says so, bob may not write.
	b.submit("forbid AI reactions", chromedp.Click(chromedp.ID("move-forbid-ai")))
	if f := b.text("flash"); !strings.HasPrefix(f, "AI reactions forbidden") {
		t.Fatalf("flash: %q", f)
	}
	if got := b.text("llm-forbidden"); got != "AI reactions forbidden" {
		t.Fatalf("badge: %q", got)
	}
	if ev := b.text("events"); !strings.Contains(ev, "llm_reply_forbidden") || strings.Count(ev, "human:"+annName) != 3 {
		t.Fatalf("events: %q", ev)
	}
	b.fitsAs("forum-thread-no-ai", false)
	if _, err := core.PostMessage(t.Context(), bc, pircan.PostMessageArgs{ID: &th, EnvelopeArgs: pircan.EnvelopeArgs{Kind: &note, Body: &late}}); pircan.AsError(err).Code != pircan.CodeLLMReplyForbidden {
		t.Fatalf("a message where AI reactions are forbidden: %v", err)
	}
	tt, err = bot.Store().ForumThread(t.Context(), open.Thread.ID)
	must(t, err)
	if !tt.LLMForbidden || tt.Messages != 2 {
		t.Fatalf("stored: %+v", tt)
	}
	b.open("/owner/forum")
	if row := b.text("thread-" + string(th)); !strings.Contains(row, "no AI") {
		t.Fatalf("the list's row: %q", row)
	}
	b.fitsAs("forum-no-ai", false)

	// And allows them again: no badge, bob writes.
	b.open("/owner/forum/" + string(th))
	b.submit("allow AI reactions", chromedp.Click(chromedp.ID("move-allow-ai")))
	if f := b.text("flash"); f != "AI reactions allowed again." {
		t.Fatalf("flash: %q", f)
	}
	if strings.Contains(b.html(), `id="llm-forbidden"`) || b.text("move-forbid-ai") != "Forbid AI reactions" {
		t.Fatalf("after allowing: %s", b.html())
	}
	if _, err := core.PostMessage(t.Context(), bc, pircan.PostMessageArgs{ID: &th, EnvelopeArgs: pircan.EnvelopeArgs{Kind: &note, Body: &late}}); err != nil {
		t.Fatalf("a message once allowed: %v", err)
	}
}

// noMarkup fails if an agent's body became an element or ran a script.
func (b *browser) noMarkup() {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelectorAll("main script, main b, main img").length + " " + document.title`))
	if err != nil || !strings.HasPrefix(got, "0 ") || strings.HasSuffix(got, "owned") {
		b.t.Fatalf("a body became markup (%q, %v): %s", got, err, b.html())
	}
}
