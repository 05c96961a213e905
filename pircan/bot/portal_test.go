package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/pircan"
)

// The owner portal in a real browser: headless Chromium (Debian's
// /usr/bin/chromium; dev/test installs it) driven over the DevTools
// protocol, signed in by LOGIN from real identified IRC clients.
//
// PIRCAN_SCREENSHOTS=1 writes a screenshot of each page to docs/portal-*.png.

const chromiumPath = "/usr/bin/chromium"

// browser is one headless Chromium with a fresh profile: cookies of its own.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
}

func newBrowser(t *testing.T, bot *bottest.Bot) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("no %s (dev/test installs it): %v", chromiumPath, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 860),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1100, 860)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &browser{t: t, ctx: ctx, base: bot.HTTPURL}
}

// do runs steps with a deadline.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("browser: %s: %v\npage: %s", what, err, b.html())
	}
}

// submit runs steps that submit a form, and waits for the next page.
func (b *browser) submit(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("window.pircanOldPage = true")); err != nil {
		b.t.Fatalf("browser: mark page: %v", err)
	}
	b.do(what, steps...)
	for {
		done, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.pircanOldPage === undefined && document.readyState === "complete"`))
		if err == nil && done {
			return
		}
		if ctx.Err() != nil {
			b.t.Fatalf("browser: %s: no new page: %v\npage: %s", what, err, b.html())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (b *browser) open(path string) { b.t.Helper(); b.do("open "+path, chromedp.Navigate(b.base+path)) }

// Phone widths the portal must fit without sideways scrolling.
var phoneWidths = []int64{360, 400}

// fits checks, at the desktop width and at each phone width, that the
// page scrolls no wider than the window; with PIRCAN_SCREENSHOTS=1 it
// saves the page at each width (docs/portal-<name>.png, -<name>-phone.png
// at 360 px). It leaves the desktop width set.
func (b *browser) fits(name string) { b.t.Helper(); b.fitsAs(name, true) }

// fitsAs is fits; shoot false takes no screenshot (a page of test data
// that would not show the docs anything).
func (b *browser) fitsAs(name string, shoot bool) {
	b.t.Helper()
	for _, w := range append(phoneWidths, 1100) {
		b.do(fmt.Sprintf("width %d", w), chromedp.EmulateViewport(w, 860))
		ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
		sizes, err := chromedp.Run(ctx, chromedp.Evaluate[[]int64](`[document.documentElement.scrollWidth, window.innerWidth]`))
		cancel()
		if err != nil {
			b.t.Fatalf("%s at %d px: %v", name, w, err)
		}
		if sizes[0] > sizes[1] {
			b.t.Errorf("%s at %d px scrolls sideways: scrollWidth %d > innerWidth %d", name, w, sizes[0], sizes[1])
		}
		ctx, cancel = context.WithTimeout(b.ctx, 20*time.Second)
		broken, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](brokenWords))
		cancel()
		if err != nil {
			b.t.Fatalf("%s at %d px: %v", name, w, err)
		}
		if len(broken) > 0 {
			b.t.Errorf("%s at %d px breaks words mid-word: %q", name, w, broken)
		}
		ctx, cancel = context.WithTimeout(b.ctx, 20*time.Second)
		unnamed, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](unlabelledCells))
		cancel()
		if err != nil {
			b.t.Fatalf("%s at %d px: %v", name, w, err)
		}
		if len(unnamed) > 0 {
			b.t.Errorf("%s at %d px: table cells without their column's name (header row hidden): %q", name, w, unnamed)
		}
		switch {
		case !shoot:
		case w == 360:
			b.shot(name + "-phone")
		case w == 1100:
			b.shot(name)
		}
	}
}

// brokenWords lists the words of the page that the layout broke across
// lines: a word (between spaces, hyphens and slashes) whose letters sit on
// more than one line. Only a long token (an id, a URL, an 80-character
// name: over 24 characters) may break; a column squeezed until "Address"
// or "End" wraps inside the word fails.
const brokenWords = `(() => {
  const bad = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest("script, style") || el.getClientRects().length === 0) continue;
    const words = /[^\s\-\/\u2014]+/g;
    let m;
    while ((m = words.exec(n.data))) {
      if (m[0].length > 24) continue;
      const r = document.createRange();
      r.setStart(n, m.index);
      r.setEnd(n, m.index + m[0].length);
      const lines = new Set(Array.from(r.getClientRects()).filter(x => x.width > 0).map(x => Math.round(x.bottom)));
      if (lines.size > 1) bad.push(m[0]);
    }
  }
  return bad;
})()`

// unlabelledCells lists the texts of table cells shown without their
// column's name: where a table's header row is hidden (phones), every
// cell with text must show its label itself.
const unlabelledCells = `(() => {
  const bad = [];
  for (const tr of document.querySelectorAll("tr")) {
    if (!tr.querySelector("th") || getComputedStyle(tr).display !== "none") continue;
    for (const td of tr.closest("table").querySelectorAll("td")) {
      if (td.innerText.trim() === "" || td.querySelector("button, input")) continue;
      const label = getComputedStyle(td, "::before").content;
      if (!label || label === "none" || label === "normal") bad.push(td.innerText.trim().slice(0, 40));
    }
  }
  return bad;
})()`

// startSignIn opens /owner, asks for a code with the start form's button
// and returns the code the page shows.
func (b *browser) startSignIn() string {
	b.t.Helper()
	b.open("/owner")
	b.submit("get a code", chromedp.Click(chromedp.ID("get-code")))
	code := b.text("code")
	if _, ok := pircan.NormalizeCode(code); !ok {
		b.t.Fatalf("sign-in page: %s", b.html())
	}
	return code
}

// reloaded waits until the page has reloaded itself (its meta refresh).
func (b *browser) reloaded() {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("window.pircanOldPage = true")); err != nil {
		b.t.Fatalf("browser: mark page: %v", err)
	}
	for {
		done, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.pircanOldPage === undefined && document.readyState === "complete"`))
		if err == nil && done {
			return
		}
		if ctx.Err() != nil {
			b.t.Fatalf("browser: the page did not reload itself: %v\npage: %s", err, b.html())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// text waits for the element with this id and returns its text. A page
// that replaces itself (a meta refresh, a redirect after a form) can drop
// the node between the query and the read: the read is then asked again of
// the new page.
func (b *browser) text(id string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	for {
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID(id)))
		if err == nil {
			return strings.TrimSpace(s)
		}
		if ctx.Err() != nil || !strings.Contains(err.Error(), "No node with given id found") {
			b.t.Fatalf("browser: text of #%s: %v\npage: %s", id, err, b.html())
		}
	}
}

