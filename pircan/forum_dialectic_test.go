package pircan_test

import (
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// The dialectic profile over the real store: claims asserted, supported,
// refuted across threads, sealed, refined; every refusal of the profile.

func claimOf(statement string, ev ...pircan.EvidenceArgs) pircan.ClaimInArgs {
	return pircan.ClaimInArgs{Statement: sp(statement), Evidence: &ev}
}

func ev(kind, ref string) pircan.EvidenceArgs {
	return pircan.EvidenceArgs{Kind: sp(kind), Ref: sp(ref)}
}

// attestArgs attest claim id with verdict.
func attestArgs(id int64, verdict string) pircan.AttestArgs {
	return pircan.AttestArgs{ID: kp(pircan.ClaimKey(id)), Verdict: sp(verdict)}
}

func refuteOf(body string, claims []int64, evidence ...pircan.EvidenceArgs) pircan.EnvelopeArgs {
	e := envelope("refute", body)
	keys := []pircan.Key{}
	for _, c := range claims {
		keys = append(keys, pircan.Key(pircan.ClaimKey(c)))
	}
	e.Refutes = &keys
	if evidence != nil {
		e.Evidence = &evidence
	}
	return e
}

func TestClaimsProofOverVotes(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	ops := pircan.OperatorCaller("ops")
	alice, bob, carol, vera := agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley),
		agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley)
	_, err := svc.SetForumRights(ctx, ops, pircan.RightsArgs{Account: vera.Account, Grant: []string{"verify"}})
	must(t, err)

	// alice asserts two claims with evidence.
	e := envelope("note", "Two findings.")
	e.Claims = &[]pircan.ClaimInArgs{
		claimOf("The cache halves p99.", ev("commit", "abc123"), ev("log", "https://logs/1")),
		claimOf("The index is unused.", ev("reproducer", "EXPLAIN …")),
	}
	open, err := svc.OpenThread(ctx, alice, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: e})
	must(t, err)
	if len(open.Claims) != 2 || open.Claims[0].State != pircan.ClaimUnverified || open.Claims[0].MessageID != open.Message.ID ||
		len(open.Claims[0].Evidence) != 2 || open.Claims[0].Evidence[0].Kind != "commit" {
		t.Fatalf("claims made: %+v", open.Claims)
	}
	c1, c2 := open.Claims[0].ID, open.Claims[1].ID
	th := pircan.ThreadKey(open.Thread.ID)

	// The author's own support is not counted; another line's is.
	cl, err := svc.AttestClaim(ctx, alice, attestArgs(c1, "supports"))
	must(t, err)
	if cl.State != pircan.ClaimUnverified {
		t.Fatalf("own support: %s", cl.State)
	}
	cl, err = svc.AttestClaim(ctx, bob, attestArgs(c1, "supports"))
	must(t, err)
	if cl.State != pircan.ClaimSupported || len(cl.Attestations) != 2 {
		t.Fatalf("bob supports: %+v", cl)
	}

	// carol refutes c1 from another thread, with evidence: an unsealed
	// refutation decides nothing, and awaits a reply like any refute.
	other, err := svc.OpenThread(ctx, carol, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: envelope("note", "Elsewhere.")})
	must(t, err)
	r, err := svc.PostMessage(ctx, carol, pircan.PostMessageArgs{ID: kp(pircan.ThreadKey(other.Thread.ID)),
		EnvelopeArgs: refuteOf("Not on our hardware.", []int64{c1}, ev("url", "https://bench/42"))})
	must(t, err)
	if len(r.Refuted) != 1 || r.Refuted[0].State != pircan.ClaimSupported || !r.Thread.Awaiting {
		t.Fatalf("carol's refute: %+v", r)
	}

	// Sealing needs verify (or a human).
	seal := attestArgs(c1, "refutes")
	seal.Seal = bp(true)
	_, err = svc.AttestClaim(ctx, carol, seal)
	wantErr(t, "seal without verify", err, pircan.CodeVerifyRightMissing, "")
	seal.Note = sp("Reproduced the regression.")
	seal.Evidence = &[]pircan.EvidenceArgs{ev("reproducer", "go test -bench Cache")}
	cl, err = svc.AttestClaim(ctx, vera, seal)
	must(t, err)
	if cl.State != pircan.ClaimRefuted {
		t.Fatalf("sealed refutation: %s", cl.State)
	}
	// Whatever the support: a human's sealed support, bob again.
	cl, err = svc.SealClaim(ctx, ops, sealArgs(c1, "supports"))
	must(t, err)
	if cl.State != pircan.ClaimRefuted {
		t.Fatalf("support after a sealed refutation: %s", cl.State)
	}
	// bob changes his mind: his support is replaced, and kept as history.
	_, err = svc.AttestClaim(ctx, bob, attestArgs(c1, "inconclusive"))
	must(t, err)
	got, err := svc.ForumClaim(ctx, bob, pircan.ClaimArgs{ID: kp(pircan.ClaimKey(c1))})
	must(t, err)
	lines := map[string]string{}
	for _, a := range got.Attestations {
		if _, dup := lines[a.Line]; dup {
			t.Fatalf("two current attestations of %s", a.Line)
		}
		lines[a.Line] = a.Verdict
	}
	if got.State != pircan.ClaimRefuted || len(got.Attestations) != 5 || len(got.History) != 6 ||
		lines[pircan.FoldAccount(bob.Account)] != "inconclusive" || lines["human:ops"] != "supports" {
		t.Fatalf("c1 after all: %s %d current %d history %v", got.State, len(got.Attestations), len(got.History), lines)
	}
	var fromMessage bool
	for _, a := range got.Attestations {
		fromMessage = fromMessage || (a.Message == r.Message.ID && a.Verdict == "refutes" && len(a.Evidence) == 1)
	}
	if !fromMessage {
		t.Fatalf("carol's refute is not her attestation: %+v", got.Attestations)
	}

	// A refine by its author that relates to c2 and states a new claim
	// supersedes it; attesting it then is claim_superseded.
	ref := envelope("refine", "Sharper.")
	ref.RelatesTo = &[]pircan.Key{pircan.Key(pircan.ClaimKey(c2))}
	ref.Claims = &[]pircan.ClaimInArgs{claimOf("The index is unused by queries older than v2.", ev("note", "see plan"))}
	fine, err := svc.PostMessage(ctx, alice, pircan.PostMessageArgs{ID: kp(th), EnvelopeArgs: ref})
	must(t, err)
	old, err := svc.ForumClaim(ctx, bob, pircan.ClaimArgs{ID: kp(pircan.ClaimKey(c2))})
	must(t, err)
	if old.State != pircan.ClaimSuperseded || old.SupersededBy != fine.Claims[0].ID {
		t.Fatalf("refined: %+v", old)
	}
	_, err = svc.AttestClaim(ctx, bob, attestArgs(c2, "supports"))
	wantErr(t, "attest a superseded claim", err, pircan.CodeClaimSuperseded, "")
	_, err = svc.PostMessage(ctx, carol, pircan.PostMessageArgs{ID: kp(th), EnvelopeArgs: refuteOf("No.", []int64{c2}, ev("note", "n"))})
	wantErr(t, "refute a superseded claim", err, pircan.CodeClaimSuperseded, "")
	// bob's refine relating to alice's new claim supersedes nothing.
	ref.RelatesTo = &[]pircan.Key{pircan.Key(pircan.ClaimKey(fine.Claims[0].ID))}
	_, err = svc.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: kp(th), EnvelopeArgs: ref})
	must(t, err)
	if n, _ := svc.ForumClaim(ctx, bob, pircan.ClaimArgs{ID: kp(pircan.ClaimKey(fine.Claims[0].ID))}); n.State != pircan.ClaimUnverified {
		t.Fatalf("another's refine superseded: %+v", n)
	}

	// The thread's claims, in order, with their current attestations.
	list, err := svc.ThreadClaims(ctx, carol, pircan.ThreadListArgs{ID: kp(th)})
	must(t, err)
	if list.Total != 4 || len(list.Items) != 4 || list.Items[0].ID != c1 || list.Items[0].State != pircan.ClaimRefuted ||
		len(list.Items[0].Attestations) != 5 || list.Items[1].State != pircan.ClaimSuperseded {
		t.Fatalf("thread claims: %+v", list)
	}

	// A confirmed closed thread takes no attestation.
	_, err = svc.CloseThread(ctx, ops, pircan.ThreadMarkArgs{ID: kp(th)})
	must(t, err)
	_, err = svc.AttestClaim(ctx, bob, attestArgs(fine.Claims[0].ID, "supports"))
	wantErr(t, "attest in a closed thread", err, pircan.CodeThreadClosed, "")
}

