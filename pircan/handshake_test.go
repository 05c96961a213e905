package pircan_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// Every operation of an agent needs one: unidentified callers are
// not_identified, identified ones without an agent not_registered.
func TestOperationsNeedAgent(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ops := map[string]func(context.Context, pircan.Caller) error{
		"POLICY": func(ctx context.Context, c pircan.Caller) error {
			_, err := svc.Policy(ctx, c, pircan.PolicyArgs{})
			return err
		},
		"CONTACT": func(ctx context.Context, c pircan.Caller) error {
			_, err := svc.Contact(ctx, c, pircan.ContactArgs{})
			return err
		},
		"CONTACTS": func(ctx context.Context, c pircan.Caller) error {
			_, err := svc.Contacts(ctx, c, pircan.ContactsArgs{})
			return err
		},
		"ACCEPT": func(ctx context.Context, c pircan.Caller) error {
			_, err := svc.Accept(ctx, c, pircan.DecideArgs{})
			return err
		},
		"DECLINE": func(ctx context.Context, c pircan.Caller) error {
			_, err := svc.Decline(ctx, c, pircan.RequestArgs{})
			return err
		},
		"CANCEL": func(ctx context.Context, c pircan.Caller) error {
			_, err := svc.Cancel(ctx, c, pircan.RequestArgs{})
			return err
		},
		"AGREEMENTS": func(ctx context.Context, c pircan.Caller) error {
			_, err := svc.Agreements(ctx, c, pircan.AgreementsArgs{})
			return err
		},
		"REVOKE": func(ctx context.Context, c pircan.Caller) error {
			_, err := svc.Revoke(ctx, c, pircan.RevokeArgs{})
			return err
		},
		"SEND": func(ctx context.Context, c pircan.Caller) error {
			_, err := svc.Send(ctx, c, pircan.SendArgs{})
			return err
		},
		"INBOX": func(ctx context.Context, c pircan.Caller) error {
			_, err := svc.Inbox(ctx, c, pircan.InboxArgs{})
			return err
		},
		"REPORT": func(ctx context.Context, c pircan.Caller) error {
			_, err := svc.Report(ctx, c, pircan.ReportArgs{})
			return err
		},
		"OWNER": func(ctx context.Context, c pircan.Caller) error {
			_, err := svc.Owner(ctx, c, pircan.OwnerArgs{})
			return err
		},
		"FIND": func(ctx context.Context, c pircan.Caller) error {
			_, err := svc.Find(ctx, c, pircan.FindArgs{})
			return err
		},
		"WHOAMI": func(ctx context.Context, c pircan.Caller) error {
			_, err := svc.WhoAmI(ctx, c, pircan.NoArgs{})
			return err
		},
	}
	g, u := guest(t, svc), unregistered(t, svc)
	for name, op := range ops {
		wantErr(t, name+" unidentified", op(t.Context(), g), pircan.CodeNotIdentified, "")
		wantErr(t, name+" unregistered", op(t.Context(), u), pircan.CodeNotRegistered, "")
	}
	if n := auditCount(t, u.Account); n != 0 {
		t.Errorf("refused calls of an unregistered caller wrote %d audit rows", n)
	}
}

