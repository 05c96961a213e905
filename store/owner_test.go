package store_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// Owner sign-in and the owner's portal actions at the store: limits are
// counted from rows, and time rules are tested by ageing rows.

var codeRE = regexp.MustCompile(`^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$`)

func (h *hs) startSignIn(address, secret string) pircan.PortalSession {
	h.t.Helper()
	sum := sha256.Sum256([]byte(secret))
	p, err := h.s.StartSignIn(h.ctx, pircan.NewSignIn{SecretSHA256: sum[:], CSRFToken: "csrf-" + secret,
		Address: address, UserAgent: "TestBrowser/1.0 (" + secret + ")"}, 10)
	if err != nil {
		h.t.Fatalf("start sign-in: %v", err)
	}
	return p
}

func (h *hs) session(secret string) pircan.PortalSession {
	h.t.Helper()
	sum := sha256.Sum256([]byte(secret))
	p, err := h.s.PortalSession(h.ctx, sum[:])
	if err != nil {
		h.t.Fatalf("session: %v", err)
	}
	return p
}

func TestSignInStartsLimitedPerAddress(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	for i := range 10 {
		p := h.startSignIn("192.0.2.1", fmt.Sprint("s", i))
		if !codeRE.MatchString(p.Code) || !p.Waiting || p.Active {
			t.Fatalf("start %d: %+v", i, p)
		}
	}
	sum := sha256.Sum256([]byte("eleventh"))
	refused, err := h.s.StartSignIn(h.ctx, pircan.NewSignIn{SecretSHA256: sum[:], CSRFToken: "x", Address: "192.0.2.1"}, 10)
	wantErr(t, "11th start", err, pircan.ErrRateLimited)
	if d := time.Until(refused.RetryAt); d < 59*time.Minute || d > 61*time.Minute {
		t.Fatalf("retry at %v (in %v), want about an hour after the oldest start", refused.RetryAt, d)
	}
	// A code that signed someone in no longer counts.
	if _, err := h.s.Login(h.ctx, "someone", h.session("s3").Code, pircan.DefaultLimits); err != nil {
		t.Fatal(err)
	}
	h.startSignIn("192.0.2.1", "after-a-login")
	_, err = h.s.StartSignIn(h.ctx, pircan.NewSignIn{SecretSHA256: sum[:], CSRFToken: "x", Address: "192.0.2.1"}, 10)
	wantErr(t, "11th unused code", err, pircan.ErrRateLimited)
	h.startSignIn("192.0.2.2", "other-address") // another address is not limited
	// An hour later the address may start again.
	h.exec("UPDATE portal_sessions SET created_at = created_at - interval '61 minutes' WHERE address = '192.0.2.1'")
	h.startSignIn("192.0.2.1", "later")
	// The secret itself is stored nowhere.
	if n := h.count("SELECT count(*) FROM portal_sessions WHERE position('later'::bytea in secret_sha256) > 0"); n != 0 {
		t.Fatal("secret stored in clear")
	}
}