func TestClaimsRefusals(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	alice, bob := agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley)
	e := envelope("note", "One claim.")
	e.Claims = &[]pircan.ClaimInArgs{claimOf("s", ev("url", "https://x"))}
	open, err := svc.OpenThread(ctx, alice, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: e})
	must(t, err)
	c1 := open.Claims[0].ID
	th := kp(pircan.ThreadKey(open.Thread.ID))
	post := func(e pircan.EnvelopeArgs) error {
		_, err := svc.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: th, EnvelopeArgs: e})
		return err
	}
	withClaims := func(cs ...pircan.ClaimInArgs) pircan.EnvelopeArgs {
		e := envelope("note", "c")
		e.Claims = &cs
		return e
	}
	many := func(n int, c pircan.ClaimInArgs) []pircan.ClaimInArgs {
		out := make([]pircan.ClaimInArgs, n)
		for i := range out {
			out[i] = c
		}
		return out
	}
	evs := make([]pircan.EvidenceArgs, 17)
	for i := range evs {
		evs[i] = ev("hash", "sha256:x")
	}
	noteWithRefutes := envelope("note", "x")
	noteWithRefutes.Refutes = &[]pircan.Key{pircan.Key(pircan.ClaimKey(c1))}
	noRefutes := envelope("refute", "x")
	noRefutes.Evidence = &[]pircan.EvidenceArgs{ev("url", "u")}
	readOnly := bob
	readOnly.TokenRights = []string{pircan.RightRead}
	before := auditCount(t, alice.Account) + auditCount(t, bob.Account)
	for _, c := range []struct {
		name  string
		err   error
		code  pircan.Code
		field string
	}{
		{"eleven claims", post(withClaims(many(11, claimOf("s"))...)), pircan.CodeInvalidBody, "claims"},
		{"no statement", post(withClaims(pircan.ClaimInArgs{})), pircan.CodeInvalidBody, "claims[0].statement"},
		{"501 code points", post(withClaims(claimOf(strings.Repeat("ü", 501)))), pircan.CodeInvalidBody, "claims[0].statement"},
		{"control characters", post(withClaims(claimOf("a\x1b[31m"))), pircan.CodeInvalidBody, "claims[0].statement"},
		{"seventeen evidence", post(withClaims(claimOf("s", evs...))), pircan.CodeInvalidBody, "claims[0].evidence"},
		{"unknown kind", post(withClaims(claimOf("s", ev("vibe", "x")))), pircan.CodeInvalidBody, "claims[0].evidence[0].kind"},
		{"ref of 2001", post(withClaims(claimOf("s", ev("url", strings.Repeat("u", 2001))))), pircan.CodeInvalidBody, "claims[0].evidence[0].ref"},
		{"no ref", post(withClaims(claimOf("s", pircan.EvidenceArgs{Kind: sp("url")}))), pircan.CodeInvalidBody, "claims[0].evidence[0].ref"},
		{"refutes on a note", post(noteWithRefutes), pircan.CodeInvalidBody, "refutes"},
		{"refute without refutes", post(noRefutes), pircan.CodeInvalidBody, "refutes"},
		{"refute without evidence", post(refuteOf("no", []int64{c1})), pircan.CodeEvidenceRequired, ""},
		{"refute of no claim", post(refuteOf("no", []int64{999999999}, ev("url", "u"))), pircan.CodeClaimNotFound, ""},
		{"refutes a thread key", post(func() pircan.EnvelopeArgs {
			e := refuteOf("no", nil, ev("url", "u"))
			e.Refutes = &[]pircan.Key{"th_1"}
			return e
		}()), pircan.CodeInvalidBody, "refutes"},
		{"read-only claims", func() error {
			_, err := svc.PostMessage(ctx, readOnly, pircan.PostMessageArgs{ID: th, EnvelopeArgs: withClaims(claimOf("s"))})
			return err
		}(), pircan.CodeTokenReadOnly, ""},
	} {
		wantErr(t, c.name, c.err, c.code, c.field)
	}
	_, err = svc.ForumClaim(ctx, bob, pircan.ClaimArgs{ID: kp("cl_999999999")})
	wantErr(t, "no claim", err, pircan.CodeClaimNotFound, "")
	_, err = svc.ForumClaim(ctx, bob, pircan.ClaimArgs{ID: kp("msg_1")})
	wantErr(t, "not a claim key", err, pircan.CodeInvalidBody, "id")
	_, err = svc.AttestClaim(ctx, bob, attestArgs(999999999, "supports"))
	wantErr(t, "attest no claim", err, pircan.CodeClaimNotFound, "")
	_, err = svc.AttestClaim(ctx, bob, attestArgs(c1, "agrees"))
	wantErr(t, "unknown verdict", err, pircan.CodeInvalidBody, "verdict")
	_, err = svc.AttestClaim(ctx, readOnly, attestArgs(c1, "supports"))
	wantErr(t, "read-only attests", err, pircan.CodeTokenReadOnly, "")
	_, err = svc.SealClaim(ctx, bob, sealArgs(c1, "supports"))
	wantErr(t, "an agent's human seal", err, pircan.CodeUserSessionRequired, "")
	_, err = svc.ThreadClaims(ctx, bob, pircan.ThreadListArgs{ID: kp("th_999999999")})
	wantErr(t, "claims of no thread", err, pircan.CodeThreadNotFound, "")
	if n := auditCount(t, alice.Account) + auditCount(t, bob.Account); n != before {
		t.Fatalf("refusals changed something: %d audit rows, %d before", n, before)
	}
	// A refute whose one claim is missing stores nothing at all.
	if l, _ := svc.ThreadClaims(ctx, bob, pircan.ThreadListArgs{ID: th}); l.Total != 1 {
		t.Fatalf("claims after refusals: %+v", l)
	}
}

