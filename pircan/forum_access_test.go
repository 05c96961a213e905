package pircan_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
)

// Access by application and feature requests over the real store.

func application(addr string) pircan.TokenRequestArgs {
	return pircan.TokenRequestArgs{Label: sp("my agent"), Purpose: sp("Review pull requests.\nNothing else."), Model: sp("m-1"),
		Client: sp("c/1.0"), Provider: sp("p"), Contact: sp("ops@example.org"), Address: addr}
}

// applicant is the caller a new application's token stands for, as the
// forum's face makes it (the token's account and rights).
func applicant(t *testing.T, svc *pircan.Service, secret string) pircan.Caller {
	t.Helper()
	tok, err := svc.TokenOf(t.Context(), secret)
	must(t, err)
	c := caller(t, svc, pircan.FaceParley, tok.Account)
	c.TokenRights = tok.Rights
	return c
}

func TestTokenApplication(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	ops := pircan.OperatorCaller("ops")
	addr := "198.51.100." + unique("")[:2]
	reviewer, stranger := agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley)
	_, err := svc.SetForumRights(ctx, ops, pircan.RightsArgs{Account: reviewer.Account, Grant: []string{"grant"}})
	must(t, err)

	for _, field := range []string{"label", "purpose", "model", "client", "provider", "contact"} {
		a := application(addr)
		switch field {
		case "label":
			a.Label = nil
		case "purpose":
			a.Purpose = sp(strings.Repeat("p", 1001))
		case "model":
			a.Model = sp("m\x07")
		case "client":
			a.Client = sp(" ")
		case "provider":
			a.Provider = sp(strings.Repeat("p", 201))
		case "contact":
			a.Contact = nil
		}
		_, err := svc.ApplyForToken(ctx, a)
		wantErr(t, "application without a good "+field, err, pircan.CodeInvalidBody, field)
	}

	app, err := svc.ApplyForToken(ctx, application(addr))
	must(t, err)
	req := app.Request
	if req.State != pircan.RequestPending || !strings.Contains(req.Account, ".") /* no IRC nick holds a '.' */ || !slices.Equal(app.Token.Rights, []string{"read"}) ||
		!strings.HasPrefix(app.Token.Secret, pircan.TokenPrefix) || req.TokenID != app.Token.ID {
		t.Fatalf("application: %+v", app)
	}
	me := applicant(t, svc, app.Token.Secret)
	id := kp(pircan.RequestKey(req.ID))
	// Read-only: it reads, it does not write.
	_, err = svc.ForumBoards(ctx, me, pircan.ForumPageArgs{})
	must(t, err)
	_, err = svc.OpenThread(ctx, me, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: envelope("ask", "Hello?")})
	wantErr(t, "read-only applicant writes", err, pircan.CodeTokenReadOnly, "")

	// The applicant polls its own; another agent may not; a reviewer may.
	got, err := svc.TokenRequest(ctx, me, pircan.TokenRequestIDArgs{ID: id})
	must(t, err)
	if got.State != pircan.RequestPending || got.Contact != "ops@example.org" {
		t.Fatalf("polled: %+v", got)
	}
	_, err = svc.TokenRequest(ctx, stranger, pircan.TokenRequestIDArgs{ID: id})
	wantErr(t, "another's request", err, pircan.CodeRequestForbidden, "")
	_, err = svc.TokenRequest(ctx, me, pircan.TokenRequestIDArgs{ID: kp("tr_999999999")})
	wantErr(t, "no request", err, pircan.CodeRequestNotFound, "")
	open, err := svc.TokenRequests(ctx, reviewer, pircan.RequestsArgs{})
	must(t, err)
	if !slices.ContainsFunc(open.Items, func(r pircan.TokenRequest) bool { return r.ID == req.ID }) {
		t.Fatalf("the reviewer's open requests lack %d: %+v", req.ID, open)
	}
	mine, err := svc.TokenRequests(ctx, me, pircan.RequestsArgs{})
	must(t, err)
	if mine.Total != 1 || mine.Items[0].ID != req.ID {
		t.Fatalf("the applicant's list: %+v", mine)
	}

	// Review: not without grant, never verify or grant; in_review, then approved with lock.
	review := func(c pircan.Caller, decision string, f func(*pircan.ReviewArgs)) (pircan.TokenRequest, error) {
		a := pircan.ReviewArgs{ID: id, Decision: &decision}
		if f != nil {
			f(&a)
		}
		return svc.ReviewTokenRequest(ctx, c, a)
	}
	_, err = review(stranger, "approved", nil)
	wantErr(t, "review without grant", err, pircan.CodeTokenRightMissing, "right")
	_, err = review(reviewer, "approved", func(a *pircan.ReviewArgs) { a.Rights = lp("write", "verify") })
	wantErr(t, "approve verify", err, pircan.CodeInvalidBody, "rights")
	_, err = review(reviewer, "approved", func(a *pircan.ReviewArgs) { a.Rights = lp("grant") })
	wantErr(t, "approve grant", err, pircan.CodeInvalidBody, "rights")
	_, err = review(reviewer, "maybe", nil)
	wantErr(t, "unknown decision", err, pircan.CodeInvalidBody, "decision")
	r, err := review(reviewer, "in_review", nil)
	must(t, err)
	if r.State != pircan.RequestInReview || r.Reviewer != "pircan:"+reviewer.Account {
		t.Fatalf("in review: %+v", r)
	}
	r, err = review(reviewer, "approved", func(a *pircan.ReviewArgs) { a.Rights = lp("lock") })
	must(t, err)
	if r.State != pircan.RequestApproved || !slices.Equal(r.Rights, []string{"write", "pin", "lock"}) {
		t.Fatalf("approved: %+v", r)
	}
	// The same token now writes.
	me = applicant(t, svc, app.Token.Secret)
	if rights, _ := svc.CallerRights(ctx, me); !slices.Equal(rights, []string{"write", "pin", "lock"}) {
		t.Fatalf("upgraded rights: %v", rights)
	}
	_, err = svc.OpenThread(ctx, me, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: envelope("ask", "Hello?")})
	must(t, err)
	_, err = review(reviewer, "rejected", func(a *pircan.ReviewArgs) { a.Reason = sp("late") })
	wantErr(t, "review a decided request", err, pircan.CodeRequestDecided, "")
	_, err = svc.WithdrawTokenRequest(ctx, me, pircan.TokenRequestIDArgs{ID: id})
	wantErr(t, "withdraw a decided request", err, pircan.CodeRequestDecided, "")

	// A rejection (with its reason) leaves the token read-only.
	app2, err := svc.ApplyForToken(ctx, application(addr))
	must(t, err)
	id = kp(pircan.RequestKey(app2.Request.ID))
	_, err = review(reviewer, "rejected", nil)
	wantErr(t, "reject without a reason", err, pircan.CodeInvalidBody, "reason")
	_, err = review(reviewer, "deferred", func(a *pircan.ReviewArgs) { a.Rights = lp("write") })
	wantErr(t, "rights on a deferral", err, pircan.CodeInvalidBody, "rights")
	_, err = review(ops, "deferred", nil)
	must(t, err)
	r, err = review(ops, "rejected", func(a *pircan.ReviewArgs) { a.Reason = sp("No contact we can reach.") })
	must(t, err)
	if r.State != pircan.RequestRejected || r.Reason != "No contact we can reach." || r.Reviewer != "human:ops" {
		t.Fatalf("rejected: %+v", r)
	}
	me2 := applicant(t, svc, app2.Token.Secret)
	if got, _ := svc.TokenRequest(ctx, me2, pircan.TokenRequestIDArgs{ID: id}); got.State != pircan.RequestRejected || got.Reason == "" {
		t.Fatalf("the applicant reads its rejection: %+v", got)
	}
	_, err = svc.OpenThread(ctx, me2, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: envelope("ask", "Hello?")})
	wantErr(t, "rejected applicant writes", err, pircan.CodeTokenReadOnly, "")

	// Withdrawal: the applicant's own, open request only.
	app3, err := svc.ApplyForToken(ctx, application(addr))
	must(t, err)
	id = kp(pircan.RequestKey(app3.Request.ID))
	_, err = svc.WithdrawTokenRequest(ctx, stranger, pircan.TokenRequestIDArgs{ID: id})
	wantErr(t, "withdraw another's", err, pircan.CodeRequestForbidden, "")
	me3 := applicant(t, svc, app3.Token.Secret)
	r, err = svc.WithdrawTokenRequest(ctx, me3, pircan.TokenRequestIDArgs{ID: id})
	must(t, err)
	if r.State != pircan.RequestWithdrawn {
		t.Fatalf("withdrawn: %+v", r)
	}
	_, err = svc.WithdrawTokenRequest(ctx, me3, pircan.TokenRequestIDArgs{ID: kp("tr_999999999")})
	wantErr(t, "withdraw no request", err, pircan.CodeRequestNotFound, "")

	// Never one's own: an applicant that came to hold grant (another
	// token, an operator's rights) does not review its application.
	app4, err := svc.ApplyForToken(ctx, application("2001:db8:"+unique("")[:4]+"::1"))
	must(t, err)
	_, err = svc.SetForumRights(ctx, ops, pircan.RightsArgs{Account: app4.Request.Account, Grant: []string{"grant"}})
	must(t, err)
	self := caller(t, svc, pircan.FaceParley, app4.Request.Account)
	id = kp(pircan.RequestKey(app4.Request.ID))
	_, err = review(self, "approved", nil)
	wantErr(t, "review one's own", err, pircan.CodeRequestForbidden, "")

	// The audit log holds each application and each decision.
	var n int
	must(t, shared.Pool().QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE action = 'forum.token_requested' AND subject = ANY($1)`,
		[]string{pircan.RequestKey(req.ID), pircan.RequestKey(app2.Request.ID), pircan.RequestKey(app3.Request.ID)}).Scan(&n))
	if n != 3 {
		t.Fatalf("application audit rows: %d", n)
	}
}

func TestTokenApplicationLimits(t *testing.T) {
	t.Parallel()
	l := sharedLimits()
	l.ForumApplicationsAddressHour, l.ForumApplicationsHour = 2, 3
	st := freshStore(t)
	svc := pircan.NewService(st, pircan.Config{Limits: l}, zerolog.Nop())
	ctx := t.Context()
	for i, c := range []struct {
		addr string
		ok   bool
	}{
		{"2001:db8:1:1::1", true},
		{"2001:db8:1:1::2", true}, // the same /64
		{"2001:db8:1:1:ffff::9", false},
		{"192.0.2.1", true},
		{"192.0.2.2", false}, // network-wide
	} {
		_, err := svc.ApplyForToken(ctx, application(c.addr))
		if c.ok {
			must(t, err)
			continue
		}
		wantErr(t, "application "+string(rune('0'+i)), err, pircan.CodeRateLimited, "")
	}
	// retry_after is until the oldest counted row leaves the hour: the
	// first application, backdated 55 minutes, is the oldest of both counts.
	if _, err := st.Pool().Exec(ctx, "UPDATE forum_token_requests SET created_at = now() - interval '55 minutes' WHERE id = (SELECT min(id) FROM forum_token_requests)"); err != nil {
		t.Fatal(err)
	}
	_, err := svc.ApplyForToken(ctx, application("2001:db8:1:1::3"))
	wantRetryAfter(t, "per address", err, 300)
	_, err = svc.ApplyForToken(ctx, application("192.0.2.3"))
	wantRetryAfter(t, "network-wide", err, 300)
}

func TestFeatureRequests(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	ops := pircan.OperatorCaller("ops")
	alice, bob, gina := agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley)
	_, err := svc.SetForumRights(ctx, ops, pircan.RightsArgs{Account: gina.Account, Grant: []string{"grant"}})
	must(t, err)
	f, err := svc.AddFeature(ctx, alice, pircan.FeatureArgs{Title: sp("Image attachments"), Body: sp("For screenshots.\nPNG is enough.")})
	must(t, err)
	if f.Status != pircan.FeatureOpen || f.ID == 0 {
		t.Fatalf("filed: %+v", f)
	}
	var action string
	must(t, shared.Pool().QueryRow(ctx, `SELECT action FROM audit_log WHERE subject = $1 AND actor_account = $2`,
		pircan.FeatureKey(f.ID), alice.Account).Scan(&action))
	if action != "forum.feature_requested" {
		t.Fatalf("audit action %q", action)
	}
	readOnly := bob
	readOnly.TokenRights = []string{"read"}
	_, err = svc.AddFeature(ctx, readOnly, pircan.FeatureArgs{Title: sp("x"), Body: sp("y")})
	wantErr(t, "read-only feature", err, pircan.CodeTokenReadOnly, "")
	_, err = svc.AddFeature(ctx, bob, pircan.FeatureArgs{Title: sp(strings.Repeat("t", 121)), Body: sp("y")})
	wantErr(t, "long title", err, pircan.CodeInvalidBody, "title")
	_, err = svc.AddFeature(ctx, bob, pircan.FeatureArgs{Title: sp("t")})
	wantErr(t, "no body", err, pircan.CodeInvalidBody, "body")

	own, err := svc.Features(ctx, alice, pircan.FeaturesArgs{})
	must(t, err)
	if own.Total != 1 || own.Items[0].ID != f.ID || own.Items[0].Body == "" {
		t.Fatalf("alice's own: %+v", own)
	}
	if none, _ := svc.Features(ctx, bob, pircan.FeaturesArgs{}); none.Total != 0 {
		t.Fatalf("bob sees another's: %+v", none)
	}
	all, err := svc.Features(ctx, gina, pircan.FeaturesArgs{Status: sp("open")})
	must(t, err)
	if !slices.ContainsFunc(all.Items, func(x pircan.Feature) bool { return x.ID == f.ID }) {
		t.Fatalf("a grant holder sees all: %+v", all)
	}
	set := func(c pircan.Caller, id int64, status string) (pircan.Feature, error) {
		return svc.SetFeatureStatus(ctx, c, pircan.FeatureStatusArgs{ID: kp(pircan.FeatureKey(id)), Status: &status})
	}
	_, err = set(alice, f.ID, "accepted")
	wantErr(t, "the author decides", err, pircan.CodeTokenRightMissing, "right")
	_, err = set(gina, f.ID, "shipped")
	wantErr(t, "unknown status", err, pircan.CodeInvalidBody, "status")
	_, err = set(gina, 999999999, "done")
	wantErr(t, "no feature", err, pircan.CodeNotFound, "")
	d, err := set(gina, f.ID, "accepted")
	must(t, err)
	if d.Status != "accepted" || d.DecidedBy != "pircan:"+gina.Account {
		t.Fatalf("accepted: %+v", d)
	}
	d, err = set(ops, f.ID, "done")
	must(t, err)
	if d.Status != "done" || d.DecidedBy != "human:ops" {
		t.Fatalf("done: %+v", d)
	}
	counts, err := shared.FeatureCounts(ctx)
	must(t, err)
	if counts["done"] < 1 {
		t.Fatalf("counts: %v", counts)
	}
}
