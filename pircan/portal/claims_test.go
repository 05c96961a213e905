package portal_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// The claims and access page over a real store: a verified owner sees its
// agents' claims (escaped) and seals one in its agents' thread, not in
// another's; with grant on its account, it reviews open applications.

func TestPortalClaimsAndRequests(t *testing.T) {
	t.Parallel()
	b := newBrowser(t, pircan.DefaultLimits)
	ctx := t.Context()
	alice, carol := b.forumAgent(unique("alice")), b.forumAgent(unique("carol"))
	owner := unique("ann")
	csrf := b.verifiedOwner(alice, owner, "Ann "+unique(""))

	claim := func(c pircan.Caller, board, statement string) pircan.ForumPost {
		e := pircan.EnvelopeArgs{Kind: sp("note"), Body: sp("A finding."), Claims: &[]pircan.ClaimInArgs{{Statement: &statement,
			Evidence: &[]pircan.EvidenceArgs{{Kind: sp("url"), Ref: sp("https://example.org/<x>")}}}}}
		p, err := b.core.OpenThread(ctx, c, pircan.OpenThreadArgs{ID: kp(board), EnvelopeArgs: e})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	mine := claim(alice, "lobby", `<script>alert(1)</script> halves p99`)
	theirs := claim(carol, "lobby", "Carol's claim.")
	// alice also claims in carol's thread: shown (her claim), not sealable there.
	e := pircan.EnvelopeArgs{Kind: sp("note"), Body: sp("Me too."), Claims: &[]pircan.ClaimInArgs{{Statement: sp("Alice in carol's thread.")}}}
	elsewhere, err := b.core.PostMessage(ctx, alice, pircan.PostMessageArgs{ID: kp(pircan.ThreadKey(theirs.Thread.ID)), EnvelopeArgs: e})
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := pircan.ClaimKey(mine.Claims[0].ID), pircan.ClaimKey(elsewhere.Claims[0].ID)

	page := b.do("GET", "/owner/forum/claims", nil)
	if page.status != http.StatusOK || !strings.Contains(page.body, `id="claim-`+c1+`"`) || !strings.Contains(page.body, `id="claim-`+c2+`"`) ||
		strings.Contains(page.body, pircan.ClaimKey(theirs.Claims[0].ID)+`"`) || strings.Contains(page.body, `id="requests"`) {
		t.Fatalf("claims page: %d %s", page.status, page.body)
	}
	if strings.Contains(page.body, "<script>alert") || !strings.Contains(page.body, "&lt;script&gt;alert(1)&lt;/script&gt; halves p99") {
		t.Fatalf("statement not escaped: %s", page.body)
	}
	if list := b.do("GET", "/owner/forum", nil); !strings.Contains(list.body, `href="/owner/forum/claims"`) {
		t.Fatalf("the forum page does not link to the claims: %s", list.body)
	}

	// carol supports c1; the owner seals a refutation: refuted.
	if _, err := b.core.AttestClaim(ctx, carol, pircan.AttestArgs{ID: kp(c1), Verdict: sp("supports")}); err != nil {
		t.Fatal(err)
	}
	got := b.do("POST", "/owner/forum/seal", url.Values{"csrf": {csrf}, "claim": {c1}, "verdict": {"refutes"}})
	if got.status != http.StatusSeeOther || got.header.Get("Location") != "/owner/forum/claims?done=sealed" {
		t.Fatalf("seal: %d %s", got.status, got.body)
	}
	if cl, _ := b.core.ForumClaim(ctx, carol, pircan.ClaimArgs{ID: kp(c1)}); cl.State != pircan.ClaimRefuted {
		t.Fatalf("after the owner's seal: %+v", cl)
	}
	page = b.do("GET", "/owner/forum/claims?done=sealed", nil)
	if !strings.Contains(page.body, `id="state-`+c1+`">refuted<`) || !strings.Contains(page.body, "Your seal is recorded.") {
		t.Fatalf("page after the seal: %s", page.body)
	}
	// Not in carol's thread; not without the CSRF token; not a made-up verdict.
	for _, c := range []struct {
		form url.Values
		want int
	}{
		{url.Values{"csrf": {csrf}, "claim": {c2}, "verdict": {"supports"}}, http.StatusForbidden},
		{url.Values{"csrf": {"x"}, "claim": {c1}, "verdict": {"supports"}}, http.StatusForbidden},
		{url.Values{"csrf": {csrf}, "claim": {c1}, "verdict": {"likes"}}, http.StatusBadRequest},
		{url.Values{"csrf": {csrf}, "claim": {"cl_999999999"}, "verdict": {"supports"}}, http.StatusNotFound},
	} {
		if got := b.do("POST", "/owner/forum/seal", c.form); got.status != c.want {
			t.Errorf("seal %v: %d, want %d: %s", c.form, got.status, c.want, got.body)
		}
	}
	if cl, _ := b.core.ForumClaim(ctx, carol, pircan.ClaimArgs{ID: kp(c2)}); cl.State != pircan.ClaimUnverified || len(cl.Attestations) != 0 {
		t.Fatalf("a refused seal changed %s: %+v", c2, cl)
	}

	// With grant on the owner's account: the open applications, reviewed.
	if _, err := b.core.SetForumRights(ctx, pircan.OperatorCaller("operator:ops"), pircan.RightsArgs{Account: owner, Grant: []string{"grant"}}); err != nil {
		t.Fatal(err)
	}
	app, err := b.core.ApplyForToken(ctx, pircan.TokenRequestArgs{Label: sp("<b>scout</b>"), Purpose: sp("Summaries."), Model: sp("m"),
		Client: sp("c"), Provider: sp("p"), Contact: sp("x@example.org"), Address: "203.0.113." + unique("")[:2]})
	if err != nil {
		t.Fatal(err)
	}
	tr := pircan.RequestKey(app.Request.ID)
	page = b.do("GET", "/owner/forum/claims", nil)
	if !strings.Contains(page.body, `id="request-`+tr+`"`) || !strings.Contains(page.body, "&lt;b&gt;scout&lt;/b&gt;") {
		t.Fatalf("applications: %s", page.body)
	}
	if got := b.do("POST", "/owner/forum/review", url.Values{"csrf": {csrf}, "request": {tr}, "decision": {"rejected"}}); got.status != http.StatusBadRequest {
		t.Fatalf("a rejection without a reason: %d %s", got.status, got.body)
	}
	got = b.do("POST", "/owner/forum/review", url.Values{"csrf": {csrf}, "request": {tr}, "decision": {"approved"}, "lock": {"on"}})
	if got.status != http.StatusSeeOther {
		t.Fatalf("approve: %d %s", got.status, got.body)
	}
	tok, err := b.core.TokenOf(ctx, app.Token.Secret)
	if err != nil || strings.Join(tok.Rights, ",") != "write,pin,lock" {
		t.Fatalf("the applicant's token after the owner's approval: %+v %v", tok, err)
	}
	if page = b.do("GET", "/owner/forum/claims", nil); strings.Contains(page.body, `id="request-`+tr+`"`) {
		t.Fatalf("an approved application is still listed: %s", page.body)
	}
}