// html is the page's markup, for failure messages.
func (b *browser) html() string {
	ctx, cancel := context.WithTimeout(b.ctx, 3*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("body")))
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return s
}

// shot saves the page as docs/portal-<name>.png (the module's docs/, two
// levels up) when PIRCAN_SCREENSHOTS=1.
func (b *browser) shot(name string) {
	b.t.Helper()
	if os.Getenv("PIRCAN_SCREENSHOTS") != "1" {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "docs", "portal-"+name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// signIn asks for a code, sends LOGIN from agent and waits for the page
// to show the signed-in account. It returns the LOGIN reply.
func (b *browser) signIn(agent *bottest.Agent) bottest.Reply {
	b.t.Helper()
	code := b.startSignIn()
	r := agent.Ask(`PIRCAN/1 LOGIN {"code":"` + code + `"}`)
	if r.Verb != "LOGIN" {
		b.t.Fatalf("LOGIN: %s", r.Raw)
	}
	if got := b.text("account"); got != agent.Account { // the page refreshes itself
		b.t.Fatalf("signed in as %q, want %q", got, agent.Account)
	}
	return r
}

func TestPortalInBrowser(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Limits: raised(), HTTPAddr: "127.0.0.1:0"})
	agents := bot.Agents(t, "web", 2)
	owner, peer := agents[0], agents[1]
	ownerID := owner.Hello(`{"name":"Hazmat Agent","description":"Chemical release assessment"}`)
	peer.Hello(`{"name":"Weather Agent"}`)
	b := newBrowser(t, bot)
	bystander := newBrowser(t, bot) // another browser, waiting with a code of its own

	// Loading /owner starts nothing: it offers a button.
	b.open("/owner")
	if b.text("heading") != "Sign in to the owner portal" {
		t.Fatalf("start page: %s", b.html())
	}
	b.open("/owner")
	if n := waitingSignIns(t, bot); n != 0 {
		t.Fatalf("page loads started %d sign-ins", n)
	}
	b.fits("start")
	code := b.startSignIn()
	if !strings.Contains(b.text("command"), `LOGIN {"code":"`+code+`"}`) {
		t.Fatalf("sign-in page: %s", b.html())
	}
	b.fits("signin")
	// The page refreshes itself, and a reload by hand: the same code.
	b.reloaded()
	if c := b.text("code"); c != code {
		t.Fatalf("after the page refreshed: %s, want %s", c, code)
	}
	b.open("/owner")
	if c := b.text("code"); c != code {
		t.Fatalf("after a reload: %s, want %s", c, code)
	}
	otherCode := bystander.startSignIn()
	if n := waitingSignIns(t, bot); n != 2 {
		t.Fatalf("%d waiting sign-ins, want 2 (one per button press)", n)
	}

	// LOGIN with the code on screen signs in exactly that browser.
	r := owner.Ask(`PIRCAN/1 LOGIN {"code":"` + code + `"}`)
	if r.Str("account") != owner.Account || !strings.Contains(r.Str("browser"), "HeadlessChrome") || r.Fields["signed_in"] != true {
		t.Fatalf("LOGIN: %s", r.Raw)
	}
	if got := b.text("account"); got != owner.Account {
		t.Fatalf("signed in as %q", got)
	}
	if !strings.Contains(b.text("agent-"+ownerID), "Hazmat Agent") {
		t.Fatalf("agent card: %s", b.html())
	}
	bystander.reloaded()
	if c := bystander.text("code"); c != otherCode {
		t.Fatalf("the other browser: code %s, want %s: %s", c, otherCode, bystander.html())
	}

	// The owner sets owner-decides: the agent can no longer change it.
	b.submit("set policy", chromedp.SetValue(chromedp.ID("policy-"+ownerID), pircan.PolicyOwnerDecides),
		chromedp.Click(chromedp.ID("save-policy-"+ownerID)))
	if f := b.text("flash"); f != "Policy saved." {
		t.Fatalf("flash: %q", f)
	}
	if r := owner.Ask(`PIRCAN/1 POLICY {"policy":"auto-accept"}`); r.Code() != "not_authorized" {
		t.Fatalf("agent changes the owner's policy: %s", r.Raw)
	}

	// A request waits for the owner, who accepts it with fewer scopes and a shorter ttl.
	r = peer.Ask(`PIRCAN/1 CONTACT {"to":"` + ownerID + `","purpose":"Share chemical release data","scopes":["message","task:assess"],"ttl_days":30}`)
	if r.Str("status") != "pending" {
		t.Fatalf("CONTACT: %s", r.Raw)
	}
	reqID := r.Str("request_id")
	if n := owner.NextNotify(); n.Str("type") != "contact_request" {
		t.Fatalf("owner's agent: %s", n.Raw)
	}
	if r := owner.Ask(`PIRCAN/1 ACCEPT {"request_id":"` + reqID + `"}`); r.Code() != "not_authorized" {
		t.Fatalf("agent accepts an owner-decides request: %s", r.Raw)
	}
	b.open("/owner")
	if !strings.Contains(b.text("request-"+reqID), "Share chemical release data") {
		t.Fatalf("pending request: %s", b.html())
	}
	b.fits("request")
	accept := "#accept-" + reqID
	b.do("narrow the grant",
		chromedp.Click(chromedp.CSS(accept+` input[value="task:assess"]`)),
		chromedp.SetValue(chromedp.CSS(accept+` input[name="ttl_days"]`), "7"))
	b.submit("accept", chromedp.Click(chromedp.CSS(accept+" button")))
	if f := b.text("flash"); !strings.HasPrefix(f, "Request accepted") {
		t.Fatalf("flash: %q", f)
	}
	b.fits("agents")
	if n := peer.NextNotify(); n.Str("type") != "contact_update" {
		t.Fatalf("requester: %s", n.Raw)
	}
	if n := owner.NextNotify(); n.Str("type") != "agreement_update" {
		t.Fatalf("owner's agent: %s", n.Raw)
	}
	items, _ := peer.AskList(`PIRCAN/1 AGREEMENTS`)
	if len(items) != 1 || fmt.Sprint(items[0].Fields["scopes"]) != "[message]" {
		t.Fatalf("AGREEMENTS: %v", items)
	}
	agreementID := items[0].Str("agreement_id")
	if exp, err := time.Parse(time.RFC3339, items[0].Str("expires_at")); err != nil || time.Until(exp) > 7*24*time.Hour+time.Minute {
		t.Fatalf("expires_at %s: %v", items[0].Str("expires_at"), err)
	}

	// Revoke asks first; Cancel keeps the agreement, the second step ends it.
	if !strings.Contains(b.text("agreement-"+agreementID), "Weather Agent") {
		t.Fatalf("agreement row: %s", b.html())
	}
	b.submit("revoke", chromedp.Click(chromedp.CSS("#revoke-"+agreementID+" button")))
	if h := b.text("heading"); h != "Revoke this agreement?" {
		t.Fatalf("no confirmation: %s", b.html())
	}
	b.fits("revoke-confirm")
	b.submit("cancel", chromedp.Click(chromedp.ID("cancel")))
	if items, _ := peer.AskList(`PIRCAN/1 AGREEMENTS`); len(items) != 1 {
		t.Fatalf("revoked without the second step: %v", items)
	}
	b.submit("revoke", chromedp.Click(chromedp.CSS("#revoke-"+agreementID+" button")))
	b.submit("confirm revoke", chromedp.Click(chromedp.ID("confirm")))
	if f := b.text("flash"); f != "Agreement revoked." {
		t.Fatalf("flash: %q", f)
	}
	if n := peer.NextNotify(); n.Str("type") != "agreement_update" {
		t.Fatalf("peer after revoke: %s", n.Raw)
	}
	if items, _ := peer.AskList(`PIRCAN/1 AGREEMENTS`); len(items) != 0 {
		t.Fatalf("agreement survived: %v", items)
	}

	// Sessions, then sign out.
	b.open("/owner/sessions")
	if !strings.Contains(b.text("sessions"), "this browser") {
		t.Fatalf("sessions page: %s", b.html())
	}
	b.fits("sessions")
	b.open("/owner")
	b.submit("sign out", chromedp.Click(chromedp.ID("sign-out")))
	if h := b.text("heading"); h != "Signed out" {
		t.Fatalf("after sign-out: %q", h)
	}
	b.fits("signed-out")
	// Signed out (the cookie is gone), /owner offers a new code and starts none by itself.
	b.submit("sign in again", chromedp.Click(chromedp.ID("link")))
	if h := b.text("heading"); h != "Sign in to the owner portal" || strings.Contains(b.html(), code) {
		t.Fatalf("after sign-out: %s", b.html())
	}
	if c := b.startSignIn(); c == code {
		t.Fatalf("after sign-out, the old code: %s", c)
	}

	// Every portal action is in the audit log, by the owner's account.
	entries, err := bot.Store().AuditLatest(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		// the portal's own actions, and the changes made from its session
		if strings.HasPrefix(e.Action, "owner.") && !strings.HasPrefix(e.Action, "owner.sign_in.") || strings.Contains(string(e.Details), `"session"`) {
			got = append(got, e.Action)
			if e.ActorAccount != owner.Account {
				t.Errorf("%s by %q", e.Action, e.ActorAccount)
			}
			var d struct {
				ByOwner *bool `json:"by_owner"`
			}
			if err := json.Unmarshal(e.Details, &d); err != nil {
				t.Fatal(err)
			}
			// docs/protocol-notes.md: the change's own row, with by_owner
			// (agreement.create carries the session only)
			if byOwner := e.Action != "owner.sign_in" && e.Action != "owner.sign_out" && e.Action != "agreement.create"; byOwner != (d.ByOwner != nil && *d.ByOwner) {
				t.Errorf("%s: by_owner %v: %s", e.Action, byOwner, e.Details)
			}
		}
	}
	want := []string{"owner.sign_in", "policy.set", "contact.accept", "agreement.create", "agreement.revoke", "owner.sign_out"}
	if !slices.Equal(got, want) {
		t.Fatalf("audit: %v, want %v", got, want)
	}
}

