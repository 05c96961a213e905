package portal_test

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/storetest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/portal"
	"github.com/creatimus/pircan/store"
)

// The portal's own tests: its handler over a real store, driven by
// net/http/httptest (pircan/bot/portal_test.go drives it with Chromium).

var shared *store.Store

func TestMain(m *testing.M) { os.Exit(storetest.Main(m, &shared)) }

func unique(prefix string) string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// browser is one browser at the portal: its cookies, and each answer.
type browser struct {
	t       *testing.T
	h       http.Handler
	core    *pircan.Service
	addr    string
	cookies map[string]string
}

type answer struct {
	status int
	header http.Header
	body   string
}

func newBrowser(t *testing.T, l pircan.Limits) *browser {
	core := pircan.NewService(shared, pircan.Config{Limits: l}, zerolog.Nop())
	return &browser{t: t, core: core, h: portal.New(core, portal.Config{BotNick: "PIRCAN", Log: zerolog.Nop()}),
		addr: "[2001:db8::" + unique("")[:4] + "]:4000", cookies: map[string]string{}}
}

func (b *browser) do(method, path string, form url.Values, headers ...string) answer {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, "http://portal.test"+path, body)
	r.RemoteAddr = b.addr
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	for k, v := range b.cookies {
		r.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	w := httptest.NewRecorder()
	b.h.ServeHTTP(w, r)
	res := w.Result()
	for _, c := range res.Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c.Value
		}
	}
	return answer{status: res.StatusCode, header: res.Header, body: w.Body.String()}
}

var (
	headingRe = regexp.MustCompile(`<h1 id="heading">([^<]*)</h1>`)
	csrfRe    = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	codeRe    = regexp.MustCompile(`id="code">([A-Z-]+)<`)
)

func find(t *testing.T, re *regexp.Regexp, body string) string {
	t.Helper()
	m := re.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no %s in:\n%s", re, body)
	}
	return m[1]
}

// signIn gets a code as the browser and approves it with LOGIN from
// account, as IRC would; it returns the signed-in page's CSRF token.
func (b *browser) signIn(account string) string {
	b.t.Helper()
	start := b.do("GET", "/owner", nil)
	if a := b.do("POST", "/owner/sign-in", url.Values{"csrf": {find(b.t, csrfRe, start.body)}}); a.status != http.StatusSeeOther {
		b.t.Fatalf("sign-in start: %d %s", a.status, a.body)
	}
	if len(b.cookies[portal.CookieName]) != 43 {
		b.t.Fatalf("session cookie %q", b.cookies[portal.CookieName])
	}
	code := find(b.t, codeRe, b.do("GET", "/owner", nil).body)
	irc, err := b.core.Caller(b.t.Context(), pircan.FaceIRC, account, account)
	if err != nil {
		b.t.Fatal(err)
	}
	if _, err := b.core.Login(b.t.Context(), irc, pircan.LoginArgs{Code: &code}); err != nil {
		b.t.Fatal(err)
	}
	page := b.do("GET", "/owner", nil)
	if page.status != http.StatusOK || !strings.Contains(page.body, account) {
		b.t.Fatalf("signed-in page: %d %s", page.status, page.body)
	}
	return find(b.t, csrfRe, page.body)
}

func (b *browser) agent(account string) pircan.Agent {
	b.t.Helper()
	c, err := b.core.Caller(b.t.Context(), pircan.FaceIRC, account, account)
	if err != nil {
		b.t.Fatal(err)
	}
	name := "Portal test agent"
	r, err := b.core.Hello(b.t.Context(), c, pircan.HelloArgs{Name: &name})
	if err != nil {
		b.t.Fatal(err)
	}
	return r.Agent
}

func (b *browser) policy(agentID string) string {
	b.t.Helper()
	p, _, err := shared.Policy(b.t.Context(), agentID)
	if err != nil {
		b.t.Fatal(err)
	}
	return p
}

func TestPortalSignInAndPolicy(t *testing.T) {
	t.Parallel()
	b := newBrowser(t, pircan.DefaultLimits)
	account := unique("owner")
	a := b.agent(account)
	csrf := b.signIn(account)

	if got := b.do("POST", "/owner/policy", url.Values{"csrf": {csrf}, "agent_id": {a.ID}, "policy": {pircan.PolicyDeny}}); got.status != http.StatusSeeOther || got.header.Get("Location") != "/owner?done=policy" {
		t.Fatalf("set policy: %d %v", got.status, got.header)
	}
	if p := b.policy(a.ID); p != pircan.PolicyDeny {
		t.Fatalf("policy %q", p)
	}
	if got := b.do("GET", "/owner?done=policy", nil); !strings.Contains(got.body, "Policy saved.") {
		t.Fatalf("no flash: %s", got.body)
	}
	// The core's refusals, with the portal's heading and status.
	got := b.do("POST", "/owner/policy", url.Values{"csrf": {csrf}, "agent_id": {a.ID}, "policy": {"maybe"}})
	if got.status != http.StatusBadRequest || find(t, headingRe, got.body) != "Not done" {
		t.Fatalf("bad policy: %d %s", got.status, got.body)
	}
	other := b.agent(unique("other"))
	got = b.do("POST", "/owner/policy", url.Values{"csrf": {csrf}, "agent_id": {other.ID}, "policy": {pircan.PolicyAutoAccept}})
	if got.status != http.StatusNotFound || !strings.Contains(got.body, "No such agent") {
		t.Fatalf("another's agent: %d %s", got.status, got.body)
	}
	if p := b.policy(other.ID); p == pircan.PolicyAutoAccept {
		t.Fatal("another account's agent changed")
	}

	// Signing out ends the session: the cookie goes and the same form is refused.
	if got := b.do("POST", "/owner/sign-out", url.Values{"csrf": {csrf}}); got.status != http.StatusSeeOther || got.header.Get("Location") != "/owner/signed-out" {
		t.Fatalf("sign out: %d %v", got.status, got.header)
	}
	if _, ok := b.cookies[portal.CookieName]; ok {
		t.Fatal("session cookie kept after sign-out")
	}
}

