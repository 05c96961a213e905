package server_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
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

// text waits for the element with this id and returns its text.
func (b *browser) text(id string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID(id)))
	if err != nil {
		b.t.Fatalf("browser: text of #%s: %v\npage: %s", id, err, b.html())
	}
	return strings.TrimSpace(s)
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

// shot saves the page as docs/portal-<name>.png when PIRCAN_SCREENSHOTS=1.
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
	if err := os.WriteFile(filepath.Join("..", "docs", "portal-"+name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// signIn opens /owner, reads the code, sends LOGIN from agent and waits
// for the page to show the signed-in account. It returns the LOGIN reply.
func (b *browser) signIn(agent *bottest.Agent) bottest.Reply {
	b.t.Helper()
	b.open("/owner")
	code := b.text("code")
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
	peerID := peer.Hello(`{"name":"Weather Agent"}`)
	b := newBrowser(t, bot)

	// Unsigned-in, /owner shows a code and waits.
	b.open("/owner")
	code := b.text("code")
	if _, ok := pircan.NormalizeCode(code); !ok || !strings.Contains(b.text("command"), `LOGIN {"code":"`+code+`"}`) {
		t.Fatalf("sign-in page: %s", b.html())
	}
	b.shot("signin")
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
	accept := "#accept-" + reqID
	b.do("narrow the grant",
		chromedp.Click(chromedp.CSS(accept+` input[value="task:assess"]`)),
		chromedp.SetValue(chromedp.CSS(accept+` input[name="ttl_days"]`), "7"))
	b.shot("request")
	b.submit("accept", chromedp.Click(chromedp.CSS(accept+" button")))
	if f := b.text("flash"); !strings.HasPrefix(f, "Request accepted") {
		t.Fatalf("flash: %q", f)
	}
	b.shot("agents")
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

	// The owner revokes the agreement.
	if !strings.Contains(b.text("agreement-"+agreementID), "Weather Agent") {
		t.Fatalf("agreement row: %s", b.html())
	}
	b.submit("revoke", chromedp.Click(chromedp.CSS("#revoke-"+agreementID+" button")))
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
	b.shot("sessions")
	b.open("/owner")
	b.submit("sign out", chromedp.Click(chromedp.ID("sign-out")))
	if h := b.text("heading"); h != "Signed out" {
		t.Fatalf("after sign-out: %q", h)
	}
	b.shot("signed-out")
	// The cookie is gone: /owner starts a new sign-in.
	b.open("/owner")
	if c := b.text("code"); c == code {
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
		if strings.HasPrefix(e.Action, "owner.") && e.Action != "owner.sign_in.start" || strings.Contains(string(e.Details), `"session"`) {
			got = append(got, e.Action)
			if e.ActorAccount != owner.Account {
				t.Errorf("%s by %q", e.Action, e.ActorAccount)
			}
		}
	}
	want := []string{"owner.sign_in", "policy.set", "contact.accept", "agreement.create", "agreement.revoke", "owner.sign_out"}
	if !slices.Equal(got, want) {
		t.Fatalf("audit: %v, want %v", got, want)
	}
	_ = peerID
}

func TestPortalRefusals(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Limits: raised(), HTTPAddr: "127.0.0.1:0"})
	agents := bot.Agents(t, "ref", 2)
	owner, other := agents[0], agents[1]
	ownerID := owner.Hello(`{"name":"Owned Agent"}`)

	t.Run("expired code", func(t *testing.T) {
		b := newBrowser(t, bot)
		b.open("/owner")
		code := b.text("code")
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
		b.shot("expired")
	})

	t.Run("reused code", func(t *testing.T) {
		b := newBrowser(t, bot)
		b.open("/owner")
		code := b.text("code")
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
		b.shot("other-account")
	})

	t.Run("csrf", func(t *testing.T) {
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

func TestPortalSignInStartsLimited(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0"})
	for i := range pircan.DefaultLimits.SignInStartsHour {
		c := newPortalClient(t, bot, "pircan-test/1.0")
		c.code() // each fresh client (no cookie) starts one
		_ = i
	}
	b := newBrowser(t, bot)
	b.open("/owner") // the 11th start from this address this hour
	if h := b.text("heading"); h != "Too many sign-ins" {
		t.Fatalf("11th start: %q", h)
	}
	b.shot("too-many")
	c := newPortalClient(t, bot, "pircan-test/1.0")
	if status, _ := c.get("/owner"); status != 429 {
		t.Fatalf("12th start: %d", status)
	}
}