func TestLoginApprovesOnceAndLogoutEnds(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	alice := h.agent("alice")
	p := h.startSignIn("192.0.2.1", "browser-1")
	after := h.lastAuditID()

	res, err := h.s.Login(h.ctx, "Alice", p.Code, pircan.DefaultLimits)
	if err != nil || res.Account != "Alice" || res.Browser != "TestBrowser/1.0 (browser-1)" || res.SessionID != p.ID ||
		!res.StartedAt.Equal(p.CreatedAt) || res.ExpiresAt.Sub(res.StartedAt) < pircan.SessionLifetime-5*time.Second {
		t.Fatalf("login: %+v %v", res, err)
	}
	s := h.session("browser-1")
	if !s.Active || s.Waiting || s.Account != "Alice" {
		t.Fatalf("approved session: %+v", s)
	}
	// A code works once.
	_, err = h.s.Login(h.ctx, "alice", p.Code, pircan.DefaultLimits)
	wantErr(t, "reused code", err, pircan.ErrNotFound)
	// The owner row now exists: WHOAMI shows it.
	a, err := h.s.AgentByAccount(h.ctx, "alice")
	if err != nil || a.Owner == nil || a.Owner.Name != "Alice" || a.Owner.Verification != "unverified" {
		t.Fatalf("agent owner: %+v %v", a.Owner, err)
	}
	if _, err := h.s.VerifyOwner(h.ctx, pircan.Actor{Account: "operator:carol"}, "ALICE", "Alice Liddell"); err != nil {
		t.Fatal(err)
	}
	if a, _ := h.s.AgentByAccount(h.ctx, "alice"); a.Owner == nil || *a.Owner != (pircan.Owner{Account: "Alice", Name: "Alice Liddell", Verification: "verified"}) {
		t.Fatalf("verified owner: %+v", a.Owner)
	}
	_ = alice

	// A second browser; LOGOUT ends both.
	p2 := h.startSignIn("192.0.2.1", "browser-2")
	if _, err := h.s.Login(h.ctx, "alice", p2.Code, pircan.DefaultLimits); err != nil {
		t.Fatal(err)
	}
	list, err := h.s.PortalSessions(h.ctx, "alice")
	if err != nil || len(list) != 2 {
		t.Fatalf("sessions: %+v %v", list, err)
	}
	n, err := h.s.Logout(h.ctx, "alice")
	if err != nil || n != 2 {
		t.Fatalf("logout: %d %v", n, err)
	}
	if s := h.session("browser-1"); s.Active {
		t.Fatal("session survived LOGOUT")
	}
	if n, _ := h.s.Logout(h.ctx, "alice"); n != 0 {
		t.Fatalf("second logout ended %d", n)
	}
	got := actions(h.auditAfter(after))
	want := []string{"owner.sign_in", "owner.login.failed", "owner.verify", "owner.sign_in.start", "owner.sign_in", "owner.logout", "owner.logout"}
	if !slices.Equal(got, want) {
		t.Fatalf("audit: %v, want %v", got, want)
	}
}

func TestLoginRefusals(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	// A code near the end of its CodeLifetime still waits, and signs in;
	// the queries' intervals are the Go constant the portal shows.
	age := func(id string, d time.Duration) {
		h.exec("UPDATE portal_sessions SET created_at = now() - make_interval(secs => $2) WHERE id = $1", id, d.Seconds())
	}
	late := h.startSignIn("192.0.2.1", "late")
	age(late.ID, pircan.CodeLifetime-10*time.Second)
	if s := h.session("late"); !s.Waiting || s.Code != late.Code {
		t.Fatalf("a code %v old: %+v", pircan.CodeLifetime-10*time.Second, s)
	}
	if _, err := h.s.Login(h.ctx, "dave", late.Code, pircan.DefaultLimits); err != nil {
		t.Fatalf("a code near its end: %v", err)
	}
	if s := h.session("late"); !s.Active || s.Account != "dave" {
		t.Fatalf("after LOGIN near the end: %+v", s)
	}
	// An expired code (older than 10 minutes) is refused and changes nothing.
	p := h.startSignIn("192.0.2.1", "old")
	age(p.ID, pircan.CodeLifetime+time.Second)
	if s := h.session("old"); s.Waiting {
		t.Fatalf("a code past its lifetime still waits: %+v", s)
	}
	_, err := h.s.Login(h.ctx, "bob", p.Code, pircan.DefaultLimits)
	wantErr(t, "expired code", err, pircan.ErrNotFound)
	if s := h.session("old"); s.Active || s.Account != "" {
		t.Fatalf("expired code approved: %+v", s)
	}
	// Wrong codes count: with 10 attempts in the hour, even a right code is refused.
	fresh := h.startSignIn("192.0.2.1", "fresh")
	for i := 0; i < 9; i++ {
		if _, err := h.s.Login(h.ctx, "bob", "BBBB-BBBB", pircan.DefaultLimits); !errors.Is(err, pircan.ErrNotFound) {
			t.Fatalf("wrong code %d: %v", i, err)
		}
	}
	_, err = h.s.Login(h.ctx, "bob", fresh.Code, pircan.DefaultLimits)
	wantErr(t, "11th attempt", err, pircan.ErrRateLimited)
	if s := h.session("fresh"); s.Active {
		t.Fatal("rate-limited LOGIN approved a browser")
	}
	// Another account is not limited by bob's attempts.
	if _, err := h.s.Login(h.ctx, "carol", fresh.Code, pircan.DefaultLimits); err != nil {
		t.Fatal(err)
	}
	if n := h.count("SELECT count(*) FROM login_attempts WHERE account_folded = 'bob'"); n != 10 {
		t.Fatalf("bob's attempts: %d", n)
	}
	// An hour later bob may try again.
	h.exec("UPDATE login_attempts SET at = at - interval '61 minutes'")
	if _, err := h.s.Login(h.ctx, "bob", "BBBB-BBBB", pircan.DefaultLimits); !errors.Is(err, pircan.ErrNotFound) {
		t.Fatalf("after an hour: %v", err)
	}
	// An approved session expires after 12 hours.
	h.exec("UPDATE portal_sessions SET expires_at = now() - interval '1 second' WHERE id = $1", fresh.ID)
	if s := h.session("fresh"); s.Active {
		t.Fatal("expired session is active")
	}
}

