package bot_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/pircan"
)

// LOGIN and LOGOUT over IRC, with the portal driven by a plain HTTP client
// (the browser tests are in portal_test.go).

var (
	codeInPage = regexp.MustCompile(`id="code">([BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4})<`)
	csrfInPage = regexp.MustCompile(`name="csrf" value="([A-Za-z0-9_-]+)"`)
)

// portalClient is one browser: its own cookie jar and User-Agent.
type portalClient struct {
	t    *testing.T
	base string
	ua   string
	c    *http.Client
}

func newPortalClient(t *testing.T, bot *bottest.Bot, ua string) *portalClient {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &portalClient{t: t, base: bot.HTTPURL, ua: ua, c: &http.Client{Jar: jar, Timeout: 10 * time.Second}}
}

func (p *portalClient) do(req *http.Request) (int, string) {
	p.t.Helper()
	req.Header.Set("User-Agent", p.ua)
	resp, err := p.c.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// response is a reply with its headers.
type response struct {
	status int
	header http.Header
	body   string
}

func (p *portalClient) postResp(path, form string) response {
	p.t.Helper()
	req, err := http.NewRequest("POST", p.base+path, strings.NewReader(form))
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", p.ua)
	resp, err := p.c.Do(req)
	if err != nil {
		p.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, string(body)}
}

func (p *portalClient) get(path string) (int, string) {
	p.t.Helper()
	req, err := http.NewRequest("GET", p.base+path, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	return p.do(req)
}

func (p *portalClient) post(path string, form string) (int, string) {
	p.t.Helper()
	req, err := http.NewRequest("POST", p.base+path, strings.NewReader(form))
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return p.do(req)
}

// start opens /owner and asks for a code (the start form's POST); it
// returns the page the POST led to.
func (p *portalClient) start() (int, string) {
	p.t.Helper()
	status, body := p.get("/owner")
	m := csrfInPage.FindStringSubmatch(body)
	if status != 200 || m == nil || !strings.Contains(body, `action="/owner/sign-in"`) {
		p.t.Fatalf("start page: %d %s", status, body)
	}
	return p.post("/owner/sign-in", "csrf="+m[1])
}

// code asks for a sign-in code and reads the one the page shows.
func (p *portalClient) code() string {
	p.t.Helper()
	status, body := p.start()
	m := codeInPage.FindStringSubmatch(body)
	if status != 200 || m == nil {
		p.t.Fatalf("sign-in page: %d %s", status, body)
	}
	return m[1]
}

func TestLoginLogoutOverIRC(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Limits: raised(), HTTPAddr: "127.0.0.1:0"})
	agents := bot.Agents(t, "own", 2)
	owner, nobody := agents[0], agents[1] // nobody has no agent: an owner need not have one
	agentID := owner.Hello("")
	guest := bot.Guest(t, "guest")

	browser := newPortalClient(t, bot, "pircan-test/1.0 (browser one)")
	code := browser.code()
	if status, body := browser.get("/owner"); !strings.Contains(body, code) || status != 200 {
		t.Fatalf("a reload shows the same code: %d %s", status, body)
	}
	if r := guest.Ask(`PIRCAN/1 LOGIN {"code":"` + code + `"}`); r.Code() != "not_identified" {
		t.Fatalf("unidentified LOGIN: %s", r.Raw)
	}
	for _, bad := range []string{`{}`, `{"code":"ABCD-EFGH"}`, `{"code":"BCDF"}`, `{"code":7}`} {
		if r := owner.Ask(`PIRCAN/1 LOGIN ` + bad); r.Code() != "invalid_argument" {
			t.Fatalf("LOGIN %s: %s", bad, r.Raw)
		}
	}
	if r := owner.Ask(`PIRCAN/1 LOGIN {"code":"BBBB-BBBB","id":"w"}`); r.Code() != "not_found" || r.Str("field") != "code" || r.Str("re") != "w" {
		t.Fatalf("wrong code: %s", r.Raw)
	}
	if r := owner.Ask(`PIRCAN/1 WHOAMI`); r.Fields["owner"] != nil {
		t.Fatalf("owner before any sign-in: %s", r.Raw)
	}

	// Typed in lower case without the dash, the code still works.
	r := owner.Ask(`PIRCAN/1 LOGIN {"code":"` + strings.ToLower(strings.ReplaceAll(code, "-", "")) + `","id":"l"}`)
	want := fmt.Sprintf(`PIRCAN/1 LOGIN {"signed_in":true,"account":%q,"browser":"pircan-test/1.0 (browser one)","started_at":`, owner.Account)
	if !strings.HasPrefix(r.Raw, want) || !regexp.MustCompile(`^\d\d:\d\d UTC$`).MatchString(r.Str("started_at")) ||
		r.Str("warning") != pircan.LoginWarning || r.Str("re") != "l" {
		t.Fatalf("LOGIN: %s", r.Raw)
	}
	status, body := browser.get("/owner")
	if status != 200 || !strings.Contains(body, `id="account">`+owner.Account+`<`) || !strings.Contains(body, agentID) {
		t.Fatalf("signed-in page: %d %s", status, body)
	}
	if r := owner.Ask(`PIRCAN/1 LOGIN {"code":"` + code + `"}`); r.Code() != "not_found" {
		t.Fatalf("reused code: %s", r.Raw)
	}
	// WHOAMI shows the owner now that one signed in.
	r = owner.Ask(`PIRCAN/1 WHOAMI`)
	if o, _ := r.Fields["owner"].(map[string]any); o["name"] != owner.Account || o["verification"] != "unverified" {
		t.Fatalf("WHOAMI owner: %s", r.Raw)
	}

	// An account without an agent signs in too; its page lists no agents.
	other := newPortalClient(t, bot, "pircan-test/1.0 (browser two)")
	if r := nobody.Ask(`PIRCAN/1 LOGIN {"code":"` + other.code() + `"}`); r.Verb != "LOGIN" || r.Str("account") != nobody.Account {
		t.Fatalf("LOGIN without an agent: %s", r.Raw)
	}
	if _, body := other.get("/owner"); !strings.Contains(body, `id="account">`+nobody.Account+`<`) || !strings.Contains(body, `id="no-agents"`) {
		t.Fatalf("agentless owner's page: %s", body)
	}

	// LOGOUT ends every session of the account, and only of it.
	second := newPortalClient(t, bot, "pircan-test/1.0 (browser three)")
	owner.Ask(`PIRCAN/1 LOGIN {"code":"` + second.code() + `"}`)
	if r := owner.Ask(`PIRCAN/1 LOGOUT {"id":"o"}`); r.Raw != `PIRCAN/1 LOGOUT {"sessions_ended":2,"re":"o"}` {
		t.Fatalf("LOGOUT: %s", r.Raw)
	}
	if _, body := browser.get("/owner"); !strings.Contains(body, "Your session has ended") {
		t.Fatalf("after LOGOUT: %s", body)
	}
	if _, body := other.get("/owner"); !strings.Contains(body, `id="account">`+nobody.Account+`<`) {
		t.Fatalf("another account's session ended: %s", body)
	}
	if r := owner.Ask(`PIRCAN/1 LOGOUT`); r.Int("sessions_ended") != 0 {
		t.Fatalf("second LOGOUT: %s", r.Raw)
	}
	if r := owner.Ask(`PIRCAN/1 HELP {"verb":"login"}`); r.Str("needs") != "identified" {
		t.Fatalf("HELP LOGIN: %s", r.Raw)
	}
}

func TestLoginAttemptsLimited(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Limits: raised(), HTTPAddr: "127.0.0.1:0"})
	a := bot.Agents(t, "lim", 1)[0]
	browser := newPortalClient(t, bot, "pircan-test/1.0")
	code := browser.code()
	// 10 attempts an hour, wrong ones included (1 wrong + 9 more).
	for i := range 10 {
		if r := a.Ask(`PIRCAN/1 LOGIN {"code":"BBBB-BBBB"}`); r.Code() != "not_found" {
			t.Fatalf("attempt %d: %s", i+1, r.Raw)
		}
	}
	if r := a.Ask(`PIRCAN/1 LOGIN {"code":"` + code + `"}`); r.Code() != "rate_limited" {
		t.Fatalf("11th attempt: %s", r.Raw)
	}
	if _, body := browser.get("/owner"); !strings.Contains(body, code) {
		t.Fatalf("a refused LOGIN signed the browser in: %s", body)
	}
}