// wrong is token with its first character changed.
func wrong(token string) string {
	if token[0] == 'x' {
		return "y" + token[1:]
	}
	return "x" + token[1:]
}

// Forms from another site are refused before anything runs; so are forms
// with a wrong CSRF token from this one.
func TestPortalRefusesForgedForms(t *testing.T) {
	t.Parallel()
	b := newBrowser(t, pircan.DefaultLimits)
	account := unique("owner")
	a := b.agent(account)
	csrf := b.signIn(account)
	for _, c := range []struct {
		name    string
		form    url.Values
		headers []string
	}{
		{"cross-site", url.Values{"csrf": {csrf}, "agent_id": {a.ID}, "policy": {pircan.PolicyDeny}}, []string{"Sec-Fetch-Site", "cross-site"}},
		{"other origin", url.Values{"csrf": {csrf}, "agent_id": {a.ID}, "policy": {pircan.PolicyDeny}}, []string{"Origin", "https://evil.example"}},
		{"wrong token", url.Values{"csrf": {wrong(csrf)}, "agent_id": {a.ID}, "policy": {pircan.PolicyDeny}}, nil},
		{"no token", url.Values{"agent_id": {a.ID}, "policy": {pircan.PolicyDeny}}, nil},
	} {
		got := b.do("POST", "/owner/policy", c.form, c.headers...)
		if got.status != http.StatusForbidden || find(t, headingRe, got.body) != "Forbidden" {
			t.Errorf("%s: %d %s", c.name, got.status, got.body)
		}
	}
	if p := b.policy(a.ID); p != pircan.PolicyAgentDecides {
		t.Fatalf("a refused form changed the policy to %q", p)
	}
	// A sign-in start from another site starts nothing.
	fresh := newBrowser(t, pircan.DefaultLimits)
	start := fresh.do("GET", "/owner", nil)
	got := fresh.do("POST", "/owner/sign-in", url.Values{"csrf": {find(t, csrfRe, start.body)}}, "Sec-Fetch-Site", "cross-site")
	if _, ok := fresh.cookies[portal.CookieName]; got.status != http.StatusForbidden || ok {
		t.Fatalf("cross-site sign-in start: %d, cookie %v", got.status, ok)
	}
}

// Over SignInStartsHour unused codes from one address, the start is
// refused in the core's words, with Retry-After rounded up.
func TestPortalSignInStartsLimited(t *testing.T) {
	t.Parallel()
	l := pircan.DefaultLimits
	l.SignInStartsHour = 2
	addr := newBrowser(t, l).addr // every browser of this test at one address
	for i := range l.SignInStartsHour + 1 {
		fresh := newBrowser(t, l)
		fresh.addr = addr
		start := fresh.do("GET", "/owner", nil)
		got := fresh.do("POST", "/owner/sign-in", url.Values{"csrf": {find(t, csrfRe, start.body)}})
		if i < l.SignInStartsHour {
			if got.status != http.StatusSeeOther {
				t.Fatalf("start %d: %d %s", i, got.status, got.body)
			}
			continue
		}
		secs, err := strconv.Atoi(got.header.Get("Retry-After"))
		if got.status != http.StatusTooManyRequests || find(t, headingRe, got.body) != "Too many sign-in codes" ||
			!strings.Contains(got.body, "This address asked for 2 sign-in codes") || err != nil || secs < 3500 || secs > 3600 {
			t.Fatalf("start over the limit: %d Retry-After %q %s", got.status, got.header.Get("Retry-After"), got.body)
		}
		if _, ok := fresh.cookies[portal.CookieName]; ok {
			t.Fatal("a refused start set a session cookie")
		}
	}
}

func TestPortalSecurityHeaders(t *testing.T) {
	t.Parallel()
	b := newBrowser(t, pircan.DefaultLimits)
	got := b.do("GET", "/owner/nowhere", nil)
	if got.status != http.StatusNotFound || got.header.Get("X-Frame-Options") != "DENY" || got.header.Get("Cache-Control") != "no-store" ||
		!strings.Contains(got.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Fatalf("%d %v", got.status, got.header)
	}
	if got := b.do("GET", "/owner/sessions", nil); got.status != http.StatusSeeOther {
		t.Fatalf("sessions signed out: %d", got.status)
	}
}