func TestOwnerActions(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	alice, bob, carol := h.agent("alice"), h.agent("bob"), h.agent("carol")
	p := h.startSignIn("192.0.2.1", "b")
	if _, err := h.s.Login(h.ctx, "alice", p.Code, pircan.DefaultLimits); err != nil {
		t.Fatal(err)
	}
	agents, err := h.s.OwnedAgents(h.ctx, "alice")
	if err != nil || len(agents) != 1 || agents[0].ID != alice.ID || agents[0].Policy != pircan.PolicyAgentDecides {
		t.Fatalf("owned: %+v %v", agents, err)
	}
	// Only the owner's own agents.
	wantErr(t, "policy of bob's agent", h.s.OwnerSetPolicy(h.ctx, "alice", p.ID, bob.ID, pircan.PolicyDeny), pircan.ErrNotFound)
	if err := h.s.OwnerSetPolicy(h.ctx, "alice", p.ID, alice.ID, pircan.PolicyOwnerDecides); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "agent changes locked policy", h.s.SetPolicy(h.ctx, act(alice), pircan.PolicyAutoAccept), pircan.ErrNotAuthorized)

	r := h.mustContact(bob, alice, pircan.ScopeMessage, "task:assess")
	notes := h.lastNoteID()
	after := h.lastAuditID()
	_, err = h.s.OwnerDecide(h.ctx, "bob", "x", alice.ID, pircan.Decision{Kind: pircan.DecideAccept, RequestID: r.RequestID})
	wantErr(t, "another owner decides", err, pircan.ErrNotFound)
	_, err = h.s.OwnerDecide(h.ctx, "alice", p.ID, alice.ID, pircan.Decision{Kind: pircan.DecideAccept, RequestID: r.RequestID,
		Scopes: []string{pircan.ScopeMessage, "resource:read"}})
	wantErr(t, "wider grant", err, pircan.ErrInvalidGrant)
	res, err := h.s.OwnerDecide(h.ctx, "alice", p.ID, alice.ID, pircan.Decision{Kind: pircan.DecideAccept, RequestID: r.RequestID,
		Scopes: []string{pircan.ScopeMessage}, TTLDays: 7})
	if err != nil || !slices.Equal(res.Scopes, []string{pircan.ScopeMessage}) {
		t.Fatalf("owner accept: %+v %v", res, err)
	}
	got, _ := h.notesAfter(notes)
	wantNotes := []note{{bob.ID, "contact_update"}, {alice.ID, "agreement_update"}}
	if bob.ID > alice.ID { // written in agent-id order (Decide)
		wantNotes[0], wantNotes[1] = wantNotes[1], wantNotes[0]
	}
	if !slices.Equal(got, wantNotes) {
		t.Fatalf("notifications: %v", got)
	}
	// Revoke: the owner's agent must be a party.
	wantErr(t, "revoke as carol's owner", h.s.OwnerRevoke(h.ctx, "carol", "x", carol.ID, res.AgreementID), pircan.ErrNotFound)
	if err := h.s.OwnerRevoke(h.ctx, "alice", p.ID, alice.ID, res.AgreementID); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "second revoke", h.s.OwnerRevoke(h.ctx, "alice", p.ID, alice.ID, res.AgreementID), pircan.ErrNotActive)
	want := []string{"contact.accept", "agreement.create", "agreement.revoke"}
	if got := actions(h.auditAfter(after)); !slices.Equal(got, want) {
		t.Fatalf("audit: %v, want %v", got, want)
	}
	// Sessions: end another one, then sign out.
	p2 := h.startSignIn("192.0.2.1", "b2")
	if _, err := h.s.Login(h.ctx, "alice", p2.Code, pircan.DefaultLimits); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "bob ends alice's session", h.s.EndPortalSession(h.ctx, "bob", "x", p2.ID), pircan.ErrNotFound)
	if err := h.s.EndPortalSession(h.ctx, "alice", p.ID, p2.ID); err != nil {
		t.Fatal(err)
	}
	if err := h.s.EndPortalSession(h.ctx, "alice", p.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := h.s.PortalSessions(h.ctx, "alice"); len(list) != 0 {
		t.Fatalf("sessions left: %+v", list)
	}
}

