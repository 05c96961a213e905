package pircan_test

import (
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// signIn starts a portal sign-in as a browser would and returns the
// session waiting with its code, and the browser's cookie secret.
func signIn(t *testing.T, svc *pircan.Service, ua string) (pircan.PortalSession, string) {
	t.Helper()
	st, err := svc.StartSignIn(t.Context(), pircan.OwnerCaller(pircan.PortalSession{}), pircan.SignInArgs{Address: unique("addr"), UserAgent: ua})
	if s := st.Session; err != nil || !s.Waiting || s.Code == "" || len(st.Secret) != 43 || len(s.CSRFToken) != 43 {
		t.Fatalf("start sign-in: %+v %v", st, err)
	}
	return st.Session, st.Secret
}

func TestLoginLogout(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	owner := agent(t, svc, pircan.FaceIRC)
	nobody := unregistered(t, svc) // an owner need not have an agent
	s, secret := signIn(t, svc, "pircan-test/1.0 (browser one)")

	_, err := svc.Login(ctx, guest(t, svc), pircan.LoginArgs{Code: &s.Code})
	wantErr(t, "unidentified LOGIN", err, pircan.CodeNotIdentified, "")
	_, err = svc.Logout(ctx, guest(t, svc), pircan.NoArgs{})
	wantErr(t, "unidentified LOGOUT", err, pircan.CodeNotIdentified, "")
	for _, bad := range []*string{nil, sp("ABCD-EFGH"), sp("BCDF"), sp("BCDF-GHJK-L"), sp("")} {
		_, err := svc.Login(ctx, owner, pircan.LoginArgs{Code: bad})
		wantErr(t, "LOGIN malformed", err, pircan.CodeInvalidArgument, "code")
	}
	_, err = svc.Login(ctx, owner, pircan.LoginArgs{Code: sp("BBBB-BBBB")})
	wantErr(t, "wrong code", err, pircan.CodeNotFound, "code")
	if ps, err := svc.PortalSession(ctx, secret); err != nil || !ps.Waiting || ps.Active {
		t.Fatalf("refused LOGINs signed the browser in: %+v %v", ps, err)
	}

	// Typed in lower case without the dash, the code still works, once.
	r, err := svc.Login(ctx, owner, pircan.LoginArgs{Code: sp(strings.ToLower(strings.ReplaceAll(s.Code, "-", "")))})
	if err != nil || r.Account != owner.Account || r.Browser != "pircan-test/1.0 (browser one)" || r.SessionID != s.ID || r.StartedAt.IsZero() {
		t.Fatalf("LOGIN: %+v %v", r, err)
	}
	if ps, err := svc.PortalSession(ctx, secret); err != nil || !ps.Active || ps.Account != owner.Account {
		t.Fatalf("signed-in session: %+v %v", ps, err)
	}
	_, err = svc.Login(ctx, owner, pircan.LoginArgs{Code: &s.Code})
	wantErr(t, "reused code", err, pircan.CodeNotFound, "code")

	other, _ := signIn(t, svc, "")
	if r, err := svc.Login(ctx, nobody, pircan.LoginArgs{Code: &other.Code}); err != nil || r.Account != nobody.Account || r.Browser != "(unknown browser)" {
		t.Fatalf("LOGIN without an agent: %+v %v", r, err)
	}
	second, _ := signIn(t, svc, "three")
	_, err = svc.Login(ctx, owner, pircan.LoginArgs{Code: &second.Code})
	must(t, err)
	// LOGOUT ends every session of the account, and only of it.
	if n, err := svc.Logout(ctx, owner, pircan.NoArgs{}); err != nil || n != 2 {
		t.Fatalf("LOGOUT: %d %v", n, err)
	}
	if ps, err := svc.PortalSession(ctx, secret); err == nil && ps.Active {
		t.Fatalf("session after LOGOUT: %+v", ps)
	}
	if n, err := svc.Logout(ctx, owner, pircan.NoArgs{}); err != nil || n != 0 {
		t.Fatalf("second LOGOUT: %d %v", n, err)
	}
	if n, err := svc.Logout(ctx, nobody, pircan.NoArgs{}); err != nil || n != 1 {
		t.Fatalf("another account's LOGOUT: %d %v", n, err)
	}
}

// LoginsHour attempts an hour per account, wrong ones included.
func TestLoginAttemptsLimited(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	a := unregistered(t, svc)
	s, secret := signIn(t, svc, "ua")
	for range svc.Limits().LoginsHour {
		_, err := svc.Login(ctx, a, pircan.LoginArgs{Code: sp("BBBB-BBBB")})
		wantErr(t, "wrong code", err, pircan.CodeNotFound, "code")
	}
	_, err := svc.Login(ctx, a, pircan.LoginArgs{Code: &s.Code})
	wantErr(t, "attempt over the limit", err, pircan.CodeRateLimited, "")
	if ps, err := svc.PortalSession(ctx, secret); err != nil || !ps.Waiting {
		t.Fatalf("a refused LOGIN signed the browser in: %+v %v", ps, err)
	}
	// Another account still may.
	if _, err := svc.Login(ctx, unregistered(t, svc), pircan.LoginArgs{Code: &s.Code}); err != nil {
		t.Fatalf("another account: %v", err)
	}
}

func TestOwner(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	a := agent(t, svc, pircan.FaceIRC)
	if r, err := svc.Owner(ctx, a, pircan.OwnerArgs{}); err != nil || r.Binding != nil {
		t.Fatalf("no owner yet: %+v %v", r, err)
	}
	before := auditCount(t, a.Account)
	for _, c := range []struct {
		name  string
		args  pircan.OwnerArgs
		code  pircan.Code
		field string
	}{
		{"own account", pircan.OwnerArgs{Account: sp(a.Account)}, pircan.CodeInvalidArgument, "account"},
		{"own account, upper case", pircan.OwnerArgs{Account: sp(strings.ToUpper(a.Account))}, pircan.CodeInvalidArgument, "account"},
		{"both", pircan.OwnerArgs{Account: sp("bob"), Clear: bp(true)}, pircan.CodeInvalidArgument, "clear"},
		{"clear false", pircan.OwnerArgs{Clear: bp(false)}, pircan.CodeInvalidArgument, "clear"},
		{"empty", pircan.OwnerArgs{Account: sp("")}, pircan.CodeEmpty, "account"},
		{"space", pircan.OwnerArgs{Account: sp("bob smith")}, pircan.CodeInvalidArgument, "account"},
		{"mask", pircan.OwnerArgs{Account: sp("bob!*@*")}, pircan.CodeInvalidArgument, "account"},
		{"channel", pircan.OwnerArgs{Account: sp("#bob")}, pircan.CodeInvalidArgument, "account"},
		{"control", pircan.OwnerArgs{Account: sp("bob\r")}, pircan.CodeInvalidArgument, "account"},
		{"long", pircan.OwnerArgs{Account: sp(strings.Repeat("b", 65))}, pircan.CodeTooLong, "account"},
	} {
		_, err := svc.Owner(ctx, a, c.args)
		wantErr(t, "OWNER "+c.name, err, c.code, c.field)
	}
	if auditCount(t, a.Account) != before {
		t.Fatalf("refused OWNERs changed something")
	}

	// Named: pending; cleared: gone, saying whom it named.
	first := unique("o")
	r, err := svc.Owner(ctx, a, pircan.OwnerArgs{Account: &first})
	if err != nil || !r.Named || r.Binding == nil || r.Binding.Account != first || r.Binding.Status != pircan.BindingPending {
		t.Fatalf("OWNER named: %+v %v", r, err)
	}
	if r, err := svc.Owner(ctx, a, pircan.OwnerArgs{Clear: bp(true)}); err != nil || !r.Cleared || r.Was != first || r.Binding != nil {
		t.Fatalf("OWNER clear: %+v %v", r, err)
	}
	if r, err := svc.Owner(ctx, a, pircan.OwnerArgs{Clear: bp(true)}); err != nil || !r.Cleared || r.Was != "" {
		t.Fatalf("OWNER clear of none: %+v %v", r, err)
	}

	// Confirmed in the portal: the agent alone cannot change it any more.
	owner := unique("o")
	_, err = svc.Owner(ctx, a, pircan.OwnerArgs{Account: &owner})
	must(t, err)
	s, _ := signIn(t, svc, "ua")
	_, err = svc.Login(ctx, caller(t, svc, pircan.FaceIRC, owner), pircan.LoginArgs{Code: &s.Code})
	must(t, err)
	s.Account = owner
	oc := pircan.OwnerCaller(s)
	must(t, errOf(svc.DecideBinding(ctx, oc, pircan.BindingArgs{AgentID: sp(a.Agent.ID), Decision: sp("confirm")})))
	if r, err := svc.Owner(ctx, a, pircan.OwnerArgs{}); err != nil || r.Binding == nil || r.Binding.Status != pircan.BindingConfirmed {
		t.Fatalf("confirmed: %+v %v", r, err)
	}
	_, err = svc.Owner(ctx, a, pircan.OwnerArgs{Account: sp(unique("o"))})
	wantErr(t, "OWNER after a confirmation", err, pircan.CodeNotAuthorized, "")
	_, err = svc.Owner(ctx, a, pircan.OwnerArgs{Clear: bp(true)})
	wantErr(t, "clear after a confirmation", err, pircan.CodeNotAuthorized, "")

	// The owner's portal operations take ids, and the agent must be theirs.
	stranger := agent(t, svc, pircan.FaceIRC)
	for _, c := range []struct {
		name  string
		err   error
		code  pircan.Code
		field string
	}{
		{"policy, bad id", errOf(svc.OwnerSetPolicy(ctx, oc, pircan.ForAgent[pircan.PolicyArgs]{AgentID: sp("x"), Args: pircan.PolicyArgs{Policy: sp(pircan.PolicyDeny)}})), pircan.CodeInvalidArgument, "agent_id"},
		{"policy, none", errOf(svc.OwnerSetPolicy(ctx, oc, pircan.ForAgent[pircan.PolicyArgs]{AgentID: sp(a.Agent.ID), Args: pircan.PolicyArgs{}})), pircan.CodeInvalidArgument, "policy"},
		{"policy, unknown", errOf(svc.OwnerSetPolicy(ctx, oc, pircan.ForAgent[pircan.PolicyArgs]{AgentID: sp(a.Agent.ID), Args: pircan.PolicyArgs{Policy: sp("yes")}})), pircan.CodeInvalidArgument, "policy"},
		{"policy, not owned", errOf(svc.OwnerSetPolicy(ctx, oc, pircan.ForAgent[pircan.PolicyArgs]{AgentID: sp(stranger.Agent.ID), Args: pircan.PolicyArgs{Policy: sp(pircan.PolicyDeny)}})), pircan.CodeNotFound, ""},
		{"revoke, bad id", errOf(svc.OwnerRevoke(ctx, oc, pircan.ForAgent[pircan.RevokeArgs]{AgentID: sp(a.Agent.ID), Args: pircan.RevokeArgs{AgreementID: sp("x")}})), pircan.CodeInvalidArgument, "agreement_id"},
		{"revoke, unknown", errOf(svc.OwnerRevoke(ctx, oc, pircan.ForAgent[pircan.RevokeArgs]{AgentID: sp(a.Agent.ID), Args: pircan.RevokeArgs{AgreementID: sp(noID)}})), pircan.CodeNotFound, ""},
		{"release, bad id", errOf(svc.ReleaseAgent(ctx, oc, pircan.AgentArgs{AgentID: sp("x")})), pircan.CodeInvalidArgument, "agent_id"},
		{"release, not owned", errOf(svc.ReleaseAgent(ctx, oc, pircan.AgentArgs{AgentID: sp(stranger.Agent.ID)})), pircan.CodeNotFound, ""},
		{"end session, bad id", errOf(svc.EndSession(ctx, oc, pircan.SessionArgs{SessionID: sp("x")})), pircan.CodeInvalidArgument, "session_id"},
		{"binding, bad id", errOf(svc.DecideBinding(ctx, oc, pircan.BindingArgs{AgentID: sp("x"), Decision: sp("confirm")})), pircan.CodeInvalidArgument, "agent_id"},
		{"binding, not named", errOf(svc.DecideBinding(ctx, oc, pircan.BindingArgs{AgentID: sp(stranger.Agent.ID), Decision: sp("confirm")})), pircan.CodeNotFound, ""},
		{"accept, bad request", func() error {
			_, err := svc.OwnerAccept(ctx, oc, pircan.ForAgent[pircan.DecideArgs]{AgentID: sp(a.Agent.ID), Args: pircan.DecideArgs{RequestID: sp("x")}})
			return err
		}(), pircan.CodeInvalidArgument, "request_id"},
		{"decline, unknown", func() error {
			_, err := svc.OwnerDecline(ctx, oc, pircan.ForAgent[pircan.RequestArgs]{AgentID: sp(a.Agent.ID), Args: pircan.RequestArgs{RequestID: sp(noID)}})
			return err
		}(), pircan.CodeNotFound, ""},
	} {
		wantErr(t, "owner "+c.name, c.err, c.code, c.field)
	}

	// The owner sets owner-decides and decides a request, never granting more.
	must(t, errOf(svc.OwnerSetPolicy(ctx, oc, pircan.ForAgent[pircan.PolicyArgs]{AgentID: sp(a.Agent.ID), Args: pircan.PolicyArgs{Policy: sp(pircan.PolicyOwnerDecides)}})))
	if p, _ := svc.Policy(ctx, a, pircan.PolicyArgs{}); p.Policy != pircan.PolicyOwnerDecides || !p.Locked {
		t.Fatalf("owner's policy: %+v", p)
	}
	req, err := svc.Contact(ctx, stranger, pircan.ContactArgs{To: &a.Agent.ID, Purpose: sp("ask the owner"), TTLDays: ip(10)})
	if err != nil || req.Status != "pending" {
		t.Fatalf("CONTACT: %+v %v", req, err)
	}
	_, err = svc.Owned(ctx, pircan.Caller{Face: pircan.FacePortal}, pircan.NoArgs{})
	wantErr(t, "Owned without an account", err, pircan.CodeNotIdentified, "")
	view, err := svc.Owned(ctx, oc, pircan.NoArgs{})
	if err != nil || len(view.Agents) != 1 || view.Agents[0].ID != a.Agent.ID || len(view.Agents[0].Requests) != 1 {
		t.Fatalf("Owned: %+v %v", view, err)
	}
	_, err = svc.OwnerAccept(ctx, oc, pircan.ForAgent[pircan.DecideArgs]{AgentID: sp(a.Agent.ID), Args: pircan.DecideArgs{RequestID: &req.RequestID, TTLDays: ip(11)}})
	wantErr(t, "owner grants a longer ttl", err, pircan.CodeInvalidArgument, "ttl_days")
	_, err = svc.OwnerAccept(ctx, oc, pircan.ForAgent[pircan.DecideArgs]{AgentID: sp(a.Agent.ID), Args: pircan.DecideArgs{RequestID: &req.RequestID, Scopes: lp("task:x")}})
	wantErr(t, "owner grants more scopes", err, pircan.CodeInvalidArgument, "scopes")
	d, err := svc.OwnerAccept(ctx, oc, pircan.ForAgent[pircan.DecideArgs]{AgentID: sp(a.Agent.ID), Args: pircan.DecideArgs{RequestID: &req.RequestID}})
	if err != nil || d.Status != "accepted" || !pircan.ValidID(d.AgreementID) {
		t.Fatalf("owner ACCEPT: %+v %v", d, err)
	}
	must(t, errOf(svc.OwnerRevoke(ctx, oc, pircan.ForAgent[pircan.RevokeArgs]{AgentID: sp(a.Agent.ID), Args: pircan.RevokeArgs{AgreementID: &d.AgreementID}})))
	wantErr(t, "second owner revoke", errOf(svc.OwnerRevoke(ctx, oc, pircan.ForAgent[pircan.RevokeArgs]{AgentID: sp(a.Agent.ID), Args: pircan.RevokeArgs{AgreementID: &d.AgreementID}})), pircan.CodeNotActive, "")
}