func TestPolicy(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	a := agent(t, svc, pircan.FaceIRC)
	if r, err := svc.Policy(ctx, a, pircan.PolicyArgs{}); err != nil || r.Policy != pircan.PolicyAgentDecides || r.Locked {
		t.Fatalf("default policy: %+v %v", r, err)
	}
	for _, p := range pircan.Policies {
		if r, err := svc.Policy(ctx, a, pircan.PolicyArgs{Policy: sp(p)}); err != nil || r.Policy != p {
			t.Fatalf("set %s: %+v %v", p, r, err)
		}
	}
	before := auditCount(t, a.Account)
	for _, bad := range []string{"whatever", "", "AUTO-ACCEPT"} {
		_, err := svc.Policy(ctx, a, pircan.PolicyArgs{Policy: sp(bad)})
		wantErr(t, "policy "+bad, err, pircan.CodeInvalidArgument, "policy")
	}
	if auditCount(t, a.Account) != before {
		t.Errorf("a refused POLICY changed something")
	}
	// An owner's owner-decides locks it: the agent cannot change it.
	must(t, shared.SetPolicy(ctx, pircan.Actor{AgentID: a.Agent.ID, ByOwner: true}, pircan.PolicyOwnerDecides))
	_, err := svc.Policy(ctx, a, pircan.PolicyArgs{Policy: sp(pircan.PolicyAutoAccept)})
	wantErr(t, "locked", err, pircan.CodeNotAuthorized, "")
	if r, err := svc.Policy(ctx, a, pircan.PolicyArgs{}); err != nil || r.Policy != pircan.PolicyOwnerDecides || !r.Locked {
		t.Fatalf("locked policy: %+v %v", r, err)
	}
}

// outgoing is every request the caller has filed.
func outgoing(t *testing.T, svc *pircan.Service, c pircan.Caller) int {
	t.Helper()
	r, err := svc.Contacts(t.Context(), c, pircan.ContactsArgs{Direction: sp("outgoing"), Status: sp("any")})
	must(t, err)
	return r.Total
}

func TestContactArguments(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	me, other := agent(t, svc, pircan.FaceIRC), agent(t, svc, pircan.FaceIRC)
	to := other.Agent.ID
	purposeMax := pircan.ArgNamed(pircan.ContactArgs{}, "purpose").Text
	ttl := pircan.ArgNamed(pircan.ContactArgs{}, "ttl_days")
	many := make([]string, pircan.MaxScopes+1)
	for i := range many {
		many[i] = "task:s" + strings.Repeat("x", i)
	}
	bad := []struct {
		name  string
		args  pircan.ContactArgs
		code  pircan.Code
		field string
	}{
		{"no to", pircan.ContactArgs{Purpose: sp("x")}, pircan.CodeInvalidArgument, "to"},
		{"bad to", pircan.ContactArgs{To: sp("not-an-id"), Purpose: sp("x")}, pircan.CodeInvalidArgument, "to"},
		{"no purpose", pircan.ContactArgs{To: &to}, pircan.CodeInvalidArgument, "purpose"},
		{"long purpose", pircan.ContactArgs{To: &to, Purpose: sp(strings.Repeat("p", purposeMax+1))}, pircan.CodeTooLong, "purpose"},
		{"blank purpose", pircan.ContactArgs{To: &to, Purpose: sp("   ")}, pircan.CodeEmpty, "purpose"},
		{"control in purpose", pircan.ContactArgs{To: &to, Purpose: sp("a\nb")}, pircan.CodeInvalidArgument, "purpose"},
		{"unknown scope", pircan.ContactArgs{To: &to, Purpose: sp("x"), Scopes: lp("admin")}, pircan.CodeInvalidScope, "scopes"},
		{"empty task", pircan.ContactArgs{To: &to, Purpose: sp("x"), Scopes: lp("task:")}, pircan.CodeInvalidScope, "scopes"},
		{"upper task", pircan.ContactArgs{To: &to, Purpose: sp("x"), Scopes: lp("task:Assess")}, pircan.CodeInvalidScope, "scopes"},
		{"no scopes", pircan.ContactArgs{To: &to, Purpose: sp("x"), Scopes: lp()}, pircan.CodeInvalidScope, "scopes"},
		{"scope twice", pircan.ContactArgs{To: &to, Purpose: sp("x"), Scopes: lp("message", "message")}, pircan.CodeInvalidScope, "scopes"},
		{"too many scopes", pircan.ContactArgs{To: &to, Purpose: sp("x"), Scopes: &many}, pircan.CodeInvalidScope, "scopes"},
		{"ttl low", pircan.ContactArgs{To: &to, Purpose: sp("x"), TTLDays: ip(ttl.Min - 1)}, pircan.CodeInvalidArgument, "ttl_days"},
		{"ttl high", pircan.ContactArgs{To: &to, Purpose: sp("x"), TTLDays: ip(ttl.Max + 1)}, pircan.CodeInvalidArgument, "ttl_days"},
		{"self", pircan.ContactArgs{To: &me.Agent.ID, Purpose: sp("me")}, pircan.CodeSelfContact, ""},
		{"nobody", pircan.ContactArgs{To: sp(noID), Purpose: sp("nobody")}, pircan.CodeUnknownAgent, "to"},
	}
	for _, b := range bad {
		_, err := svc.Contact(ctx, me, b.args)
		wantErr(t, b.name, err, b.code, b.field)
	}
	if n := outgoing(t, svc, me); n != 0 || auditCount(t, me.Account) != 1 {
		t.Fatalf("refused CONTACTs filed %d requests", n)
	}
	// The longest purpose, most scopes and longest ttl fit.
	r, err := svc.Contact(ctx, me, pircan.ContactArgs{To: &to, Purpose: sp(strings.Repeat("p", purposeMax)), Scopes: lp(many[:pircan.MaxScopes]...), TTLDays: ip(ttl.Max)})
	if err != nil || r.Status != "pending" || !pircan.ValidID(r.RequestID) {
		t.Fatalf("CONTACT at the limits: %+v %v", r, err)
	}

	contactsLimit := pircan.ArgNamed(pircan.ContactsArgs{}, "limit")
	for _, b := range []struct {
		name  string
		args  pircan.ContactsArgs
		field string
	}{
		{"direction", pircan.ContactsArgs{Direction: sp("sideways")}, "direction"},
		{"status", pircan.ContactsArgs{Status: sp("open")}, "status"},
		{"limit", pircan.ContactsArgs{PageArgs: pircan.PageArgs{Limit: ip(contactsLimit.Max + 1)}}, "limit"},
		{"offset", pircan.ContactsArgs{PageArgs: pircan.PageArgs{Offset: ip(-1)}}, "offset"},
	} {
		_, err := svc.Contacts(ctx, me, b.args)
		wantErr(t, "CONTACTS "+b.name, err, pircan.CodeInvalidArgument, b.field)
	}
}

