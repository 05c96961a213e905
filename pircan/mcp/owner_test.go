package mcp_test

import (
	"testing"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/mcp"
)

// The owner's lock holds over MCP as over IRC (issue 10): once another
// account confirmed as the agent's owner and set owner-decides, the agent's
// own token cannot set its policy back, nor accept or decline a request;
// its own account in the portal is read-only; only the owner decides.
func TestOwnerLockHoldsOverMCP(t *testing.T) {
	e := newEnv(t, limits())
	ctx := t.Context()
	account, tok := e.token(t)
	cs := e.session(t, tok)
	var h mcp.Hello
	ok(t, call(t, cs, "register", map[string]any{}), &h)
	peer, _ := e.agent(t)

	// The agent names an owner (the owner tool), who confirms in the
	// portal and sets owner-decides there.
	owner := unique("owner")
	var ob mcp.OwnerBinding
	ok(t, call(t, cs, "owner", map[string]any{"account": owner}), &ob)
	if ob.Account == nil || *ob.Account != owner || ob.Status != pircan.BindingPending || ob.Note != pircan.OwnerNote {
		t.Fatalf("owner named: %+v", ob)
	}
	oc := signIn(t, e, owner)
	if _, err := e.core.DecideBinding(ctx, oc, pircan.BindingArgs{AgentID: ptr(h.AgentID), Decision: ptr("confirm")}); err != nil {
		t.Fatal(err)
	}
	ownerDecides := pircan.PolicyOwnerDecides
	if _, err := e.core.OwnerSetPolicy(ctx, oc, pircan.ForAgent[pircan.PolicyArgs]{AgentID: ptr(h.AgentID), Args: pircan.PolicyArgs{Policy: &ownerDecides}}); err != nil {
		t.Fatal(err)
	}

	var w mcp.WhoAmI
	ok(t, call(t, cs, "whoami", nil), &w)
	if w.Owner == nil || *w.Owner != (mcp.Owner{Account: owner, Name: owner, Verification: "unverified"}) {
		t.Fatalf("whoami owner: %+v", w.Owner)
	}
	ob = mcp.OwnerBinding{}
	ok(t, call(t, cs, "owner", nil), &ob)
	if ob.Account == nil || *ob.Account != owner || ob.Status != pircan.BindingConfirmed || ob.Since == "" ||
		ob.Name != owner || ob.Verification != "unverified" {
		t.Fatalf("owner shown after the confirmation: %+v", ob)
	}
	// Confirmed, the owner holds: the agent can neither clear it nor name another.
	refused(t, call(t, cs, "owner", map[string]any{"clear": true}), pircan.CodeNotAuthorized, "")
	refused(t, call(t, cs, "owner", map[string]any{"account": unique("other")}), pircan.CodeNotAuthorized, "")
	// An operator verifies the owner (pircan owner verify): whoami shows the checked name.
	if _, err := shared.VerifyOwner(ctx, pircan.Actor{Account: "operator:test"}, owner, "Olivia Owner"); err != nil {
		t.Fatal(err)
	}
	ok(t, call(t, cs, "whoami", nil), &w)
	if w.Owner == nil || *w.Owner != (mcp.Owner{Account: owner, Name: "Olivia Owner", Verification: "verified"}) {
		t.Fatalf("whoami owner after verify: %+v", w.Owner)
	}
	var p mcp.Policy
	ok(t, call(t, cs, "policy", nil), &p)
	if p.Policy != pircan.PolicyOwnerDecides || !p.Locked {
		t.Fatalf("policy: %+v, want owner-decides, locked", p)
	}
	refused(t, call(t, cs, "policy", map[string]any{"policy": pircan.PolicyAutoAccept}), pircan.CodeNotAuthorized, "")
	ok(t, call(t, cs, "policy", nil), &p)
	if p.Policy != pircan.PolicyOwnerDecides {
		t.Fatalf("after the agent's try: %+v", p)
	}

	var c mcp.Contact
	ok(t, call(t, peer, "contact", map[string]any{"to": h.AgentID, "purpose": "Share spill data"}), &c)
	if c.Status != "pending" {
		t.Fatalf("contact: %+v, want pending", c)
	}
	refused(t, call(t, cs, "accept_contact", map[string]any{"request_id": c.RequestID}), pircan.CodeNotAuthorized, "")
	refused(t, call(t, cs, "decline_contact", map[string]any{"request_id": c.RequestID}), pircan.CodeNotAuthorized, "")

	// The agent's own account signed in to the portal sees it read-only.
	self := signIn(t, e, account)
	autoAccept := pircan.PolicyAutoAccept
	if _, err := e.core.OwnerSetPolicy(ctx, self, pircan.ForAgent[pircan.PolicyArgs]{AgentID: ptr(h.AgentID), Args: pircan.PolicyArgs{Policy: &autoAccept}}); pircan.AsError(err).Code != pircan.CodeNotAuthorized {
		t.Fatalf("the agent's own portal session sets the policy: %v", err)
	}
	if _, err := e.core.OwnerAccept(ctx, self, pircan.ForAgent[pircan.DecideArgs]{AgentID: ptr(h.AgentID), Args: pircan.DecideArgs{RequestID: &c.RequestID}}); pircan.AsError(err).Code != pircan.CodeNotAuthorized {
		t.Fatalf("the agent's own portal session accepts: %v", err)
	}

	// The owner decides.
	d, err := e.core.OwnerAccept(ctx, oc, pircan.ForAgent[pircan.DecideArgs]{AgentID: ptr(h.AgentID), Args: pircan.DecideArgs{RequestID: &c.RequestID}})
	if err != nil || d.Status != "accepted" {
		t.Fatalf("the owner accepts: %+v %v", d, err)
	}
}