// waitingSignIns counts the sign-ins whose code is still valid.
func waitingSignIns(t *testing.T, bot *bottest.Bot) int {
	t.Helper()
	var n int
	if err := bot.Store().Pool().QueryRow(t.Context(), `SELECT count(*) FROM portal_sessions
		WHERE approved_at IS NULL AND ended_at IS NULL AND created_at > now() - interval '10 minutes'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// An agent names an owner account; the owner confirms in the portal and
// from then on holds the owner powers alone; the agent's own portal view
// is read-only.
func TestPortalOwnerBinding(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Limits: raised(), HTTPAddr: "127.0.0.1:0"})
	cl := bot.Agents(t, "bind", 5)
	agent, second, pushy, peer, alice := cl[0], cl[1], cl[2], cl[3], cl[4] // alice: a person's own IRC account, no agent
	agentID := agent.Hello(`{"name":"Bound Agent"}`)
	secondID := second.Hello(`{"name":"Second Agent"}`)
	pushyID := pushy.Hello(`{"name":"Pushy Agent"}`)
	peer.Hello(`{"name":"Peer Agent"}`)

	if r := agent.Ask(`PIRCAN/1 OWNER`); r.Raw != `PIRCAN/1 OWNER {"account":null,"status":"none"}` {
		t.Fatalf("OWNER before: %s", r.Raw)
	}
	for _, bad := range []struct{ args, code, field string }{
		{`{"account":"` + agent.Account + `"}`, "invalid_argument", "account"},
		{`{"account":"two words"}`, "invalid_argument", "account"},
		{`{"account":""}`, "empty", "account"},
		{`{"account":"alice","clear":true}`, "invalid_argument", "clear"},
		{`{"clear":false}`, "invalid_argument", "clear"},
	} {
		if r := agent.Ask(`PIRCAN/1 OWNER ` + bad.args); r.Code() != bad.code || r.Str("field") != bad.field {
			t.Fatalf("OWNER %s: %s", bad.args, r.Raw)
		}
	}
	for _, a := range []*bottest.Agent{agent, second, pushy} {
		if r := a.Ask(`PIRCAN/1 OWNER {"account":"` + alice.Account + `"}`); r.Str("status") != "pending" || r.Str("account") != alice.Account {
			t.Fatalf("OWNER name: %s", r.Raw)
		}
	}
	if r := agent.Ask(`PIRCAN/1 WHOAMI`); r.Fields["owner"] != nil {
		t.Fatalf("a pending owner shows in WHOAMI: %s", r.Raw)
	}

	// alice signs in with her own account and sees the three proposals.
	b := newBrowser(t, bot)
	b.signIn(alice)
	for _, id := range []string{agentID, secondID, pushyID} {
		b.text("binding-" + id)
	}
	if strings.Contains(b.html(), `id="agent-`) {
		t.Fatalf("an unconfirmed agent is shown as alice's: %s", b.html())
	}
	b.fits("binding")
	b.submit("confirm", chromedp.Click(chromedp.ID("confirm-"+agentID)))
	if f := b.text("flash"); f != "You are now this agent's owner." {
		t.Fatalf("flash: %q", f)
	}
	b.submit("confirm second", chromedp.Click(chromedp.ID("confirm-"+secondID)))
	b.submit("decline", chromedp.Click(chromedp.ID("decline-"+pushyID)))
	b.text("agent-" + agentID)
	b.text("agent-" + secondID) // an owner of several agents sees them all
	if strings.Contains(b.html(), pushyID) {
		t.Fatalf("a declined agent is listed: %s", b.html())
	}
	b.fits("owned")
	if r := pushy.Ask(`PIRCAN/1 OWNER`); r.Str("status") != "declined" {
		t.Fatalf("OWNER after decline: %s", r.Raw)
	}
	if r := pushy.Ask(`PIRCAN/1 OWNER {"account":"` + alice.Account + `"}`); r.Code() != "cooldown" {
		t.Fatalf("asking again after a decline: %s", r.Raw)
	}
	if r := pushy.Ask(`PIRCAN/1 OWNER {"clear":true}`); r.Str("cleared") != alice.Account {
		t.Fatalf("withdraw a declined proposal: %s", r.Raw)
	}

	// Confirmed: WHOAMI and OWNER show alice; the agent cannot leave alone.
	r := agent.Ask(`PIRCAN/1 WHOAMI`)
	if o, _ := r.Fields["owner"].(map[string]any); o["account"] != alice.Account || o["name"] != alice.Account || o["verification"] != "unverified" {
		t.Fatalf("WHOAMI owner: %s", r.Raw)
	}
	if r := agent.Ask(`PIRCAN/1 OWNER`); r.Str("status") != "confirmed" || r.Str("account") != alice.Account {
		t.Fatalf("OWNER confirmed: %s", r.Raw)
	}
	for _, args := range []string{`{"clear":true}`, `{"account":"` + peer.Account + `"}`} {
		if r := agent.Ask(`PIRCAN/1 OWNER ` + args); r.Code() != "not_authorized" {
			t.Fatalf("the agent escapes its owner with %s: %s", args, r.Raw)
		}
	}

	// The agent's own portal session is read-only, and says why.
	own := newBrowser(t, bot)
	own.signIn(agent)
	if ro := own.text("read-only-" + agentID); !strings.Contains(ro, alice.Account) {
		t.Fatalf("read-only notice: %q", ro)
	}
	if strings.Contains(own.html(), `action="/owner/policy"`) {
		t.Fatalf("a policy form on the read-only page: %s", own.html())
	}
	own.fits("read-only")
	// …and the server refuses its forms even when sent by hand.
	c := newPortalClient(t, bot, "pircan-test/1.0")
	if r := agent.Ask(`PIRCAN/1 LOGIN {"code":"` + c.code() + `"}`); r.Verb != "LOGIN" {
		t.Fatal(r.Raw)
	}
	_, body := c.get("/owner")
	m := csrfInPage.FindStringSubmatch(body)
	form := url.Values{"csrf": {m[1]}, "agent_id": {agentID}, "policy": {pircan.PolicyAutoAccept}}
	if status, body := c.post("/owner/policy", form.Encode()); status != 403 || !strings.Contains(body, "Read-only") {
		t.Fatalf("the agent's own session sets the policy: %d %s", status, body)
	}

	// alice locks the policy; only she decides requests.
	b.open("/owner")
	b.submit("set policy", chromedp.SetValue(chromedp.ID("policy-"+agentID), pircan.PolicyOwnerDecides),
		chromedp.Click(chromedp.ID("save-policy-"+agentID)))
	if r := agent.Ask(`PIRCAN/1 POLICY {"policy":"auto-accept"}`); r.Code() != "not_authorized" {
		t.Fatalf("agent changes its owner's policy: %s", r.Raw)
	}
	r = peer.Ask(`PIRCAN/1 CONTACT {"to":"` + agentID + `","purpose":"Swap notes","scopes":["message"]}`)
	reqID := r.Str("request_id")
	own.open("/owner")
	if strings.Contains(own.html(), "accept-"+reqID) {
		t.Fatalf("the read-only page can accept: %s", own.html())
	}
	b.open("/owner")
	b.submit("accept", chromedp.Click(chromedp.CSS("#accept-"+reqID+" button")))
	if f := b.text("flash"); !strings.HasPrefix(f, "Request accepted") {
		t.Fatalf("flash: %q", f)
	}

	// alice releases the agent (after a confirmation): its own account is owner again.
	b.submit("release", chromedp.Click(chromedp.ID("release-"+agentID)))
	if h := b.text("heading"); h != "Release this agent?" {
		t.Fatalf("release confirmation: %s", b.html())
	}
	b.fits("release-confirm")
	b.submit("confirm release", chromedp.Click(chromedp.ID("confirm")))
	if f := b.text("flash"); !strings.HasPrefix(f, "You released the agent") {
		t.Fatalf("flash: %q", f)
	}
	if r := agent.Ask(`PIRCAN/1 OWNER`); r.Str("status") != "none" {
		t.Fatalf("OWNER after release: %s", r.Raw)
	}
	if status, body := c.post("/owner/policy", form.Encode()); status != 200 || !strings.Contains(body, "Policy saved.") {
		t.Fatalf("after release, its own account: %d %s", status, body)
	}

	entries, err := bot.Store().AuditLatest(t.Context(), 200)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, e := range entries {
		if strings.HasPrefix(e.Action, "owner.") && (e.Subject == agentID || e.Subject == pushyID) {
			var d struct{ By string }
			if err := json.Unmarshal(e.Details, &d); err != nil {
				t.Fatal(err)
			}
			step := e.Action + " by " + e.ActorAccount
			if d.By != "" {
				step += " (" + d.By + ")"
			}
			got[e.Subject] = append(got[e.Subject], step)
		}
	}
	want := map[string][]string{
		agentID: {"owner.named by " + agent.Account, "owner.confirmed by " + alice.Account, "owner.cleared by " + alice.Account + " (owner)"},
		pushyID: {"owner.named by " + pushy.Account, "owner.declined by " + alice.Account, "owner.cleared by " + pushy.Account + " (agent)"},
	}
	for id, w := range want {
		if !slices.Equal(got[id], w) {
			t.Errorf("audit of %s: %v, want %v", id, got[id], w)
		}
	}
}