func TestContactPolicies(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	me := agent(t, svc, pircan.FaceIRC)
	target := func(policy string) pircan.Caller {
		c := agent(t, svc, pircan.FaceIRC)
		_, err := svc.Policy(ctx, c, pircan.PolicyArgs{Policy: sp(policy)})
		must(t, err)
		return c
	}
	auto, deny, owner := target(pircan.PolicyAutoAccept), target(pircan.PolicyDeny), target(pircan.PolicyOwnerDecides)
	contact := func(to pircan.Caller, scopes ...string) (pircan.ContactResult, error) {
		a := pircan.ContactArgs{To: &to.Agent.ID, Purpose: sp("test")}
		if scopes != nil {
			a.Scopes = &scopes
		}
		return svc.Contact(ctx, me, a)
	}
	r, err := contact(auto)
	if err != nil || r.Status != "accepted" || !pircan.ValidID(r.AgreementID) {
		t.Fatalf("auto-accept, message only: %+v %v", r, err)
	}
	if g, err := svc.Agreements(ctx, auto, pircan.AgreementsArgs{}); err != nil || len(g.Items) != 1 || g.Items[0].AgreementID != r.AgreementID || g.Items[0].Role != "target" {
		t.Fatalf("auto-accepted agreement: %+v %v", g, err)
	}
	if r, err := contact(auto, "task:assess"); err != nil || r.Status != "pending" {
		t.Fatalf("auto-accept never accepts a task scope: %+v %v", r, err)
	}
	if r, err := contact(deny); err != nil || r.Status != "declined" || r.AgreementID != "" {
		t.Fatalf("deny: %+v %v", r, err)
	}
	r, err = contact(owner)
	if err != nil || r.Status != "pending" {
		t.Fatalf("owner-decides: %+v %v", r, err)
	}
	_, err = svc.Accept(ctx, owner, pircan.DecideArgs{RequestID: &r.RequestID})
	wantErr(t, "an owner-decides agent accepts", err, pircan.CodeNotAuthorized, "")
	_, err = svc.Decline(ctx, owner, pircan.RequestArgs{RequestID: &r.RequestID})
	wantErr(t, "an owner-decides agent declines", err, pircan.CodeNotAuthorized, "")

	// The contact limit per hour: refused calls do not count, the deny
	// target declines each at once, with no cooldown.
	for i := outgoing(t, svc, me); i < svc.Limits().ContactsHour; i++ {
		if r, err := contact(deny); err != nil || r.Status != "declined" {
			t.Fatalf("request %d: %+v %v", i+1, r, err)
		}
	}
	_, err = contact(auto, "task:late")
	wantErr(t, "a request over the hourly limit", err, pircan.CodeRateLimited, "")
}

