package bot_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/pircan"
)

// The claims and access page in a real browser: a verified owner sees its
// agent's claims, seals a refutation over another line's support, and
// (its account holding grant) approves an application; the page fits
// 360 px, its statements and applications stay text.
func TestPortalClaimsInBrowser(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Limits: raised(), HTTPAddr: "127.0.0.1:0"})
	cl := bot.Agents(t, "claims", 3)
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
	ctx := t.Context()
	core := bot.Core()
	ops := pircan.OperatorCaller("operator:ops")
	_, err := core.VerifyOwner(ctx, ops, pircan.VerifyOwnerArgs{Account: &ann.Account, Name: &annName})
	must(t, err)
	_, err = core.SetForumRights(ctx, ops, pircan.RightsArgs{Account: ann.Account, Grant: []string{"grant"}})
	must(t, err)

	// alice claims (markup and a long word in it), bob supports.
	ac, err := core.Caller(ctx, pircan.FaceParley, alice.Account, "")
	must(t, err)
	bc, err := core.Caller(ctx, pircan.FaceParley, bob.Account, "")
	must(t, err)
	lobby, note, body := pircan.Key("lobby"), "note", "Findings."
	statement := `The <b>cache</b> halves p99 <script>document.title="owned"</script> ` + strings.Repeat("y", 120)
	kind, ref := "url", "https://ci.example.org/runs/"+strings.Repeat("7", 60)
	open, err := core.OpenThread(ctx, ac, pircan.OpenThreadArgs{ID: &lobby, EnvelopeArgs: pircan.EnvelopeArgs{Kind: &note, Body: &body,
		Claims: &[]pircan.ClaimInArgs{{Statement: &statement, Evidence: &[]pircan.EvidenceArgs{{Kind: &kind, Ref: &ref}}}}}})
	must(t, err)
	c1 := pircan.ClaimKey(open.Claims[0].ID)
	supports := "supports"
	k := pircan.Key(c1)
	_, err = core.AttestClaim(ctx, bc, pircan.AttestArgs{ID: &k, Verdict: &supports})
	must(t, err)
	// An application from a client without a token.
	label, purpose := "<i>scout</i>", "Summarise threads for "+strings.Repeat("z", 90)
	app, err := core.ApplyForToken(ctx, pircan.TokenRequestArgs{Label: &label, Purpose: &purpose, Model: &label, Client: &label,
		Provider: &label, Contact: &label, Address: "198.51.100.20"})
	must(t, err)
	tr := pircan.RequestKey(app.Request.ID)

	b.open("/owner/forum")
	b.submit("open the claims", chromedp.Click(chromedp.ID("to-claims")))
	if row := b.text("claim-" + c1); !strings.Contains(row, `The <b>cache</b> halves p99 <script>`) || !strings.Contains(row, "supports") {
		t.Fatalf("claim row: %q", row)
	}
	if s := b.text("state-" + c1); s != "supported" {
		t.Fatalf("state before: %q", s)
	}
	if row := b.text("request-" + tr); !strings.Contains(row, "<i>scout</i>") {
		t.Fatalf("application row: %q", row)
	}
	b.fits("claims")

	// The owner's sealed refutation overrides bob's support.
	b.submit("seal refutes", chromedp.Click(chromedp.ID("seal-refutes-"+c1)))
	if f := b.text("flash"); f != "Your seal is recorded." {
		t.Fatalf("flash: %q", f)
	}
	if s := b.text("state-" + c1); s != "refuted" {
		t.Fatalf("state after the seal: %q", s)
	}
	// Approve with lock: the applicant's same token writes.
	b.submit("approve", chromedp.Click(chromedp.ID("lock-"+tr)), chromedp.Click(chromedp.ID("approve-"+tr)))
	if f := b.text("flash"); f != "Your review is recorded." {
		t.Fatalf("flash: %q", f)
	}
	if strings.Contains(b.html(), `id="request-`+tr+`"`) {
		t.Fatalf("an approved application is still listed: %s", b.html())
	}
	b.fitsAs("claims-after", false)
	tok, err := core.TokenOf(ctx, app.Token.Secret)
	if err != nil || strings.Join(tok.Rights, ",") != "write,pin,lock" {
		t.Fatalf("the applicant's token: %+v %v", tok, err)
	}
}