// Long words do not widen a page at phone widths: the longest names
// without a space, a URL in a description, in every place the agents page
// shows them (a binding, the agent's card, a request, an agreement).
func TestPortalLongWords(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Limits: raised(), HTTPAddr: "127.0.0.1:0"})
	cl := bot.Agents(t, "long", 4)
	me, asker, partner, binder := cl[0], cl[1], cl[2], cl[3]
	long := func(c string) string { return strings.Repeat(c, 80) } // HELLO's longest name
	myID := me.Hello(`{"name":"` + long("M") + `","description":"https://example.org/` + strings.Repeat("x", 200) + `"}`)
	asker.Hello(`{"name":"` + long("A") + `"}`)
	partner.Hello(`{"name":"` + long("P") + `"}`)
	binderID := binder.Hello(`{"name":"` + long("B") + `","description":"` + strings.Repeat("y", 250) + `"}`)
	if r := asker.Ask(`PIRCAN/1 CONTACT {"to":"` + myID + `","purpose":"` + strings.Repeat("z", 250) + `"}`); r.Str("status") != "pending" {
		t.Fatalf("CONTACT: %s", r.Raw)
	}
	r := partner.Ask(`PIRCAN/1 CONTACT {"to":"` + myID + `","purpose":"Talk"}`)
	if r := me.Ask(`PIRCAN/1 ACCEPT {"request_id":"` + r.Str("request_id") + `"}`); r.Str("status") != "accepted" {
		t.Fatalf("ACCEPT: %s", r.Raw)
	}
	if r := binder.Ask(`PIRCAN/1 OWNER {"account":"` + me.Account + `"}`); r.Str("status") != "pending" {
		t.Fatalf("OWNER: %s", r.Raw)
	}
	b := newBrowser(t, bot)
	b.signIn(me)
	b.text("binding-" + binderID)
	b.text("agent-" + myID)
	b.fitsAs("long-words", false)
	b.open("/owner/sessions")
	b.fitsAs("long-words-sessions", false)
}

