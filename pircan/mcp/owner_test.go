package mcp_test

import (
	"crypto/rand"
	"crypto/sha256"
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

	// The agent names an owner (OWNER over IRC), who confirms in the portal
	// and sets owner-decides there.
	owner := unique("owner")
	if _, err := shared.NameOwner(ctx, pircan.Actor{Account: account, AgentID: h.AgentID}, owner); err != nil {
		t.Fatal(err)
	}
	oc := signIn(t, e, owner)
	if err := e.core.DecideBinding(ctx, oc, h.AgentID, true); err != nil {
		t.Fatal(err)
	}
	ownerDecides := pircan.PolicyOwnerDecides
	if err := e.core.OwnerSetPolicy(ctx, oc, h.AgentID, pircan.PolicyArgs{Policy: &ownerDecides}); err != nil {
		t.Fatal(err)
	}

	var w mcp.WhoAmI
	ok(t, call(t, cs, "whoami", nil), &w)
	if w.Owner == nil || *w.Owner != (mcp.Owner{Account: owner, Name: owner, Verification: "unverified"}) {
		t.Fatalf("whoami owner: %+v", w.Owner)
	}
	// An operator verifies the owner (pircan owner verify): whoami shows the checked name.
	if _, err := shared.VerifyOwner(ctx, "operator:test", owner, "Olivia Owner"); err != nil {
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
	if err := e.core.OwnerSetPolicy(ctx, self, h.AgentID, pircan.PolicyArgs{Policy: &autoAccept}); pircan.AsError(err).Code != pircan.CodeNotAuthorized {
		t.Fatalf("the agent's own portal session sets the policy: %v", err)
	}
	if _, err := e.core.OwnerAccept(ctx, self, h.AgentID, pircan.DecideArgs{RequestID: &c.RequestID}); pircan.AsError(err).Code != pircan.CodeNotAuthorized {
		t.Fatalf("the agent's own portal session accepts: %v", err)
	}

	// The owner decides.
	d, err := e.core.OwnerAccept(ctx, oc, h.AgentID, pircan.DecideArgs{RequestID: &c.RequestID})
	if err != nil || d.Status != "accepted" {
		t.Fatalf("the owner accepts: %+v %v", d, err)
	}
}

// signIn signs account in to the portal as a browser would (a code, then
// LOGIN) and returns the portal's caller for that session.
func signIn(t *testing.T, e *env, account string) pircan.Caller {
	t.Helper()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	sum := sha256.Sum256(secret)
	s, err := e.core.StartSignIn(t.Context(), pircan.NewSignIn{SecretSHA256: sum[:], CSRFToken: "csrf", Address: "192.0.2.1", UserAgent: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.core.Login(t.Context(), pircan.Caller{Account: account, Face: pircan.FaceIRC}, pircan.LoginArgs{Code: &s.Code}); err != nil {
		t.Fatal(err)
	}
	if s, err = e.core.PortalSession(t.Context(), sum[:]); err != nil || !s.Active {
		t.Fatalf("after LOGIN: %+v %v", s, err)
	}
	return pircan.OwnerCaller(s)
}