// Racing attestations of one line on one claim, and racing refutes naming
// two claims in both orders: each line keeps one current attestation, the
// rest is history, and no transaction deadlocks.
func TestClaimsRacing(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	alice, bob := agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley)
	refuters := []pircan.Caller{agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley)}
	e := envelope("note", "Two claims.")
	e.Claims = &[]pircan.ClaimInArgs{claimOf("one"), claimOf("two")}
	open, err := svc.OpenThread(ctx, alice, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: e})
	must(t, err)
	c1, c2 := open.Claims[0].ID, open.Claims[1].ID
	other, err := svc.OpenThread(ctx, bob, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: envelope("note", "Elsewhere.")})
	must(t, err)
	// Refutes by two lines (two line locks) posted to two threads (two
	// thread locks), naming the claims in opposite orders.
	threads := []*pircan.Key{kp(pircan.ThreadKey(open.Thread.ID)), kp(pircan.ThreadKey(other.Thread.ID))}
	const n = 8
	errs := make(chan error, 3*n)
	for i := range n {
		verdict := []string{"supports", "refutes", "inconclusive"}[i%3]
		go func() { _, err := svc.AttestClaim(ctx, bob, attestArgs(c1, verdict)); errs <- err }()
		order := []int64{c1, c2}
		if i%2 == 1 {
			order = []int64{c2, c1}
		}
		go func() {
			_, err := svc.PostMessage(ctx, refuters[i%2], pircan.PostMessageArgs{ID: threads[i%2], EnvelopeArgs: refuteOf("No.", order, ev("url", "u"))})
			errs <- err
		}()
		go func() { _, err := svc.AttestClaim(ctx, alice, attestArgs(c2, "supports")); errs <- err }()
	}
	for range 3 * n {
		must(t, <-errs)
	}
	for _, id := range []int64{c1, c2} {
		cl, err := svc.ForumClaim(ctx, bob, pircan.ClaimArgs{ID: kp(pircan.ClaimKey(id))})
		must(t, err)
		per := map[string]int{}
		for _, a := range cl.Attestations {
			per[a.Line]++
		}
		for line, k := range per {
			if k != 1 {
				t.Fatalf("%s: %d current attestations of %s", pircan.ClaimKey(id), k, line)
			}
		}
		want := 2 * n // the refuters' and bob's or alice's
		if len(cl.History) != want || len(per) != 3 {
			t.Fatalf("%s: %d history rows (want %d), current by %v", pircan.ClaimKey(id), len(cl.History), want, per)
		}
	}
}

// sealArgs are a human's seal of claim id.
func sealArgs(id int64, verdict string) pircan.SealArgs {
	k := pircan.Key(pircan.ClaimKey(id))
	return pircan.SealArgs{ID: &k, Verdict: &verdict}
}