func TestPortalRefusals(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Limits: raised(), HTTPAddr: "127.0.0.1:0"})
	agents := bot.Agents(t, "ref", 2)
	owner, other := agents[0], agents[1]
	ownerID := owner.Hello(`{"name":"Owned Agent"}`)

	t.Run("expired code", func(t *testing.T) {
		b := newBrowser(t, bot)
		code := b.startSignIn()
		if _, err := bot.Store().Pool().Exec(t.Context(),
			"UPDATE portal_sessions SET created_at = now() - interval '10 minutes 1 second' WHERE code = $1", code); err != nil {
			t.Fatal(err)
		}
		if r := owner.Ask(`PIRCAN/1 LOGIN {"code":"` + code + `"}`); r.Code() != "not_found" {
			t.Fatalf("expired code: %s", r.Raw)
		}
		b.open("/owner")
		if h := b.text("heading"); h != "This code has expired" {
			t.Fatalf("expired page: %q", h)
		}
		b.fits("expired")
		if c := b.startSignIn(); c == code {
			t.Fatalf("a new code is the old one: %s", c)
		}
	})

	t.Run("code near its end", func(t *testing.T) {
		// The page refreshing for most of the code's 10 minutes keeps it,
		// and LOGIN with it still signs this browser in.
		b := newBrowser(t, bot)
		code := b.startSignIn()
		if _, err := bot.Store().Pool().Exec(t.Context(),
			"UPDATE portal_sessions SET created_at = now() - make_interval(secs => $2) WHERE code = $1",
			code, (pircan.CodeLifetime - 15*time.Second).Seconds()); err != nil {
			t.Fatal(err)
		}
		b.reloaded()
		if c := b.text("code"); c != code {
			t.Fatalf("after refreshing near the end: %s, want %s", c, code)
		}
		if r := owner.Ask(`PIRCAN/1 LOGIN {"code":"` + code + `"}`); r.Verb != "LOGIN" {
			t.Fatalf("LOGIN near the end: %s", r.Raw)
		}
		if got := b.text("account"); got != owner.Account {
			t.Fatalf("signed in as %q", got)
		}
	})

	t.Run("reused code", func(t *testing.T) {
		b := newBrowser(t, bot)
		code := b.startSignIn()
		if r := owner.Ask(`PIRCAN/1 LOGIN {"code":"` + code + `"}`); r.Verb != "LOGIN" {
			t.Fatal(r.Raw)
		}
		if r := other.Ask(`PIRCAN/1 LOGIN {"code":"` + code + `"}`); r.Code() != "not_found" {
			t.Fatalf("reused code: %s", r.Raw)
		}
		if got := b.text("account"); got != owner.Account {
			t.Fatalf("a reused code moved the browser to %q", got)
		}
	})

	t.Run("another account's code", func(t *testing.T) {
		// The code approved by X signs the browser in as X, never as the
		// owner of the agent whose page someone hoped to open.
		b := newBrowser(t, bot)
		b.signIn(other)
		b.text("no-agents")
		if strings.Contains(b.html(), ownerID) {
			t.Fatalf("X's page shows the owner's agent: %s", b.html())
		}
		b.fits("other-account")
	})

	t.Run("csrf", func(t *testing.T) {
		// The start form: no code without the token in the form and its cookie.
		fresh := newPortalClient(t, bot, "pircan-test/1.0")
		fresh.get("/owner")
		if status, _ := fresh.post("/owner/sign-in", "csrf="+strings.Repeat("x", 43)); status != 403 {
			t.Fatalf("start with a wrong token: %d", status)
		}
		if status, _ := fresh.post("/owner/sign-in", ""); status != 403 {
			t.Fatalf("start without a token: %d", status)
		}

		c := newPortalClient(t, bot, "pircan-test/1.0")
		if r := owner.Ask(`PIRCAN/1 LOGIN {"code":"` + c.code() + `"}`); r.Verb != "LOGIN" {
			t.Fatal(r.Raw)
		}
		_, body := c.get("/owner")
		m := csrfInPage.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no CSRF token in the page: %s", body)
		}
		form := url.Values{"agent_id": {ownerID}, "policy": {pircan.PolicyDeny}}
		for name, token := range map[string]string{"missing": "", "wrong": strings.Repeat("x", len(m[1]))} {
			f := url.Values{}
			for k, v := range form {
				f[k] = v
			}
			if token != "" {
				f.Set("csrf", token)
			}
			if status, body := c.post("/owner/policy", f.Encode()); status != 403 {
				t.Fatalf("%s token: %d %s", name, status, body)
			}
		}
		if p, _, _ := bot.Store().Policy(t.Context(), ownerID); p != pircan.PolicyAgentDecides {
			t.Fatalf("a refused form changed the policy to %s", p)
		}
		// Without the session cookie the right token is refused too.
		stranger := newPortalClient(t, bot, "pircan-test/1.0")
		form.Set("csrf", m[1])
		if status, _ := stranger.post("/owner/policy", form.Encode()); status != 403 {
			t.Fatalf("no session: %d", status)
		}
		if status, body := c.post("/owner/policy", form.Encode()); status != 200 || !strings.Contains(body, "Policy saved.") {
			t.Fatalf("with the token: %d %s", status, body)
		}
	})
}