func TestContactDecisions(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	a, b, third := agent(t, svc, pircan.FaceIRC), agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceIRC)
	bID := b.Agent.ID
	r, err := svc.Contact(ctx, a, pircan.ContactArgs{To: &bID, Purpose: sp("Share chemical release data"), Scopes: lp("message", "task:assess"), TTLDays: ip(30)})
	if err != nil || r.Status != "pending" {
		t.Fatalf("CONTACT: %+v %v", r, err)
	}
	req := r.RequestID
	_, err = svc.Contact(ctx, a, pircan.ContactArgs{To: &bID, Purpose: sp("again")})
	wantErr(t, "second pending", err, pircan.CodeDuplicateRequest, "")

	in, err := svc.Contacts(ctx, b, pircan.ContactsArgs{})
	if err != nil || !in.Incoming || in.Total != 1 || len(in.Items) != 1 {
		t.Fatalf("incoming: %+v %v", in, err)
	}
	it := in.Items[0]
	if it.RequestID != req || it.Other.AgentID != a.Agent.ID || it.Purpose != "Share chemical release data" ||
		!slices.Equal(it.Scopes, []string{"message", "task:assess"}) || it.TTLDays != 30 || it.Status != "pending" || it.ExpiresAt.IsZero() {
		t.Fatalf("CONTACTS item: %+v", it)
	}
	if out, err := svc.Contacts(ctx, a, pircan.ContactsArgs{Direction: sp("outgoing")}); err != nil || out.Incoming || out.Total != 1 || out.Items[0].Other.AgentID != bID {
		t.Fatalf("outgoing: %+v %v", out, err)
	}
	if in, _ := svc.Contacts(ctx, a, pircan.ContactsArgs{}); in.Total != 0 {
		t.Fatalf("a has no incoming requests: %+v", in)
	}

	ttl := pircan.ArgNamed(pircan.DecideArgs{}, "ttl_days")
	before := auditCount(t, b.Account)
	for _, c := range []struct {
		name  string
		who   pircan.Caller
		args  pircan.DecideArgs
		code  pircan.Code
		field string
	}{
		{"no id", b, pircan.DecideArgs{}, pircan.CodeInvalidArgument, "request_id"},
		{"bad id", b, pircan.DecideArgs{RequestID: sp("r1")}, pircan.CodeInvalidArgument, "request_id"},
		{"unknown id", b, pircan.DecideArgs{RequestID: sp(noID)}, pircan.CodeNotFound, ""},
		{"requester accepts", a, pircan.DecideArgs{RequestID: &req}, pircan.CodeNotFound, ""},
		{"third party accepts", third, pircan.DecideArgs{RequestID: &req}, pircan.CodeNotFound, ""},
		{"unknown scope", b, pircan.DecideArgs{RequestID: &req, Scopes: lp("root")}, pircan.CodeInvalidScope, "scopes"},
		{"no scopes", b, pircan.DecideArgs{RequestID: &req, Scopes: lp()}, pircan.CodeInvalidScope, "scopes"},
		{"ttl low", b, pircan.DecideArgs{RequestID: &req, TTLDays: ip(ttl.Min - 1)}, pircan.CodeInvalidArgument, "ttl_days"},
		{"ttl high", b, pircan.DecideArgs{RequestID: &req, TTLDays: ip(ttl.Max + 1)}, pircan.CodeInvalidArgument, "ttl_days"},
		{"wider scopes", b, pircan.DecideArgs{RequestID: &req, Scopes: lp("message", "resource:read")}, pircan.CodeInvalidArgument, "scopes"},
		{"longer ttl", b, pircan.DecideArgs{RequestID: &req, TTLDays: ip(31)}, pircan.CodeInvalidArgument, "ttl_days"},
	} {
		_, err := svc.Accept(ctx, c.who, c.args)
		wantErr(t, "ACCEPT "+c.name, err, c.code, c.field)
	}
	_, err = svc.Cancel(ctx, b, pircan.RequestArgs{RequestID: &req})
	wantErr(t, "the target cancels", err, pircan.CodeNotFound, "")
	_, err = svc.Decline(ctx, a, pircan.RequestArgs{RequestID: &req})
	wantErr(t, "the requester declines", err, pircan.CodeNotFound, "")
	if auditCount(t, b.Account) != before {
		t.Fatalf("refused decisions changed something")
	}

	// Narrowed: fewer scopes, a shorter ttl.
	d, err := svc.Accept(ctx, b, pircan.DecideArgs{RequestID: &req, Scopes: lp("message"), TTLDays: ip(7)})
	if err != nil || d.Status != "accepted" || d.RequestID != req || !pircan.ValidID(d.AgreementID) || !slices.Equal(d.Scopes, []string{"message"}) {
		t.Fatalf("ACCEPT: %+v %v", d, err)
	}
	if left := time.Until(d.ExpiresAt); left < 7*24*time.Hour-time.Hour || left > 7*24*time.Hour {
		t.Fatalf("a 7-day agreement ends in %v", left)
	}
	_, err = svc.Accept(ctx, b, pircan.DecideArgs{RequestID: &req})
	wantErr(t, "second ACCEPT", err, pircan.CodeNotPending, "")
	_, err = svc.Cancel(ctx, a, pircan.RequestArgs{RequestID: &req})
	wantErr(t, "CANCEL of an accepted request", err, pircan.CodeNotPending, "")

	// Both see it; message covers both ways.
	g, err := svc.Agreements(ctx, a, pircan.AgreementsArgs{})
	if err != nil || len(g.Items) != 1 || g.Total != 1 {
		t.Fatalf("AGREEMENTS: %+v %v", g, err)
	}
	if x := g.Items[0]; x.AgreementID != d.AgreementID || x.With.AgentID != bID || !slices.Equal(x.With.IRCAccounts, []string{b.Account}) ||
		x.Role != "requester" || x.Status != "active" || !slices.Equal(x.Scopes, []string{"message"}) {
		t.Fatalf("agreement: %+v", x)
	}
	if g, _ := svc.Agreements(ctx, b, pircan.AgreementsArgs{}); len(g.Items) != 1 || g.Items[0].Role != "target" {
		t.Fatalf("target's AGREEMENTS: %+v", g)
	}
	_, err = svc.Contact(ctx, a, pircan.ContactArgs{To: &bID, Purpose: sp("again")})
	wantErr(t, "CONTACT again", err, pircan.CodeAlreadyAgreed, "")
	_, err = svc.Contact(ctx, b, pircan.ContactArgs{To: &a.Agent.ID, Purpose: sp("other way")})
	wantErr(t, "message goes both ways", err, pircan.CodeAlreadyAgreed, "")
	for _, bad := range []pircan.PageArgs{{Limit: ip(0)}, {Limit: ip(pircan.ArgNamed(pircan.AgreementsArgs{}, "limit").Max + 1)}, {Offset: ip(-1)}} {
		_, err := svc.Agreements(ctx, a, pircan.AgreementsArgs{PageArgs: bad})
		if err == nil {
			t.Errorf("AGREEMENTS %+v accepted", bad)
		}
	}

	// REVOKE ends it for both.
	for _, c := range []struct {
		name  string
		who   pircan.Caller
		id    *string
		code  pircan.Code
		field string
	}{
		{"no id", b, nil, pircan.CodeInvalidArgument, "agreement_id"},
		{"bad id", b, sp("x"), pircan.CodeInvalidArgument, "agreement_id"},
		{"unknown", b, sp(noID), pircan.CodeNotFound, ""},
		{"third party", third, &d.AgreementID, pircan.CodeNotFound, ""},
	} {
		_, err := svc.Revoke(ctx, c.who, pircan.RevokeArgs{AgreementID: c.id})
		wantErr(t, "REVOKE "+c.name, err, c.code, c.field)
	}
	if id, err := svc.Revoke(ctx, b, pircan.RevokeArgs{AgreementID: &d.AgreementID}); err != nil || id != d.AgreementID {
		t.Fatalf("REVOKE: %q %v", id, err)
	}
	_, err = svc.Revoke(ctx, a, pircan.RevokeArgs{AgreementID: &d.AgreementID})
	wantErr(t, "second REVOKE", err, pircan.CodeNotActive, "")
	_, err = svc.Send(ctx, a, pircan.SendArgs{To: &bID, Text: sp("still there?")})
	wantErr(t, "SEND after REVOKE", err, pircan.CodeNotAuthorized, "")
	if g, _ := svc.Agreements(ctx, a, pircan.AgreementsArgs{}); len(g.Items) != 0 {
		t.Fatalf("revoked agreement still listed: %+v", g)
	}
	if g, _ := svc.Agreements(ctx, a, pircan.AgreementsArgs{All: bp(true)}); len(g.Items) != 1 || g.Items[0].Status != "revoked" {
		t.Fatalf("AGREEMENTS all: %+v", g)
	}

	// DECLINE and CANCEL, and the cooldown a decline starts.
	r, err = svc.Contact(ctx, a, pircan.ContactArgs{To: &bID, Purpose: sp("once more")})
	must(t, err)
	if d, err := svc.Decline(ctx, b, pircan.RequestArgs{RequestID: &r.RequestID}); err != nil || d.Status != "declined" || d.AgreementID != "" {
		t.Fatalf("DECLINE: %+v %v", d, err)
	}
	_, err = svc.Decline(ctx, b, pircan.RequestArgs{RequestID: &r.RequestID})
	wantErr(t, "second DECLINE", err, pircan.CodeNotPending, "")
	_, err = svc.Contact(ctx, a, pircan.ContactArgs{To: &bID, Purpose: sp("after a decline")})
	wantErr(t, "after a decline", err, pircan.CodeCooldown, "")
	r, err = svc.Contact(ctx, third, pircan.ContactArgs{To: &bID, Purpose: sp("to cancel")})
	must(t, err)
	if d, err := svc.Cancel(ctx, third, pircan.RequestArgs{RequestID: &r.RequestID}); err != nil || d.Status != "cancelled" {
		t.Fatalf("CANCEL: %+v %v", d, err)
	}
	if in, _ := svc.Contacts(ctx, b, pircan.ContactsArgs{Status: sp("cancelled")}); in.Total != 1 || in.Items[0].Status != "cancelled" {
		t.Fatalf("cancelled request: %+v", in)
	}
	if in, _ := svc.Contacts(ctx, b, pircan.ContactsArgs{Status: sp("declined")}); in.Total != 1 {
		t.Fatalf("declined request: %+v", in)
	}
}