// The owner tool as OWNER on IRC: none at first, a naming pending until
// the account confirms, a pending one withdrawn (cleared names it), and
// the refusals with their fields.
func TestOwnerTool(t *testing.T) {
	e := newEnv(t, limits())
	_, tok := e.token(t)
	cs := e.session(t, tok)
	show := func(args map[string]any) mcp.OwnerBinding {
		t.Helper()
		var ob mcp.OwnerBinding
		ok(t, call(t, cs, "owner", args), &ob)
		return ob
	}
	refused(t, call(t, cs, "owner", nil), pircan.CodeNotRegistered, "")
	ok(t, call(t, cs, "register", map[string]any{}), &mcp.Hello{})
	if ob := show(nil); ob != (mcp.OwnerBinding{Status: "none"}) {
		t.Fatalf("before any: %+v", ob)
	}
	owner := unique("owner")
	if ob := show(map[string]any{"account": owner}); ob.Account == nil || *ob.Account != owner ||
		ob.Status != pircan.BindingPending || ob.Note != pircan.OwnerNote || ob.Since != "" {
		t.Fatalf("named: %+v", ob)
	}
	if ob := show(nil); ob.Account == nil || *ob.Account != owner || ob.Status != pircan.BindingPending ||
		ob.Since == "" || ob.Note != "" {
		t.Fatalf("shown while pending: %+v", ob)
	}
	if ob := show(map[string]any{"clear": true}); ob.Cleared == nil || *ob.Cleared != owner || ob.Status != "none" || ob.Account != nil {
		t.Fatalf("cleared: %+v", ob)
	}
	if ob := show(map[string]any{"clear": true}); ob != (mcp.OwnerBinding{Status: "none"}) {
		t.Fatalf("cleared with none pending: %+v", ob)
	}
	refused(t, call(t, cs, "owner", map[string]any{"account": "two words"}), pircan.CodeInvalidArgument, "account")
	refused(t, call(t, cs, "owner", map[string]any{"account": owner, "clear": true}), pircan.CodeInvalidArgument, "clear")
	refused(t, call(t, cs, "owner", map[string]any{"clear": false}), pircan.CodeInvalidArgument, "clear")
	refused(t, call(t, cs, "owner", map[string]any{"nick": "x"}), pircan.CodeInvalidArgument, "nick")
}

// signIn signs account in to the portal as a browser would (a code, then
// LOGIN) and returns the portal's caller for that session.
func signIn(t *testing.T, e *env, account string) pircan.Caller {
	t.Helper()
	st, err := e.core.StartSignIn(t.Context(), pircan.OwnerCaller(pircan.PortalSession{}), pircan.SignInArgs{Address: "192.0.2.1", UserAgent: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.core.Login(t.Context(), pircan.Caller{Account: account, Face: pircan.FaceIRC}, pircan.LoginArgs{Code: &st.Session.Code}); err != nil {
		t.Fatal(err)
	}
	s, err := e.core.PortalSession(t.Context(), st.Secret)
	if err != nil || !s.Active {
		t.Fatalf("after LOGIN: %+v %v", s, err)
	}
	return pircan.OwnerCaller(s)
}