// The sign-in limit counts codes asked for (button presses) and not used,
// per address: page loads count nothing, a code used to sign in frees its
// place, and the refusal says when to retry.
func TestPortalSignInStartsLimited(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0"})
	a := bot.Agents(t, "lim", 1)[0]
	loader := newPortalClient(t, bot, "pircan-test/1.0")
	for range 3 * pircan.DefaultLimits.SignInStartsHour {
		if status, _ := loader.get("/owner"); status != 200 {
			t.Fatalf("page load: %d", status)
		}
	}
	var codes []string
	for range pircan.DefaultLimits.SignInStartsHour {
		codes = append(codes, newPortalClient(t, bot, "pircan-test/1.0").code())
	}
	b := newBrowser(t, bot)
	b.open("/owner")
	b.submit("get a code", chromedp.Click(chromedp.ID("get-code"))) // the 11th unused code this hour
	if h := b.text("heading"); h != "Too many sign-in codes" || !strings.Contains(b.text("text"), "Try again after") {
		t.Fatalf("11th start: %s", b.html())
	}
	b.fits("too-many")
	c := newPortalClient(t, bot, "pircan-test/1.0")
	c.get("/owner")
	m := csrfInPage.FindStringSubmatch(func() string { _, body := c.get("/owner"); return body }())
	resp := c.postResp("/owner/sign-in", "csrf="+m[1])
	if resp.status != 429 {
		t.Fatalf("12th start: %d", resp.status)
	}
	if secs, err := strconv.Atoi(resp.header.Get("Retry-After")); err != nil || secs < 3500 || secs > 3601 {
		t.Fatalf("Retry-After %q", resp.header.Get("Retry-After"))
	}
	// A code used to sign in no longer counts against the address.
	if r := a.Ask(`PIRCAN/1 LOGIN {"code":"` + codes[0] + `"}`); r.Verb != "LOGIN" {
		t.Fatal(r.Raw)
	}
	if _, body := c.start(); !codeInPage.MatchString(body) {
		t.Fatalf("after a code was used: %s", body)
	}
}