// Owner bindings: a proposal holds no power until the named account
// confirms; then only it is owner, and the agent cannot leave alone.
func TestOwnerBindings(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	agent, other := h.agent("agent"), h.agent("other")
	if b, err := h.s.OwnerBinding(h.ctx, agent.ID); err != nil || b != nil {
		t.Fatalf("before: %+v %v", b, err)
	}
	if known, _ := h.s.KnownAccount(h.ctx, "alice"); known {
		t.Fatal("alice known before anyone named her")
	}
	if _, err := h.s.NameOwner(h.ctx, act(agent), "Alice"); err != nil {
		t.Fatal(err)
	}
	if known, _ := h.s.KnownAccount(h.ctx, "ALICE"); !known {
		t.Fatal("a named owner is not known")
	}
	// Pending: no power, and the agent's own account is still its owner.
	if list, _ := h.s.OwnedAgents(h.ctx, "alice"); len(list) != 0 {
		t.Fatalf("pending owner owns: %+v", list)
	}
	wantErr(t, "pending owner sets policy", h.s.OwnerSetPolicy(h.ctx, "alice", "s", agent.ID, pircan.PolicyDeny), pircan.ErrNotFound)
	if err := h.s.OwnerSetPolicy(h.ctx, "agent", "s", agent.ID, pircan.PolicyAgentDecides); err != nil {
		t.Fatalf("own account before confirmation: %v", err)
	}
	wantErr(t, "another account confirms", h.s.DecideBinding(h.ctx, "bob", "s", agent.ID, true), pircan.ErrNotFound)
	if p, _ := h.s.PendingBindings(h.ctx, "alice"); len(p) != 1 || p[0].AgentID != agent.ID || p[0].AgentAccount != "agent" {
		t.Fatalf("pending for alice: %+v", p)
	}
	if err := h.s.DecideBinding(h.ctx, "alice", "s", agent.ID, true); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "second confirm", h.s.DecideBinding(h.ctx, "alice", "s", agent.ID, true), pircan.ErrNotFound)

	// Confirmed: alice holds the powers, the agent's own account reads only.
	list, err := h.s.OwnedAgents(h.ctx, "alice")
	if err != nil || len(list) != 1 || list[0].ID != agent.ID || list[0].ReadOnly || list[0].OwnerAccount != "Alice" {
		t.Fatalf("alice's agents: %+v %v", list, err)
	}
	own, _ := h.s.OwnedAgents(h.ctx, "agent")
	if len(own) != 1 || !own[0].ReadOnly {
		t.Fatalf("the agent's own view: %+v", own)
	}
	wantErr(t, "own account sets policy", h.s.OwnerSetPolicy(h.ctx, "agent", "s", agent.ID, pircan.PolicyAutoAccept), pircan.ErrNotAuthorized)
	if err := h.s.OwnerSetPolicy(h.ctx, "alice", "s", agent.ID, pircan.PolicyOwnerDecides); err != nil {
		t.Fatal(err)
	}
	if a, _ := h.s.AgentByAccount(h.ctx, "agent"); a.Owner != nil {
		t.Fatalf("WHOAMI owner before alice has an owner row: %+v", a.Owner)
	}
	if _, err := h.s.VerifyOwner(h.ctx, pircan.Actor{Account: "operator:carol"}, "alice", "Alice Liddell"); err != nil {
		t.Fatal(err)
	}
	if a, _ := h.s.AgentByAccount(h.ctx, "agent"); a.Owner == nil || a.Owner.Name != "Alice Liddell" || a.Owner.Account != "alice" {
		t.Fatalf("WHOAMI owner: %+v", a.Owner)
	}
	_, err = h.s.NameOwner(h.ctx, act(agent), "mallory")
	wantErr(t, "rename a confirmed owner", err, pircan.CodeNotAuthorized)
	_, err = h.s.ClearOwner(h.ctx, act(agent))
	wantErr(t, "clear a confirmed owner", err, pircan.CodeNotAuthorized)
	wantErr(t, "someone else releases", h.s.ReleaseAgent(h.ctx, "mallory", "s", agent.ID), pircan.ErrNotFound)
	if err := h.s.ReleaseAgent(h.ctx, "alice", "s", agent.ID); err != nil {
		t.Fatal(err)
	}
	if b, _ := h.s.OwnerBinding(h.ctx, agent.ID); b != nil {
		t.Fatalf("after release: %+v", b)
	}

	// A decline: 24 hours before the same account can be asked again.
	if _, err := h.s.NameOwner(h.ctx, act(other), "alice"); err != nil {
		t.Fatal(err)
	}
	if err := h.s.DecideBinding(h.ctx, "alice", "s", other.ID, false); err != nil {
		t.Fatal(err)
	}
	_, err = h.s.NameOwner(h.ctx, act(other), "alice")
	wantErr(t, "ask again after a decline", err, pircan.CodeCooldown)
	h.exec("UPDATE owner_bindings SET decided_at = now() - interval '25 hours' WHERE agent_id = '" + other.ID + "'")
	if _, err := h.s.NameOwner(h.ctx, act(other), "alice"); err != nil {
		t.Fatalf("a day later: %v", err)
	}
	if b, err := h.s.ClearOwner(h.ctx, act(other)); err != nil || b == nil || b.Status != pircan.BindingPending {
		t.Fatalf("withdraw: %+v %v", b, err)
	}
	// An operator clears even a confirmed binding.
	if _, err := h.s.NameOwner(h.ctx, act(other), "alice"); err != nil {
		t.Fatal(err)
	}
	if err := h.s.DecideBinding(h.ctx, "alice", "s", other.ID, true); err != nil {
		t.Fatal(err)
	}
	if b, err := h.s.ClearOwnerByOperator(h.ctx, pircan.Actor{Account: "operator:carol"}, other.ID); err != nil || b == nil || b.Status != pircan.BindingConfirmed {
		t.Fatalf("operator clear: %+v %v", b, err)
	}
}
