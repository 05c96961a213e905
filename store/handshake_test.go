package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// The handshake and message rules of spec §3b and §4, at the store, against
// a real PostgreSQL database per test. Time rules use the database clock, so
// rows are aged with UPDATE, never by sleeping.

// hs is one test's store with the helpers the handshake tests share.
type hs struct {
	t   *testing.T
	s   *store.Store
	ctx context.Context
}

func newHS(t *testing.T) *hs {
	t.Helper()
	return &hs{t: t, s: openStore(t), ctx: context.Background()}
}

// agent registers a new agent (the registration limit is raised: these
// tests need more agents than 30 an hour).
func (h *hs) agent(name string) pircan.Agent {
	h.t.Helper()
	a, created, err := h.s.Hello(h.ctx, name, name, pircan.Profile{}, 10000)
	if err != nil || !created {
		h.t.Fatalf("hello %s: %v created=%v", name, err, created)
	}
	return a
}

// agents registers n agents named prefix0…
func (h *hs) agents(prefix string, n int) []pircan.Agent {
	h.t.Helper()
	out := make([]pircan.Agent, n)
	for i := range out {
		out[i] = h.agent(fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

func act(a pircan.Agent) pircan.Actor { return pircan.Actor{Account: a.Account, AgentID: a.ID} }

// owner is the agent's owner acting from the portal.
func owner(a pircan.Agent) pircan.Actor {
	return pircan.Actor{Account: a.Account, AgentID: a.ID, ByOwner: true}
}

func (h *hs) contact(from, to pircan.Agent, scopes ...string) (pircan.ContactResult, error) {
	if len(scopes) == 0 {
		scopes = []string{pircan.ScopeMessage}
	}
	return h.s.Contact(h.ctx, act(from), pircan.NewContact{To: to.ID, Purpose: "working together",
		Scopes: scopes, TTLDays: 30}, pircan.ContactRule{Limits: pircan.DefaultLimits})
}

func (h *hs) mustContact(from, to pircan.Agent, scopes ...string) pircan.ContactResult {
	h.t.Helper()
	r, err := h.contact(from, to, scopes...)
	if err != nil {
		h.t.Fatalf("contact %s -> %s %v: %v", from.Name, to.Name, scopes, err)
	}
	return r
}

func (h *hs) decide(actor pircan.Actor, kind, requestID string) (pircan.DecisionResult, error) {
	return h.s.Decide(h.ctx, actor, pircan.Decision{Kind: kind, RequestID: requestID})
}

// agree makes an agreement requested by from and accepted by to.
func (h *hs) agree(from, to pircan.Agent, scopes ...string) string {
	h.t.Helper()
	r := h.mustContact(from, to, scopes...)
	if r.Status != "pending" {
		h.t.Fatalf("contact %s -> %s: status %s, want pending", from.Name, to.Name, r.Status)
	}
	res, err := h.decide(act(to), pircan.DecideAccept, r.RequestID)
	if err != nil {
		h.t.Fatalf("accept %s -> %s: %v", from.Name, to.Name, err)
	}
	return res.AgreementID
}

func (h *hs) send(from, to pircan.Agent, text, replyTo string) (pircan.SentMessage, error) {
	return h.s.Send(h.ctx, act(from), pircan.NewMessage{To: to.ID, Text: text, ReplyTo: replyTo}, pircan.SendRule{Limits: pircan.DefaultLimits})
}

func (h *hs) mustSend(from, to pircan.Agent, text, replyTo string) pircan.SentMessage {
	h.t.Helper()
	m, err := h.send(from, to, text, replyTo)
	if err != nil {
		h.t.Fatalf("send %s -> %s: %v", from.Name, to.Name, err)
	}
	return m
}

func (h *hs) exec(sql string, args ...any) int64 {
	h.t.Helper()
	tag, err := h.s.Pool().Exec(h.ctx, sql, args...)
	if err != nil {
		h.t.Fatalf("%s: %v", sql, err)
	}
	return tag.RowsAffected()
}

func (h *hs) count(sql string, args ...any) int {
	h.t.Helper()
	var n int
	if err := h.s.Pool().QueryRow(h.ctx, sql, args...).Scan(&n); err != nil {
		h.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func (h *hs) str(sql string, args ...any) string {
	h.t.Helper()
	var v string
	if err := h.s.Pool().QueryRow(h.ctx, sql, args...).Scan(&v); err != nil {
		h.t.Fatalf("%s: %v", sql, err)
	}
	return v
}

func (h *hs) requestStatus(id string) string {
	h.t.Helper()
	return h.str("SELECT status FROM contact_requests WHERE id = $1", id)
}

// note is one notification row.
type note struct{ agent, typ string }

// notesAfter returns the notifications with an id above after, and the
// highest id seen.
func (h *hs) notesAfter(after int64) ([]note, int64) {
	h.t.Helper()
	rows, err := h.s.Pool().Query(h.ctx, "SELECT id, agent_id::text, type FROM notifications WHERE id > $1 ORDER BY id", after)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var out []note
	for rows.Next() {
		var n note
		if err := rows.Scan(&after, &n.agent, &n.typ); err != nil {
			h.t.Fatal(err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		h.t.Fatal(err)
	}
	return out, after
}

// auditRow is one audit_log row.
type auditRow struct {
	id                  int64
	action, subject     string
	actorAgent, details string
	at                  time.Time
}

func (h *hs) auditAfter(after int64) []auditRow {
	h.t.Helper()
	rows, err := h.s.Pool().Query(h.ctx, `SELECT id, action, subject, coalesce(actor_agent::text, ''), details::text, at
		FROM audit_log WHERE id > $1 ORDER BY id`, after)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var out []auditRow
	for rows.Next() {
		var r auditRow
		if err := rows.Scan(&r.id, &r.action, &r.subject, &r.actorAgent, &r.details, &r.at); err != nil {
			h.t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		h.t.Fatal(err)
	}
	return out
}

func (h *hs) lastAuditID() int64 {
	h.t.Helper()
	return int64(h.count("SELECT coalesce(max(id), 0) FROM audit_log"))
}

func (h *hs) lastNoteID() int64 {
	h.t.Helper()
	return int64(h.count("SELECT coalesce(max(id), 0) FROM notifications"))
}

func actions(rows []auditRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.action
	}
	return out
}

func wantErr(t *testing.T, what string, err error, want any) {
	t.Helper()
	if !is(err, want) {
		t.Errorf("%s: got error %v, want %v", what, err, want)
	}
}

// is reports whether err is the refusal want: a store sentinel, or the
// core's refusal of that meaning (the rules the core decides in the
// store's transaction return its *pircan.Error), or a code of the core's.
func is(err error, want any) bool {
	var perr *pircan.Error
	refused := errors.As(err, &perr)
	switch w := want.(type) {
	case pircan.Code:
		return refused && perr.Code == w
	case error:
		if errors.Is(err, w) {
			return true
		}
		return refused && coreRefusals[w] != nil && coreRefusals[w](perr)
	}
	return false
}

// The refusals of SEND without an agreement while a request is pending.
var errRequestPending, errRequestAwaiting = errors.New("own request pending"), errors.New("their request pending")

// coreRefusals are the sentinels whose meaning the core's rules now decide.
var coreRefusals = map[error]func(*pircan.Error) bool{
	pircan.ErrRateLimited:      func(e *pircan.Error) bool { return e.Code == pircan.CodeRateLimited },
	pircan.ErrDuplicateRequest: func(e *pircan.Error) bool { return e.Code == pircan.CodeDuplicateRequest },
	pircan.ErrUnknownAgent:     func(e *pircan.Error) bool { return e.Code == pircan.CodeUnknownAgent },
	pircan.ErrNotAuthorized:    func(e *pircan.Error) bool { return e.Code == pircan.CodeNotAuthorized },
	errRequestPending: func(e *pircan.Error) bool {
		return e.Code == pircan.CodeNotAuthorized && strings.HasPrefix(e.Message, "Your contact request")
	},
	errRequestAwaiting: func(e *pircan.Error) bool {
		return e.Code == pircan.CodeNotAuthorized && strings.HasPrefix(e.Message, "This agent's contact request")
	},
}

const noSuchID = "0b5e4f3a-9c1d-4e2f-8a7b-6c5d4e3f2a1b"

// --- 1. CONTACT rules ---

func TestContactSelfAndUnknownAgent(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a := h.agent("alice")
	_, err := h.contact(a, a)
	wantErr(t, "contact self", err, pircan.CodeSelfContact)
	_, err = h.contact(a, pircan.Agent{ID: noSuchID})
	wantErr(t, "contact a valid UUID that is no agent", err, pircan.ErrUnknownAgent)
	if n := h.count("SELECT count(*) FROM contact_requests"); n != 0 {
		t.Fatalf("refused requests were stored: %d rows", n)
	}
}

func TestContactDuplicatePendingUntilExpired(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b := h.agent("alice"), h.agent("bob")
	first := h.mustContact(a, b)
	if first.Status != "pending" || first.RequestID == "" {
		t.Fatalf("first request: %+v", first)
	}
	_, err := h.contact(a, b, "task:assess") // other scopes: still one pending per target
	wantErr(t, "second request to the same target", err, pircan.ErrDuplicateRequest)
	// The other direction is another pair.
	h.mustContact(b, a)

	// 6 days 23 hours: still pending, still a duplicate.
	h.exec("UPDATE contact_requests SET created_at = created_at - interval '6 days 23 hours' WHERE id = $1", first.RequestID)
	_, err = h.contact(a, b)
	wantErr(t, "request while the first is 6d23h old", err, pircan.ErrDuplicateRequest)

	// 8 days: the first expired, and asking again is allowed.
	h.exec("UPDATE contact_requests SET created_at = created_at - interval '25 hours' WHERE id = $1", first.RequestID)
	again, err := h.contact(a, b)
	if err != nil || again.Status != "pending" || again.RequestID == first.RequestID {
		t.Fatalf("request after the first expired: %+v %v", again, err)
	}
	if st := h.requestStatus(first.RequestID); st != "expired" {
		t.Errorf("the stale request reads %q, want expired", st)
	}
	if n := h.count("SELECT count(*) FROM contact_requests WHERE from_agent = $1 AND to_agent = $2", a.ID, b.ID); n != 2 {
		t.Errorf("%d requests a->b, want 2", n)
	}
}

func TestContactAlreadyAgreed(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, c := h.agent("alice"), h.agent("carol")
	h.agree(a, c, "message", "task:x")

	_, err := h.contact(a, c, "message")
	wantErr(t, "requester asks again for message", err, pircan.CodeAlreadyAgreed)
	_, err = h.contact(c, a, "message")
	wantErr(t, "target asks for message (message goes both ways)", err, pircan.CodeAlreadyAgreed)
	_, err = h.contact(a, c, "task:x")
	wantErr(t, "requester asks again for its task:x", err, pircan.CodeAlreadyAgreed)
	_, err = h.contact(a, c, "task:x", "message")
	wantErr(t, "requester asks for a subset in another order", err, pircan.CodeAlreadyAgreed)

	// task:x was granted to a (the requester), not to c.
	r, err := h.contact(c, a, "task:x")
	if err != nil || r.Status != "pending" {
		t.Fatalf("target asks for task:x: %+v %v, want pending", r, err)
	}
	// A scope not yet granted makes a new request.
	r, err = h.contact(a, c, "message", "resource:read")
	if err != nil || r.Status != "pending" {
		t.Fatalf("requester asks for message+resource:read: %+v %v, want pending", r, err)
	}

	// Revoked or expired agreements cover nothing.
	d, e := h.agent("dave"), h.agent("erin")
	gd := h.agree(a, d)
	if err := h.s.Revoke(h.ctx, act(d), gd); err != nil {
		t.Fatal(err)
	}
	if _, err := h.contact(d, a); err != nil {
		t.Errorf("after a revoke: %v", err)
	}
	ge := h.agree(a, e)
	h.exec("UPDATE agreements SET expires_at = now() - interval '1 second' WHERE id = $1", ge)
	if _, err := h.contact(a, e); err != nil {
		t.Errorf("after the agreement expired: %v", err)
	}
}

func TestContactCooldownAfterDecline(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, d := h.agent("alice"), h.agent("dave")
	r := h.mustContact(a, d)
	if _, err := h.decide(act(d), pircan.DecideDecline, r.RequestID); err != nil {
		t.Fatal(err)
	}
	_, err := h.contact(a, d)
	wantErr(t, "ask again right after a decline", err, pircan.CodeCooldown)
	_, err = h.contact(a, d, "task:other")
	wantErr(t, "ask for other scopes after a decline", err, pircan.CodeCooldown)
	// The cooldown is one-way: d may still ask a.
	if _, err := h.contact(d, a); err != nil {
		t.Errorf("the decliner asks the requester: %v", err)
	}
	h.exec("UPDATE contact_requests SET decided_at = decided_at - interval '23 hours' WHERE id = $1", r.RequestID)
	_, err = h.contact(a, d)
	wantErr(t, "23 hours after the decline", err, pircan.CodeCooldown)
	h.exec("UPDATE contact_requests SET decided_at = decided_at - interval '61 minutes' WHERE id = $1", r.RequestID)
	if r, err := h.contact(a, d); err != nil || r.Status != "pending" {
		t.Errorf("24 hours after the decline: %+v %v", r, err)
	}

	// An owner's decline starts the cooldown too.
	o := h.agent("olga")
	if err := h.s.SetPolicy(h.ctx, owner(o), pircan.PolicyOwnerDecides); err != nil {
		t.Fatal(err)
	}
	r = h.mustContact(a, o)
	if _, err := h.decide(owner(o), pircan.DecideDecline, r.RequestID); err != nil {
		t.Fatal(err)
	}
	_, err = h.contact(a, o)
	wantErr(t, "ask again after the owner declined", err, pircan.CodeCooldown)

	// A cancel is no decline.
	c := h.agent("carol")
	r = h.mustContact(a, c)
	if _, err := h.decide(act(a), pircan.DecideCancel, r.RequestID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.contact(a, c); err != nil {
		t.Errorf("ask again after cancelling: %v", err)
	}
}

// A decline by the target's policy (deny) does not start a cooldown: the
// code counts only decided_by agent/owner. Each such request still counts
// against the hourly contact limit.
func TestContactPolicyDeclineHasNoCooldown(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, d := h.agent("alice"), h.agent("dora")
	if err := h.s.SetPolicy(h.ctx, act(d), pircan.PolicyDeny); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		r, err := h.contact(a, d)
		if err != nil || r.Status != "declined" || r.AgreementID != "" {
			t.Fatalf("request %d to a deny target: %+v %v, want declined without cooldown", i, r, err)
		}
	}
	if n := h.count("SELECT count(*) FROM contact_requests WHERE status = 'declined' AND decided_by = 'policy'"); n != 2 {
		t.Fatalf("%d policy declines stored, want 2", n)
	}
}

func TestContactTooManyPending(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	r := h.agent("requester")
	targets := h.agents("t", 22)
	for i := 0; i < 20; i++ {
		if i > 0 && i%10 == 0 { // dodge the 10/hour limit, staying well under 7 days
			h.exec("UPDATE contact_requests SET created_at = created_at - interval '2 hours' WHERE from_agent = $1", r.ID)
		}
		h.mustContact(r, targets[i])
	}
	h.exec("UPDATE contact_requests SET created_at = created_at - interval '2 hours' WHERE from_agent = $1", r.ID)
	_, err := h.contact(r, targets[20])
	wantErr(t, "21st pending request", err, pircan.CodeTooManyPending)
	// Precedence: a duplicate is named before the pending count.
	_, err = h.contact(r, targets[0])
	wantErr(t, "duplicate while at the pending limit", err, pircan.ErrDuplicateRequest)

	// A request leaving pending (cancelled) frees a place.
	first := h.str("SELECT id::text FROM contact_requests WHERE from_agent = $1 AND to_agent = $2", r.ID, targets[1].ID)
	if _, err := h.decide(act(r), pircan.DecideCancel, first); err != nil {
		t.Fatal(err)
	}
	if _, err := h.contact(r, targets[20]); err != nil {
		t.Fatalf("after a cancel: %v", err)
	}
	_, err = h.contact(r, targets[21])
	wantErr(t, "back at 20 pending", err, pircan.CodeTooManyPending)
	// An expired request (7 days) no longer counts.
	h.exec("UPDATE contact_requests SET created_at = created_at - interval '7 days' WHERE from_agent = $1 AND to_agent = $2", r.ID, targets[2].ID)
	if _, err := h.contact(r, targets[21]); err != nil {
		t.Fatalf("after one expired: %v", err)
	}
}

func TestContactRateLimited(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	r := h.agent("requester")
	targets := h.agents("t", 12)
	deny := targets[0] // requests a policy declines count too
	if err := h.s.SetPolicy(h.ctx, act(deny), pircan.PolicyDeny); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if _, err := h.contact(r, targets[i]); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	// Failed requests are not stored, so they do not count: nothing above
	// changed the count of 10.
	_, err := h.contact(r, targets[10])
	wantErr(t, "11th request within an hour", err, pircan.ErrRateLimited)
	_, err = h.contact(r, targets[1])
	wantErr(t, "a duplicate while rate limited (the limit is checked first)", err, pircan.ErrRateLimited)
	_, err = h.contact(r, r)
	wantErr(t, "self contact while rate limited", err, pircan.CodeSelfContact)
	_, err = h.contact(r, pircan.Agent{ID: noSuchID})
	wantErr(t, "unknown agent while rate limited", err, pircan.ErrUnknownAgent)
	// Other agents are not limited by r's requests.
	if _, err := h.contact(targets[11], targets[10]); err != nil {
		t.Fatalf("another agent: %v", err)
	}
	h.exec("UPDATE contact_requests SET created_at = created_at - interval '61 minutes' WHERE from_agent = $1", r.ID)
	if _, err := h.contact(r, targets[10]); err != nil {
		t.Fatalf("an hour later: %v", err)
	}
}

// --- 2. Policies ---

func TestPolicyAutoAccept(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b, c, tg := h.agent("alice"), h.agent("bob"), h.agent("carol"), h.agent("target")
	if err := h.s.SetPolicy(h.ctx, act(tg), pircan.PolicyAutoAccept); err != nil {
		t.Fatal(err)
	}
	if p, locked, err := h.s.Policy(h.ctx, tg.ID); err != nil || p != pircan.PolicyAutoAccept || locked {
		t.Fatalf("policy: %s locked=%v %v", p, locked, err)
	}
	r, err := h.contact(a, tg, "message")
	if err != nil || r.Status != "accepted" || r.AgreementID == "" {
		t.Fatalf("message request to auto-accept: %+v %v", r, err)
	}
	var requester, target, scopes, decidedBy string
	if err := h.s.Pool().QueryRow(h.ctx, `SELECT g.requester::text, g.target::text, array_to_string(g.scopes, ','), r.decided_by
		FROM agreements g JOIN contact_requests r ON r.id = g.request_id WHERE g.id = $1`, r.AgreementID).
		Scan(&requester, &target, &scopes, &decidedBy); err != nil {
		t.Fatal(err)
	}
	if requester != a.ID || target != tg.ID || scopes != "message" || decidedBy != "policy" {
		t.Errorf("agreement: requester %s target %s scopes %s decided_by %s", requester, target, scopes, decidedBy)
	}
	for _, tc := range []struct {
		from   pircan.Agent
		scopes []string
	}{{b, []string{"message", "task:x"}}, {c, []string{"task:x"}}} {
		r, err := h.contact(tc.from, tg, tc.scopes...)
		if err != nil || r.Status != "pending" || r.AgreementID != "" {
			t.Errorf("%v to auto-accept: %+v %v, want pending", tc.scopes, r, err)
		}
	}
	if n := h.count("SELECT count(*) FROM agreements"); n != 1 {
		t.Errorf("%d agreements, want 1", n)
	}
}

func TestPolicyDeny(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, d := h.agent("alice"), h.agent("dora")
	if err := h.s.SetPolicy(h.ctx, act(d), pircan.PolicyDeny); err != nil {
		t.Fatal(err)
	}
	r, err := h.contact(a, d, "message")
	if err != nil || r.Status != "declined" || r.AgreementID != "" {
		t.Fatalf("request to deny: %+v %v", r, err)
	}
	if st := h.requestStatus(r.RequestID); st != "declined" {
		t.Errorf("stored status %s", st)
	}
	if n := h.count("SELECT count(*) FROM agreements"); n != 0 {
		t.Errorf("%d agreements after a deny", n)
	}
	_, err = h.decide(act(d), pircan.DecideAccept, r.RequestID)
	wantErr(t, "accept a request the policy declined", err, pircan.ErrNotPending)
}

func TestPolicyOwnerDecides(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, o := h.agent("alice"), h.agent("olga")
	if err := h.s.SetPolicy(h.ctx, owner(o), pircan.PolicyOwnerDecides); err != nil {
		t.Fatal(err)
	}
	if p, locked, err := h.s.Policy(h.ctx, o.ID); err != nil || p != pircan.PolicyOwnerDecides || !locked {
		t.Fatalf("after the owner set owner-decides: %s locked=%v %v", p, locked, err)
	}
	r, err := h.contact(a, o)
	if err != nil || r.Status != "pending" {
		t.Fatalf("request to owner-decides: %+v %v", r, err)
	}
	_, err = h.decide(act(o), pircan.DecideAccept, r.RequestID)
	wantErr(t, "the agent accepts under owner-decides", err, pircan.ErrNotAuthorized)
	_, err = h.decide(act(o), pircan.DecideDecline, r.RequestID)
	wantErr(t, "the agent declines under owner-decides", err, pircan.ErrNotAuthorized)
	if st := h.requestStatus(r.RequestID); st != "pending" {
		t.Fatalf("after refused decisions the request is %s", st)
	}
	res, err := h.decide(owner(o), pircan.DecideAccept, r.RequestID)
	if err != nil || res.AgreementID == "" {
		t.Fatalf("the owner accepts: %+v %v", res, err)
	}
	if by := h.str("SELECT decided_by FROM contact_requests WHERE id = $1", r.RequestID); by != "owner" {
		t.Errorf("decided_by %s, want owner", by)
	}

	// The agent cannot change a locked policy; the owner can, and unlocks it.
	err = h.s.SetPolicy(h.ctx, act(o), pircan.PolicyAgentDecides)
	wantErr(t, "the agent changes a locked policy", err, pircan.ErrNotAuthorized)
	if p, locked, _ := h.s.Policy(h.ctx, o.ID); p != pircan.PolicyOwnerDecides || !locked {
		t.Fatalf("a refused change changed the policy: %s locked=%v", p, locked)
	}
	if err := h.s.SetPolicy(h.ctx, owner(o), pircan.PolicyAutoAccept); err != nil {
		t.Fatal(err)
	}
	if p, locked, _ := h.s.Policy(h.ctx, o.ID); p != pircan.PolicyAutoAccept || locked {
		t.Fatalf("after the owner chose auto-accept: %s locked=%v", p, locked)
	}
	if err := h.s.SetPolicy(h.ctx, act(o), pircan.PolicyDeny); err != nil {
		t.Fatalf("the agent changes its unlocked policy: %v", err)
	}
	if p, _, _ := h.s.Policy(h.ctx, o.ID); p != pircan.PolicyDeny {
		t.Fatalf("policy %s, want deny", p)
	}

	// The agent choosing owner-decides itself does not lock it.
	if err := h.s.SetPolicy(h.ctx, act(o), pircan.PolicyOwnerDecides); err != nil {
		t.Fatal(err)
	}
	if _, locked, _ := h.s.Policy(h.ctx, o.ID); locked {
		t.Error("the agent's own owner-decides locked the policy")
	}
	if err := h.s.SetPolicy(h.ctx, act(o), pircan.PolicyAgentDecides); err != nil {
		t.Errorf("the agent leaves its own owner-decides: %v", err)
	}
}

// --- 3. ACCEPT, DECLINE, CANCEL ---

func TestDecideWhoMay(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b, c := h.agent("alice"), h.agent("bob"), h.agent("carol")
	r := h.mustContact(a, b)
	for _, tc := range []struct {
		who  pircan.Agent
		kind string
	}{
		{c, pircan.DecideAccept}, {c, pircan.DecideDecline}, {c, pircan.DecideCancel},
		{a, pircan.DecideAccept}, {a, pircan.DecideDecline}, // the requester cannot decide
		{b, pircan.DecideCancel}, // the target cannot cancel
	} {
		_, err := h.decide(act(tc.who), tc.kind, r.RequestID)
		wantErr(t, tc.who.Name+" "+tc.kind, err, pircan.ErrNotFound)
		// The owner of a third party is no better.
		if tc.who.ID == c.ID {
			_, err = h.decide(owner(tc.who), tc.kind, r.RequestID)
			wantErr(t, "owner of "+tc.who.Name+" "+tc.kind, err, pircan.ErrNotFound)
		}
	}
	_, err := h.decide(act(b), pircan.DecideAccept, noSuchID)
	wantErr(t, "accept a request that does not exist", err, pircan.ErrNotFound)
	if st := h.requestStatus(r.RequestID); st != "pending" {
		t.Fatalf("refused decisions changed the request: %s", st)
	}
	if _, err := h.decide(act(a), pircan.DecideCancel, r.RequestID); err != nil {
		t.Fatalf("the requester cancels: %v", err)
	}
	if st := h.requestStatus(r.RequestID); st != "cancelled" {
		t.Fatalf("status %s, want cancelled", st)
	}
}

func TestDecideNotPending(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a := h.agent("alice")
	bs := h.agents("b", 4)
	all := []string{pircan.DecideAccept, pircan.DecideDecline, pircan.DecideCancel}
	check := func(what string, to pircan.Agent, id string) {
		t.Helper()
		for _, k := range all {
			who := act(to)
			if k == pircan.DecideCancel {
				who = act(a)
			}
			_, err := h.decide(who, k, id)
			wantErr(t, k+" of "+what, err, pircan.ErrNotPending)
		}
	}
	accepted := h.mustContact(a, bs[0])
	if _, err := h.decide(act(bs[0]), pircan.DecideAccept, accepted.RequestID); err != nil {
		t.Fatal(err)
	}
	check("an accepted request", bs[0], accepted.RequestID)

	declined := h.mustContact(a, bs[1])
	if _, err := h.decide(act(bs[1]), pircan.DecideDecline, declined.RequestID); err != nil {
		t.Fatal(err)
	}
	check("a declined request", bs[1], declined.RequestID)

	cancelled := h.mustContact(a, bs[2])
	if _, err := h.decide(act(a), pircan.DecideCancel, cancelled.RequestID); err != nil {
		t.Fatal(err)
	}
	check("a cancelled request", bs[2], cancelled.RequestID)

	old := h.mustContact(a, bs[3])
	h.exec("UPDATE contact_requests SET created_at = created_at - interval '6 days 23 hours' WHERE id = $1", old.RequestID)
	if st := h.requestStatus(old.RequestID); st != "pending" {
		t.Fatal(st)
	}
	h.exec("UPDATE contact_requests SET created_at = created_at - interval '1 hour' WHERE id = $1", old.RequestID)
	check("an expired request (7 days)", bs[3], old.RequestID)
	if n := h.count("SELECT count(*) FROM agreements"); n != 1 {
		t.Errorf("%d agreements, want 1", n)
	}

	// Just under 7 days a request can still be accepted.
	fresh := h.agent("fresh")
	r := h.mustContact(a, fresh)
	h.exec("UPDATE contact_requests SET created_at = created_at - interval '6 days 23 hours' WHERE id = $1", r.RequestID)
	if _, err := h.decide(act(fresh), pircan.DecideAccept, r.RequestID); err != nil {
		t.Errorf("accept at 6 days 23 hours: %v", err)
	}
}

func TestAcceptNarrowsNeverWidens(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b := h.agent("alice"), h.agent("bob")
	r := h.mustContact(a, b, "message", "task:x", "resource:read") // ttl 30
	for _, d := range []pircan.Decision{
		{Scopes: []string{"message", "task:y"}},
		{Scopes: []string{"task:z"}},
		{TTLDays: 31},
		{Scopes: []string{"message"}, TTLDays: 365},
	} {
		d.Kind, d.RequestID = pircan.DecideAccept, r.RequestID
		_, err := h.s.Decide(h.ctx, act(b), d)
		wantErr(t, fmt.Sprintf("accept %v ttl %d", d.Scopes, d.TTLDays), err, pircan.ErrInvalidGrant)
	}
	if st := h.requestStatus(r.RequestID); st != "pending" {
		t.Fatalf("a refused grant changed the request to %s", st)
	}
	if n := h.count("SELECT count(*) FROM agreements"); n != 0 {
		t.Fatalf("a refused grant made %d agreements", n)
	}

	res, err := h.s.Decide(h.ctx, act(b), pircan.Decision{Kind: pircan.DecideAccept, RequestID: r.RequestID,
		Scopes: []string{"task:x", "message"}, TTLDays: 7})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Scopes, []string{"task:x", "message"}) {
		t.Errorf("result scopes %v", res.Scopes)
	}
	if d := time.Until(res.ExpiresAt) - 7*24*time.Hour; d < -time.Minute || d > time.Minute {
		t.Errorf("expires_at %v is not now + 7 days (off by %v)", res.ExpiresAt, d)
	}
	var scopes string
	var off float64
	if err := h.s.Pool().QueryRow(h.ctx, `SELECT array_to_string(scopes, ','),
		abs(extract(epoch FROM expires_at - (now() + interval '7 days')))::float8 FROM agreements WHERE id = $1`, res.AgreementID).
		Scan(&scopes, &off); err != nil {
		t.Fatal(err)
	}
	if scopes != "task:x,message" || off > 60 {
		t.Errorf("stored agreement: scopes %s, expires_at %vs from now()+7d", scopes, off)
	}

	// As requested when ACCEPT names nothing.
	c := h.agent("carol")
	r = h.mustContact(c, b, "message", "task:x")
	h.exec("UPDATE contact_requests SET ttl_days = 12 WHERE id = $1", r.RequestID)
	res, err = h.decide(act(b), pircan.DecideAccept, r.RequestID)
	if err != nil || !slices.Equal(res.Scopes, []string{"message", "task:x"}) {
		t.Fatalf("plain accept: %+v %v", res, err)
	}
	if d := time.Until(res.ExpiresAt) - 12*24*time.Hour; d < -time.Minute || d > time.Minute {
		t.Errorf("plain accept expires %v, want now + 12 days", res.ExpiresAt)
	}
}

// --- 4. Races ---

func TestRacingAccepts(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b := h.agent("alice"), h.agent("bob")
	r := h.mustContact(a, b)
	const n = 20
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n)
	ids := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			res, err := h.decide(act(b), pircan.DecideAccept, r.RequestID)
			errs[i], ids[i] = err, res.AgreementID
		}(i)
	}
	close(start)
	wg.Wait()
	ok, notPending := 0, 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
			if ids[i] == "" {
				t.Error("a successful accept without an agreement id")
			}
		case errors.Is(err, pircan.ErrNotPending):
			notPending++
		default:
			t.Errorf("accept %d: %v", i, err)
		}
	}
	if ok != 1 || notPending != n-1 {
		t.Fatalf("%d accepted, %d not pending; want 1 and %d", ok, notPending, n-1)
	}
	if c := h.count("SELECT count(*) FROM agreements WHERE request_id = $1", r.RequestID); c != 1 {
		t.Fatalf("%d agreements for the request, want 1", c)
	}
	if c := h.count("SELECT count(*) FROM audit_log WHERE action = 'contact.accept'"); c != 1 {
		t.Errorf("%d contact.accept audit rows, want 1", c)
	}
	if c := h.count("SELECT count(*) FROM notifications WHERE type = 'contact_update'"); c != 1 {
		t.Errorf("%d contact_update notifications, want 1", c)
	}
}

func TestRacingContactsOfOnePair(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b := h.agent("alice"), h.agent("bob")
	const n = 10
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			_, errs[i] = h.contact(a, b)
		}(i)
	}
	close(start)
	wg.Wait()
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case !is(err, pircan.ErrDuplicateRequest):
			t.Errorf("contact %d: %v, want nil or duplicate", i, err)
		}
	}
	if ok != 1 {
		t.Errorf("%d requests succeeded, want 1", ok)
	}
	if c := h.count("SELECT count(*) FROM contact_requests WHERE status = 'pending'"); c != 1 {
		t.Fatalf("%d pending requests, want 1", c)
	}
	if c := h.count("SELECT count(*) FROM notifications"); c != 1 {
		t.Errorf("%d notifications, want 1", c)
	}
}

// One agent's racing CONTACTs to different targets must not beat the
// hourly limit (10) or the pending limit (20): the Store's rules hold in one
// transaction, and an agent may use several connections (or, later, MCP).
func TestRacingContactsKeepTheLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		prep      func(h *hs, r pircan.Agent, others []pircan.Agent)
		n, wantOK int
		wantErr   any
	}{
		{name: "hourly", n: 20, wantOK: 10, wantErr: pircan.ErrRateLimited},
		{name: "pending", n: 20, wantOK: 5, wantErr: pircan.CodeTooManyPending,
			prep: func(h *hs, r pircan.Agent, others []pircan.Agent) {
				// 15 pending, aged 2 hours: 5 places left, the hourly limit out of play.
				for i := 0; i < 15; i++ {
					if i%10 == 0 {
						h.exec("UPDATE contact_requests SET created_at = created_at - interval '2 hours' WHERE from_agent = $1", r.ID)
					}
					h.mustContact(r, others[i])
				}
				h.exec("UPDATE contact_requests SET created_at = created_at - interval '2 hours' WHERE from_agent = $1", r.ID)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHS(t)
			r := h.agent("requester")
			targets := h.agents("t", tc.n)
			if tc.prep != nil {
				tc.prep(h, r, h.agents("old", 15))
			}
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make([]error, tc.n)
			for i := 0; i < tc.n; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					<-start
					_, errs[i] = h.contact(r, targets[i])
				}(i)
			}
			close(start)
			wg.Wait()
			ok := 0
			for i, err := range errs {
				switch {
				case err == nil:
					ok++
				case !is(err, pircan.ErrRateLimited) && !is(err, pircan.CodeTooManyPending):
					t.Errorf("contact %d: %v", i, err)
				case !is(err, tc.wantErr):
					t.Logf("contact %d: %v (another limit)", i, err)
				}
			}
			if ok != tc.wantOK {
				t.Errorf("%d of %d racing requests succeeded, want %d (limit beaten by a race)", ok, tc.n, tc.wantOK)
			}
		})
	}
}

// Two agents asking each other at the same moment are two different pairs:
// both requests must be stored (the per-requester lock must not deadlock
// against the other request's foreign-key check on the same agents rows).
func TestRacingContactsBothDirections(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	const pairs = 30
	as, bs := h.agents("a", pairs), h.agents("b", pairs)
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, 2*pairs)
	for i := 0; i < pairs; i++ {
		for dir := 0; dir < 2; dir++ {
			wg.Add(1)
			go func(i, dir int) {
				defer wg.Done()
				from, to := as[i], bs[i]
				if dir == 1 {
					from, to = to, from
				}
				<-start
				_, errs[2*i+dir] = h.contact(from, to)
			}(i, dir)
		}
	}
	close(start)
	wg.Wait()
	failed := 0
	for i, err := range errs {
		if err != nil {
			failed++
			if failed <= 3 {
				t.Errorf("contact %d (pair %d, direction %d): %v", i, i/2, i%2, err)
			}
		}
	}
	if n := h.count("SELECT count(*) FROM contact_requests WHERE status = 'pending'"); n != 2*pairs || failed > 0 {
		t.Fatalf("%d of %d requests failed; %d pending, want %d", failed, 2*pairs, n, 2*pairs)
	}
}

// Racing replies to one conversation and racing sends of one sender: the
// locked agreement row keeps both budgets exact.
func TestRacingSendsKeepTheBudgets(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b := h.agent("alice"), h.agent("bob")
	h.agree(a, b)
	root := h.mustSend(a, b, "root", "")
	race := func(n int, send func() error) (ok int, errs []error) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				err := send()
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					ok++
				} else {
					errs = append(errs, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		return ok, errs
	}
	ok, errs := race(50, func() error { _, err := h.send(b, a, "re", root.MessageID); return err })
	if ok != 39 {
		t.Errorf("%d of 50 racing replies stored, want 39 (40 in the conversation)", ok)
	}
	for _, err := range errs {
		wantErr(t, "racing reply", err, pircan.CodeConversationBudget)
	}
	if n := h.count("SELECT count(*) FROM messages WHERE conversation_id = $1", root.ConversationID); n != 40 {
		t.Errorf("%d messages in the conversation, want 40", n)
	}
	// a has sent 1; 130 racing new messages leave exactly 119 places.
	ok, errs = race(130, func() error { _, err := h.send(a, b, "x", ""); return err })
	if ok != 119 {
		t.Errorf("%d of 130 racing sends stored, want 119 (120 per hour)", ok)
	}
	for _, err := range errs {
		wantErr(t, "racing send", err, pircan.ErrRateLimited)
	}
}

// --- 5. AGREEMENTS and REVOKE ---

func TestAgreementsListAndRevoke(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b, c, x := h.agent("alice"), h.agent("bob"), h.agent("carol"), h.agent("xena")
	g1 := h.agree(a, b, "message", "task:x")
	g2 := h.agree(c, a, "message")
	// bob has a second IRC account, bound later.
	h.exec("INSERT INTO agent_accounts (account_folded, account, agent_id, bound_at) VALUES ('bob-alt', 'Bob-Alt', $1, now() + interval '1 second')", b.ID)

	list, total, err := h.s.Agreements(h.ctx, a.ID, false, 10, 0)
	if err != nil || total != 2 || len(list) != 2 {
		t.Fatalf("alice's agreements: %+v total %d %v", list, total, err)
	}
	byID := map[string]pircan.AgreementItem{}
	for _, g := range list {
		byID[g.AgreementID] = g
	}
	if g := byID[g1]; g.Role != "requester" || g.With.AgentID != b.ID || g.With.Name != "bob" || g.Status != "active" ||
		!slices.Equal(g.Scopes, []string{"message", "task:x"}) || !slices.Equal(g.With.IRCAccounts, []string{"bob", "Bob-Alt"}) {
		t.Errorf("g1 as alice sees it: %+v", g)
	}
	if g := byID[g2]; g.Role != "target" || g.With.AgentID != c.ID || g.Status != "active" ||
		!slices.Equal(g.With.IRCAccounts, []string{"carol"}) {
		t.Errorf("g2 as alice sees it: %+v", g)
	}
	if list, total, _ := h.s.Agreements(h.ctx, b.ID, false, 10, 0); total != 1 || list[0].Role != "target" ||
		list[0].With.AgentID != a.ID || !slices.Equal(list[0].With.IRCAccounts, []string{"alice"}) {
		t.Errorf("bob's agreements: %+v", list)
	}
	if _, total, _ := h.s.Agreements(h.ctx, x.ID, true, 10, 0); total != 0 {
		t.Errorf("a third party sees %d agreements", total)
	}

	h.mustSend(a, b, "before the revoke", "")
	err = h.s.Revoke(h.ctx, act(x), g1)
	wantErr(t, "a third party revokes", err, pircan.ErrNotFound)
	err = h.s.Revoke(h.ctx, act(a), noSuchID)
	wantErr(t, "revoke an agreement that does not exist", err, pircan.ErrNotFound)
	if err := h.s.Revoke(h.ctx, act(a), g1); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	err = h.s.Revoke(h.ctx, act(a), g1)
	wantErr(t, "revoke twice", err, pircan.ErrNotActive)
	err = h.s.Revoke(h.ctx, act(b), g1)
	wantErr(t, "the other party revokes a revoked agreement", err, pircan.ErrNotActive)
	if by := h.str("SELECT revoked_by::text FROM agreements WHERE id = $1", g1); by != a.ID {
		t.Errorf("revoked_by %s", by)
	}
	_, err = h.send(a, b, "after the revoke", "")
	wantErr(t, "send after the revoke", err, pircan.ErrNotAuthorized)
	_, err = h.send(b, a, "after the revoke", "")
	wantErr(t, "send back after the revoke", err, pircan.ErrNotAuthorized)

	if list, total, _ := h.s.Agreements(h.ctx, a.ID, false, 10, 0); total != 1 || list[0].AgreementID != g2 {
		t.Errorf("active only after the revoke: %+v", list)
	}

	// g2 aged past its expiry.
	h.mustSend(c, a, "before expiry", "")
	h.exec("UPDATE agreements SET created_at = created_at - interval '31 days', expires_at = expires_at - interval '31 days' WHERE id = $1", g2)
	if list, total, _ := h.s.Agreements(h.ctx, a.ID, false, 10, 0); total != 0 {
		t.Errorf("active agreements after expiry: %+v", list)
	}
	list, total, err = h.s.Agreements(h.ctx, a.ID, true, 10, 0)
	if err != nil || total != 2 {
		t.Fatalf("all agreements: %+v %d %v", list, total, err)
	}
	status := map[string]string{}
	for _, g := range list {
		status[g.AgreementID] = g.Status
	}
	if status[g1] != "revoked" || status[g2] != "expired" {
		t.Errorf("statuses %v, want g1 revoked and g2 expired", status)
	}
	_, err = h.send(c, a, "after expiry", "")
	wantErr(t, "send under an expired agreement", err, pircan.ErrNotAuthorized)
	_, err = h.send(a, c, "after expiry", "")
	wantErr(t, "send back under an expired agreement", err, pircan.ErrNotAuthorized)
	err = h.s.Revoke(h.ctx, act(c), g2)
	wantErr(t, "revoke an expired agreement", err, pircan.ErrNotActive)

	// Paging: a page past the end still knows the total.
	if list, total, _ := h.s.Agreements(h.ctx, a.ID, true, 1, 5); len(list) != 0 || total != 2 {
		t.Errorf("past the end: %d items, total %d", len(list), total)
	}
}

// --- 6. SEND ---

func TestSendNeedsMessageAgreement(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b, c := h.agent("alice"), h.agent("bob"), h.agent("carol")
	_, err := h.send(a, b, "hi", "")
	wantErr(t, "send without an agreement", err, pircan.ErrNotAuthorized)
	_, err = h.send(a, a, "hi", "")
	wantErr(t, "send to self", err, pircan.ErrNotAuthorized)
	h.agree(a, b, "task:x")
	_, err = h.send(a, b, "hi", "")
	wantErr(t, "send under a task-only agreement", err, pircan.ErrNotAuthorized)
	_, err = h.send(b, a, "hi", "")
	wantErr(t, "send back under a task-only agreement", err, pircan.ErrNotAuthorized)
	r := h.mustContact(a, c) // pending is not enough
	_, err = h.send(a, c, "hi", "")
	wantErr(t, "send with a pending request", err, errRequestPending)
	_, err = h.send(c, a, "hi", "")
	wantErr(t, "send back with their request pending", err, errRequestAwaiting)
	if _, err := h.decide(act(c), pircan.DecideAccept, r.RequestID); err != nil {
		t.Fatal(err)
	}
	m, err := h.send(c, a, "hi", "") // the target may send too
	if err != nil || m.Hop != 0 || m.ConversationID != m.MessageID || m.AgreementID == "" {
		t.Fatalf("send under a message agreement: %+v %v", m, err)
	}
	if n := h.count("SELECT count(*) FROM messages"); n != 1 {
		t.Errorf("%d messages stored, want 1", n)
	}
}

func TestSendReplyLinksConversation(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, c, d := h.agent("alice"), h.agent("carol"), h.agent("dave")
	gc := h.agree(a, c)
	h.agree(d, a)
	m1 := h.mustSend(a, c, "first", "")
	if m1.Hop != 0 || m1.ConversationID != m1.MessageID || m1.AgreementID != gc {
		t.Fatalf("first message: %+v", m1)
	}
	m2 := h.mustSend(c, a, "reply", m1.MessageID)
	if m2.Hop != 1 || m2.ConversationID != m1.MessageID {
		t.Fatalf("reply: %+v", m2)
	}
	m3 := h.mustSend(a, c, "reply to the reply", m2.MessageID)
	if m3.Hop != 2 || m3.ConversationID != m1.MessageID {
		t.Fatalf("second reply: %+v", m3)
	}
	// Replying to one's own message is fine too.
	m4 := h.mustSend(a, c, "follow-up", m1.MessageID)
	if m4.Hop != 1 || m4.ConversationID != m1.MessageID {
		t.Fatalf("own follow-up: %+v", m4)
	}
	if rt := h.str("SELECT reply_to::text FROM messages WHERE id = $1", m3.MessageID); rt != m2.MessageID {
		t.Errorf("stored reply_to %s, want %s", rt, m2.MessageID)
	}

	md := h.mustSend(d, a, "from dave", "")
	_, err := h.send(a, c, "wrong thread", md.MessageID)
	wantErr(t, "reply to a message between other parties", err, pircan.CodeInvalidArgument)
	_, err = h.send(d, a, "listening in", m1.MessageID)
	wantErr(t, "a third party replies to a's message to c", err, pircan.CodeInvalidArgument)
	_, err = h.send(a, c, "nothing", noSuchID)
	wantErr(t, "reply to a message that does not exist", err, pircan.CodeInvalidArgument)
	if n := h.count("SELECT count(*) FROM messages"); n != 5 {
		t.Errorf("%d messages, want 5", n)
	}
}

func TestSendLoopLimit(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b := h.agent("alice"), h.agent("bob")
	h.agree(a, b)
	parties := []pircan.Agent{a, b}
	prev := h.mustSend(a, b, "hop 0", "")
	var hop7 string
	for hop := 1; hop <= 8; hop++ {
		from, to := parties[hop%2], parties[(hop+1)%2]
		m, err := h.send(from, to, fmt.Sprintf("hop %d", hop), prev.MessageID)
		if err != nil || m.Hop != hop {
			t.Fatalf("reply at hop %d: %+v %v", hop, m, err)
		}
		if hop == 7 {
			hop7 = m.MessageID
		}
		prev = m
	}
	_, err := h.send(a, b, "hop 9", prev.MessageID)
	wantErr(t, "reply at hop 9", err, pircan.CodeLoopLimit)
	// Another branch at depth 8 is still allowed.
	if m, err := h.send(a, b, "hop 8 again", hop7); err != nil || m.Hop != 8 {
		t.Errorf("second reply at hop 8: %+v %v", m, err)
	}
	if n := h.count("SELECT count(*) FROM messages WHERE hop > 8"); n != 0 {
		t.Errorf("%d messages beyond hop 8", n)
	}
}

func TestSendConversationBudget(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b := h.agent("alice"), h.agent("bob")
	h.agree(a, b)
	root := h.mustSend(a, b, "root", "")
	parties := []pircan.Agent{b, a}
	for i := 1; i < 40; i++ { // 40 messages in the conversation, all within the hop limit
		from, to := parties[i%2], parties[(i+1)%2]
		if _, err := h.send(from, to, "reply", root.MessageID); err != nil {
			t.Fatalf("message %d of the conversation: %v", i+1, err)
		}
	}
	_, err := h.send(b, a, "41st", root.MessageID)
	wantErr(t, "41st message of a conversation within an hour", err, pircan.CodeConversationBudget)
	_, err = h.send(a, b, "41st", root.MessageID)
	wantErr(t, "41st message by the other party", err, pircan.CodeConversationBudget)
	// A new conversation has its own budget.
	if _, err := h.send(a, b, "new topic", ""); err != nil {
		t.Fatalf("a new conversation: %v", err)
	}
	h.exec("UPDATE messages SET created_at = created_at - interval '61 minutes' WHERE conversation_id = $1", root.ConversationID)
	if _, err := h.send(b, a, "an hour later", root.MessageID); err != nil {
		t.Fatalf("after an hour: %v", err)
	}
}

func TestSendRatePerSenderPerAgreement(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b, c := h.agent("alice"), h.agent("bob"), h.agent("carol")
	h.agree(a, b)
	h.agree(a, c)
	for i := 0; i < 120; i++ {
		if _, err := h.send(a, b, "x", ""); err != nil {
			t.Fatalf("message %d: %v", i+1, err)
		}
	}
	_, err := h.send(a, b, "x", "")
	wantErr(t, "121st message within an hour", err, pircan.ErrRateLimited)
	if _, err := h.send(b, a, "x", ""); err != nil {
		t.Errorf("the other sender has its own budget: %v", err)
	}
	if _, err := h.send(a, c, "x", ""); err != nil {
		t.Errorf("another agreement has its own budget: %v", err)
	}
	h.exec("UPDATE messages SET created_at = created_at - interval '61 minutes' WHERE sender = $1 AND recipient = $2", a.ID, b.ID)
	if _, err := h.send(a, b, "x", ""); err != nil {
		t.Errorf("an hour later: %v", err)
	}
}

func TestSendStoresLongTextWhole(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b := h.agent("alice"), h.agent("bob")
	h.agree(a, b)
	text := strings.Repeat("é", 29999) + "ab" // 60,000 bytes of UTF-8
	if len(text) != 60000 {
		t.Fatal(len(text))
	}
	m := h.mustSend(a, b, text, "")
	if n := h.count("SELECT octet_length(text) FROM messages WHERE id = $1", m.MessageID); n != 60000 {
		t.Fatalf("stored %d bytes", n)
	}
	msgs, _, err := h.s.Inbox(h.ctx, act(b), 5, nil)
	if err != nil || len(msgs) != 1 || msgs[0].Text != text {
		t.Fatalf("inbox: %d messages %v, text whole: %v", len(msgs), err, len(msgs) == 1 && msgs[0].Text == text)
	}
}

// --- 7. INBOX ---

func TestInboxOldestFirst(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b, c := h.agent("alice"), h.agent("bob"), h.agent("carol")
	h.agree(b, a)
	h.agree(c, a)
	var ids []string
	for i := 0; i < 5; i++ {
		from := b
		if i%2 == 1 {
			from = c
		}
		m := h.mustSend(from, a, fmt.Sprintf("m%d", i), "")
		// created_at is the transaction's start; space them so the order is certain.
		h.exec("UPDATE messages SET created_at = created_at - make_interval(mins => $2::int) WHERE id = $1", m.MessageID, 10-i)
		ids = append(ids, m.MessageID)
	}
	h.mustSend(a, b, "not for alice", "")

	msgs, remaining, err := h.s.Inbox(h.ctx, act(a), 2, nil)
	if err != nil || len(msgs) != 2 || remaining != 3 {
		t.Fatalf("first inbox: %d messages, remaining %d, %v", len(msgs), remaining, err)
	}
	// Reading changes nothing; only MarkRead (after delivery) does.
	if n := h.count("SELECT count(*) FROM messages WHERE read_at IS NOT NULL"); n != 0 {
		t.Fatalf("Inbox marked %d messages read", n)
	}
	if again, _, err := h.s.Inbox(h.ctx, act(a), 2, nil); err != nil || len(again) != 2 || again[0].MessageID != ids[0] {
		t.Fatalf("inbox again before MarkRead: %+v %v", again, err)
	}
	if skipped, rem, err := h.s.Inbox(h.ctx, act(a), 2, []string{ids[0]}); err != nil || len(skipped) != 2 ||
		skipped[0].MessageID != ids[1] || skipped[1].MessageID != ids[2] || rem != 2 {
		t.Fatalf("inbox skipping the first: %+v remaining %d %v", skipped, rem, err)
	}
	for range 2 { // marking twice is harmless
		if err := h.s.MarkRead(h.ctx, []pircan.Reads{{Actor: act(a), IDs: []string{ids[0], ids[1]}}}); err != nil {
			t.Fatal(err)
		}
	}
	if msgs[0].MessageID != ids[0] || msgs[1].MessageID != ids[1] || msgs[0].Text != "m0" ||
		msgs[0].From.AgentID != b.ID || msgs[0].From.Name != "bob" || msgs[1].From.AgentID != c.ID ||
		msgs[0].Hop != 0 || msgs[0].ConversationID != ids[0] || msgs[0].AgreementID == "" {
		t.Fatalf("first inbox: %+v", msgs)
	}
	read := h.count("SELECT count(*) FROM messages WHERE recipient = $1 AND read_at IS NOT NULL", a.ID)
	onlyThose := h.count("SELECT count(*) FROM messages WHERE read_at IS NOT NULL AND id IN ($1, $2)", ids[0], ids[1])
	if read != 2 || onlyThose != 2 {
		t.Fatalf("%d marked read (%d of the returned ones), want exactly the 2 returned", read, onlyThose)
	}
	if n := h.count("SELECT count(*) FROM messages WHERE recipient = $1 AND read_at IS NOT NULL", b.ID); n != 0 {
		t.Errorf("bob's message was marked read by alice's inbox")
	}
	if err := h.s.MarkRead(h.ctx, []pircan.Reads{{Actor: act(b), IDs: []string{ids[2]}}}); err != nil {
		t.Fatal(err)
	}
	if n := h.count("SELECT count(*) FROM messages WHERE read_at IS NOT NULL AND id = $1", ids[2]); n != 0 {
		t.Fatal("bob marked a message to alice read")
	}
	msgs, remaining, err = h.s.Inbox(h.ctx, act(a), 10, nil)
	if err != nil || len(msgs) != 3 || remaining != 0 || msgs[0].MessageID != ids[2] || msgs[2].MessageID != ids[4] {
		t.Fatalf("second inbox: %+v remaining %d %v", msgs, remaining, err)
	}
	if err := h.s.MarkRead(h.ctx, []pircan.Reads{{Actor: act(a), IDs: []string{ids[2], ids[3], ids[4]}}}); err != nil {
		t.Fatal(err)
	}
	msgs, remaining, err = h.s.Inbox(h.ctx, act(a), 10, nil)
	if err != nil || len(msgs) != 0 || remaining != 0 {
		t.Fatalf("empty inbox: %+v remaining %d %v", msgs, remaining, err)
	}
}

// One MarkRead marks several readers' messages (the core's batch of what
// was delivered meanwhile): each reader only its own, each audited once
// under its own name with its own ids, none for a reader whose messages
// were read already; an id delivered to another reader is not marked.
func TestMarkReadSeveralReaders(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b, c := h.agent("alice"), h.agent("bob"), h.agent("carol")
	h.agree(a, b)
	h.agree(c, b)
	toB1, toB2 := h.mustSend(a, b, "one", ""), h.mustSend(c, b, "two", "")
	toA, toC := h.mustSend(b, a, "three", ""), h.mustSend(b, c, "four", "")
	if err := h.s.MarkRead(h.ctx, []pircan.Reads{{Actor: act(c), IDs: []string{toC.MessageID}}}); err != nil {
		t.Fatal(err)
	}
	err := h.s.MarkRead(h.ctx, []pircan.Reads{
		{Actor: act(b), IDs: []string{toB1.MessageID, toB2.MessageID, toA.MessageID}}, // toA is alice's
		{Actor: act(a), IDs: []string{toA.MessageID}},
		{Actor: act(c), IDs: []string{toC.MessageID}}, // read already
		{Actor: act(a)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []pircan.SentMessage{toB1, toB2, toA, toC} {
		if n := h.count("SELECT count(*) FROM messages WHERE id = $1 AND read_at IS NOT NULL", m.MessageID); n != 1 {
			t.Errorf("message %s not marked read", m.MessageID)
		}
	}
	audited := func(reader pircan.Agent) []string {
		var ids []string
		rows, err := h.s.Pool().Query(h.ctx, `SELECT jsonb_array_elements_text(details->'message_ids') FROM audit_log
			WHERE action = 'message.read' AND actor_agent = $1 AND subject = $1::text AND actor_account = $2`, reader.ID, act(reader).Account)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return ids
	}
	wantB := []string{toB1.MessageID, toB2.MessageID}
	slices.Sort(wantB)
	if got := audited(b); !slices.Equal(got, wantB) {
		t.Errorf("bob's audited reads %v, want %v", got, wantB)
	}
	if got := audited(a); !slices.Equal(got, []string{toA.MessageID}) {
		t.Errorf("alice's audited reads %v, want her one message", got)
	}
	if got := audited(c); !slices.Equal(got, []string{toC.MessageID}) {
		t.Errorf("carol's audited reads %v, want the one from her first MarkRead only", got)
	}
	if n := h.count("SELECT count(*) FROM audit_log WHERE action = 'message.read'"); n != 3 {
		t.Errorf("%d message.read entries, want 3 (carol's first, bob's, alice's)", n)
	}
}

// Racing readers may see the same unread messages; each is marked read,
// and audited, exactly once however many mark it.
func TestInboxRacingReadersMarkEachMessageOnce(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a := h.agent("alice")
	senders := h.agents("s", 4)
	want := map[string]bool{}
	for _, s := range senders {
		h.agree(s, a)
	}
	for i := 0; i < 200; i++ { // 50 per sender: within the 120/hour budget
		m := h.mustSend(senders[i%4], a, fmt.Sprintf("m%d", i), "")
		want[m.MessageID] = true
	}
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for {
				msgs, _, err := h.s.Inbox(h.ctx, act(a), 7, nil)
				if err != nil {
					t.Error(err)
					return
				}
				var ids []string
				for _, m := range msgs {
					ids = append(ids, m.MessageID)
				}
				if err := h.s.MarkRead(h.ctx, []pircan.Reads{{Actor: act(a), IDs: ids}}); err != nil {
					t.Error(err)
					return
				}
				if len(msgs) == 0 {
					return
				}
				if len(msgs) > 7 {
					t.Errorf("inbox returned %d messages for limit 7", len(msgs))
				}
				mu.Lock()
				for _, m := range msgs {
					got[m.MessageID]++
				}
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	for id := range got {
		if !want[id] {
			t.Errorf("message %s was never sent to alice", id)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d distinct messages returned, want %d", len(got), len(want))
	}
	if n := h.count("SELECT count(*) FROM messages WHERE recipient = $1 AND read_at IS NULL", a.ID); n != 0 {
		t.Errorf("%d messages left unread", n)
	}
	// Every returned message is in exactly one message.read audit row.
	audited := map[string]int{}
	for _, r := range h.auditAfter(0) {
		if r.action != "message.read" {
			continue
		}
		for id := range want {
			if strings.Contains(r.details, id) {
				audited[id]++
			}
		}
	}
	for id := range want {
		if audited[id] != 1 {
			t.Errorf("message %s is in %d message.read audit rows", id, audited[id])
		}
	}
}

// --- 8. Notifications ---

func TestNotificationsForEveryChange(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b, c, auto, o := h.agent("alice"), h.agent("bob"), h.agent("carol"), h.agent("auto"), h.agent("olga")
	if err := h.s.SetPolicy(h.ctx, act(auto), pircan.PolicyAutoAccept); err != nil {
		t.Fatal(err)
	}
	if err := h.s.SetPolicy(h.ctx, owner(o), pircan.PolicyOwnerDecides); err != nil {
		t.Fatal(err)
	}
	last := h.lastNoteID()
	expect := func(what string, want ...note) {
		t.Helper()
		var got []note
		got, last = h.notesAfter(last)
		// A change's notifications are written in agent-id order (see
		// Decide), not in the order a reader would name them.
		byAgent := func(x, y note) int { return strings.Compare(x.agent, y.agent) }
		slices.SortFunc(got, byAgent)
		slices.SortFunc(want, byAgent)
		if !slices.Equal(got, want) {
			t.Errorf("%s: notifications %v, want %v", what, got, want)
		}
	}
	// sameTx checks that the newest notification and audit row were written
	// with the change's own now() (one transaction).
	sameTx := func(what, changeAt string, args ...any) {
		t.Helper()
		q := "SELECT count(*) FROM (SELECT (SELECT created_at FROM notifications ORDER BY id DESC LIMIT 1) AS n, " +
			"(SELECT at FROM audit_log ORDER BY id DESC LIMIT 1) AS a, (" + changeAt + ") AS c) t WHERE n = c AND a = c"
		if h.count(q, args...) != 1 {
			t.Errorf("%s: the notification, audit row and change do not share one transaction's now()", what)
		}
	}

	r1 := h.mustContact(a, b)
	expect("pending request", note{b.ID, pircan.NotifyContactRequest})
	sameTx("pending request", "SELECT created_at FROM contact_requests WHERE id = $1", r1.RequestID)

	ra := h.mustContact(a, auto)
	if ra.Status != "accepted" {
		t.Fatal(ra.Status)
	}
	expect("auto-accept", note{auto.ID, pircan.NotifyAgreement})
	sameTx("auto-accept", "SELECT created_at FROM agreements WHERE id = $1", ra.AgreementID)

	res, err := h.decide(act(b), pircan.DecideAccept, r1.RequestID)
	if err != nil {
		t.Fatal(err)
	}
	expect("accept", note{a.ID, pircan.NotifyContactUpdate})
	sameTx("accept", "SELECT decided_at FROM contact_requests WHERE id = $1", r1.RequestID)

	r2 := h.mustContact(c, b)
	expect("second request", note{b.ID, pircan.NotifyContactRequest})
	if _, err := h.decide(act(b), pircan.DecideDecline, r2.RequestID); err != nil {
		t.Fatal(err)
	}
	expect("decline", note{c.ID, pircan.NotifyContactUpdate})
	sameTx("decline", "SELECT decided_at FROM contact_requests WHERE id = $1", r2.RequestID)

	r3 := h.mustContact(a, c)
	expect("third request", note{c.ID, pircan.NotifyContactRequest})
	if _, err := h.decide(act(a), pircan.DecideCancel, r3.RequestID); err != nil {
		t.Fatal(err)
	}
	expect("cancel", note{c.ID, pircan.NotifyContactUpdate})

	r4 := h.mustContact(a, o)
	expect("request to owner-decides", note{o.ID, pircan.NotifyContactRequest})
	if _, err := h.decide(owner(o), pircan.DecideAccept, r4.RequestID); err != nil {
		t.Fatal(err)
	}
	expect("owner accepts", note{a.ID, pircan.NotifyContactUpdate}, note{o.ID, pircan.NotifyAgreement})

	m := h.mustSend(a, b, "hello", "")
	expect("send", note{b.ID, pircan.NotifyMessage})
	sameTx("send", "SELECT created_at FROM messages WHERE id = $1", m.MessageID)

	if _, _, err := h.s.Inbox(h.ctx, act(b), 5, nil); err != nil {
		t.Fatal(err)
	}
	expect("inbox (no notification)")

	if err := h.s.Revoke(h.ctx, act(b), res.AgreementID); err != nil {
		t.Fatal(err)
	}
	expect("revoke by the target", note{a.ID, pircan.NotifyAgreement})
	sameTx("revoke", "SELECT revoked_at FROM agreements WHERE id = $1", res.AgreementID)
	if err := h.s.Revoke(h.ctx, act(a), ra.AgreementID); err != nil {
		t.Fatal(err)
	}
	expect("revoke by the requester", note{auto.ID, pircan.NotifyAgreement})
}

func TestFailedChangesWriteNothing(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b, c := h.agent("alice"), h.agent("bob"), h.agent("carol")
	r := h.mustContact(a, b)
	h.agree(a, c)
	if err := h.s.SetPolicy(h.ctx, owner(c), pircan.PolicyOwnerDecides); err != nil {
		t.Fatal(err)
	}
	notes, audits := h.lastNoteID(), h.lastAuditID()
	fails := []struct {
		what string
		do   func() error
	}{
		{"duplicate request", func() error { _, err := h.contact(a, b); return err }},
		{"already agreed", func() error { _, err := h.contact(c, a); return err }},
		{"grant too wide", func() error {
			_, err := h.s.Decide(h.ctx, act(b), pircan.Decision{Kind: pircan.DecideAccept, RequestID: r.RequestID, TTLDays: 90})
			return err
		}},
		{"third party declines", func() error { _, err := h.decide(act(c), pircan.DecideDecline, r.RequestID); return err }},
		{"send without agreement", func() error { _, err := h.send(b, c, "secret", ""); return err }},
		{"bad reply_to", func() error { _, err := h.send(a, c, "secret", noSuchID); return err }},
		{"third party revokes", func() error {
			return h.s.Revoke(h.ctx, act(b), h.str("SELECT id::text FROM agreements LIMIT 1"))
		}},
		{"locked policy", func() error { return h.s.SetPolicy(h.ctx, act(c), pircan.PolicyDeny) }},
	}
	for _, f := range fails {
		if err := f.do(); err == nil {
			t.Errorf("%s: succeeded", f.what)
		}
	}
	if got, _ := h.notesAfter(notes); len(got) != 0 {
		t.Errorf("failed changes wrote notifications: %v", got)
	}
	if got := h.auditAfter(audits); len(got) != 0 {
		t.Errorf("failed changes wrote audit rows: %v", actions(got))
	}
	// An empty INBOX is no change either.
	if _, _, err := h.s.Inbox(h.ctx, act(b), 5, nil); err != nil {
		t.Fatal(err)
	}
	if got := h.auditAfter(audits); len(got) != 0 {
		t.Errorf("an empty inbox wrote audit rows: %v", actions(got))
	}
}

func noticeMap(ns []pircan.Notification) map[string]int {
	out := map[string]int{}
	for _, n := range ns {
		if _, dup := out[n.Type]; dup {
			out[n.Type+" (twice)"] = n.Count
		}
		out[n.Type] = n.Count
	}
	return out
}

func TestClaimNoticesCoalesces(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b, c, d := h.agent("alice"), h.agent("bob"), h.agent("carol"), h.agent("dave")
	h.agree(b, a)
	h.agree(a, c) // a gets contact_update
	// Delivered so far: clear them.
	if _, err := h.s.ClaimNotices(h.ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		h.mustSend(b, a, "x", "")
	}
	h.mustContact(c, a, "task:x")
	h.mustContact(d, a)
	r := h.mustContact(a, d)
	if _, err := h.decide(act(d), pircan.DecideDecline, r.RequestID); err != nil {
		t.Fatal(err)
	}
	h.mustSend(c, a, "y", "")
	// One message read before delivery: the count is the current one.
	if msgs, _, err := h.s.Inbox(h.ctx, act(a), 1, nil); err != nil || len(msgs) != 1 {
		t.Fatal(msgs, err)
	} else if err := h.s.MarkRead(h.ctx, []pircan.Reads{{Actor: act(a), IDs: []string{msgs[0].MessageID}}}); err != nil {
		t.Fatal(err)
	}
	waiting, err := h.s.AgentsWithWaitingNotices(h.ctx)
	if err != nil || !slices.Contains(waiting, a.ID) {
		t.Fatalf("waiting agents %v %v", waiting, err)
	}
	ns, err := h.s.ClaimNotices(h.ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := noticeMap(ns)
	want := map[string]int{pircan.NotifyMessage: 3, pircan.NotifyContactRequest: 2, pircan.NotifyContactUpdate: -1}
	if len(ns) != 3 || !mapsEqual(got, want) {
		t.Fatalf("notices %+v, want %v", ns, want)
	}
	if n := h.count("SELECT count(*) FROM notifications WHERE agent_id = $1 AND delivered_at IS NULL", a.ID); n != 0 {
		t.Errorf("%d notifications still waiting after the claim", n)
	}
	if ns, err := h.s.ClaimNotices(h.ctx, a.ID); err != nil || len(ns) != 0 {
		t.Fatalf("second claim: %+v %v", ns, err)
	}
	if waiting, _ := h.s.AgentsWithWaitingNotices(h.ctx); slices.Contains(waiting, a.ID) {
		t.Errorf("alice still waiting after delivery")
	}
	// Other agents' notifications were not taken.
	if n := h.count("SELECT count(*) FROM notifications WHERE agent_id = $1 AND delivered_at IS NULL", c.ID); n == 0 {
		t.Errorf("carol's notifications were delivered by alice's claim")
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestRacingClaimsDeliverOnce(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b := h.agent("alice"), h.agent("bob")
	h.agree(b, a)
	for i := 0; i < 5; i++ {
		h.mustSend(b, a, "x", "")
	}
	waiting := h.count("SELECT count(*) FROM notifications WHERE agent_id = $1 AND delivered_at IS NULL", a.ID)
	if waiting != 6 { // contact_request and 5 messages
		t.Fatalf("%d waiting notifications, want 6", waiting)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	got := map[string]int{}
	start := make(chan struct{})
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ns, err := h.s.ClaimNotices(h.ctx, a.ID)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, n := range ns {
				got[n.Type]++
			}
		}()
	}
	close(start)
	wg.Wait()
	// Each notification row is claimed once; a type may reach two claimers
	// only if its rows were split between them, never more often than rows.
	if got[pircan.NotifyContactRequest] != 1 || got[pircan.NotifyMessage] < 1 || got[pircan.NotifyMessage] > 5 {
		t.Errorf("racing claims delivered %v", got)
	}
	if n := h.count("SELECT count(*) FROM notifications WHERE agent_id = $1 AND delivered_at IS NULL", a.ID); n != 0 {
		t.Errorf("%d notifications left waiting", n)
	}
}

func TestNoticesOlderThanADayAreNotDelivered(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b := h.agent("alice"), h.agent("bob")
	h.agree(b, a)
	if _, err := h.s.ClaimNotices(h.ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	h.mustSend(a, b, "old", "")
	h.exec("UPDATE notifications SET created_at = created_at - interval '24 hours 1 minute' WHERE agent_id = $1", b.ID)
	if waiting, _ := h.s.AgentsWithWaitingNotices(h.ctx); slices.Contains(waiting, b.ID) {
		t.Errorf("a day-old notification makes bob waiting")
	}
	if ns, err := h.s.ClaimNotices(h.ctx, b.ID); err != nil || len(ns) != 0 {
		t.Fatalf("day-old notifications delivered: %+v %v", ns, err)
	}
	h.mustSend(a, b, "new", "")
	h.exec("UPDATE notifications SET created_at = created_at - interval '23 hours' WHERE agent_id = $1 AND delivered_at IS NULL AND created_at > now() - interval '1 hour'", b.ID)
	ns, err := h.s.ClaimNotices(h.ctx, b.ID)
	if err != nil || len(ns) != 1 || ns[0].Type != pircan.NotifyMessage || ns[0].Count != 2 {
		t.Fatalf("23-hour-old notification: %+v %v (count is the current unread, 2)", ns, err)
	}
}

// --- 9. Audit ---

func TestAuditEveryChangeWithoutContent(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	const purpose, text = "PURPOSEMARK share the zebra files", "TEXTMARK the zebra files are ready"
	a, b, c, auto := h.agent("alice"), h.agent("bob"), h.agent("carol"), h.agent("auto")
	contact := func(from, to pircan.Agent, scopes ...string) pircan.ContactResult {
		t.Helper()
		r, err := h.s.Contact(h.ctx, act(from), pircan.NewContact{To: to.ID, Purpose: purpose, Scopes: scopes, TTLDays: 30}, pircan.ContactRule{Limits: pircan.DefaultLimits})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	start := h.lastAuditID()
	type step struct {
		do      func() string // returns the subject the audit row must name
		actions []string
		actor   pircan.Agent
	}
	var r1, r2, r3 pircan.ContactResult
	var g pircan.DecisionResult
	var m pircan.SentMessage
	steps := []step{
		{func() string {
			if err := h.s.SetPolicy(h.ctx, act(auto), pircan.PolicyAutoAccept); err != nil {
				t.Fatal(err)
			}
			return auto.ID
		}, []string{"policy.set"}, auto},
		{func() string { r1 = contact(a, b, "message"); return r1.RequestID }, []string{"contact.request"}, a},
		{func() string {
			var err error
			if g, err = h.decide(act(b), pircan.DecideAccept, r1.RequestID); err != nil {
				t.Fatal(err)
			}
			return r1.RequestID
		}, []string{"contact.accept", "agreement.create"}, b},
		{func() string { r2 = contact(c, b, "task:x"); return r2.RequestID }, []string{"contact.request"}, c},
		{func() string {
			if _, err := h.decide(act(b), pircan.DecideDecline, r2.RequestID); err != nil {
				t.Fatal(err)
			}
			return r2.RequestID
		}, []string{"contact.decline"}, b},
		{func() string { r3 = contact(a, c, "message"); return r3.RequestID }, []string{"contact.request"}, a},
		{func() string {
			if _, err := h.decide(act(a), pircan.DecideCancel, r3.RequestID); err != nil {
				t.Fatal(err)
			}
			return r3.RequestID
		}, []string{"contact.cancel"}, a},
		{func() string {
			r := contact(c, auto, "message")
			if r.Status != "accepted" {
				t.Fatal(r.Status)
			}
			return r.RequestID
		}, []string{"contact.request", "agreement.create"}, c},
		{func() string { m = h.mustSend(a, b, text, ""); return m.MessageID }, []string{"message.send"}, a},
		{func() string {
			msgs, _, err := h.s.Inbox(h.ctx, act(b), 5, nil)
			if err != nil || len(msgs) != 1 || msgs[0].Text != text {
				t.Fatal(msgs, err)
			}
			if err := h.s.MarkRead(h.ctx, []pircan.Reads{{Actor: act(b), IDs: []string{msgs[0].MessageID}}}); err != nil {
				t.Fatal(err)
			}
			return b.ID
		}, []string{"message.read"}, b},
		{func() string {
			if err := h.s.Revoke(h.ctx, act(a), g.AgreementID); err != nil {
				t.Fatal(err)
			}
			return g.AgreementID
		}, []string{"agreement.revoke"}, a},
	}
	last := start
	for i, st := range steps {
		subject := st.do()
		rows := h.auditAfter(last)
		if !slices.Equal(actions(rows), st.actions) {
			t.Errorf("step %d: audit actions %v, want %v", i, actions(rows), st.actions)
			if len(rows) > 0 {
				last = rows[len(rows)-1].id
			}
			continue
		}
		if rows[0].subject != subject {
			t.Errorf("step %d (%s): subject %s, want %s", i, rows[0].action, rows[0].subject, subject)
		}
		for _, r := range rows {
			if r.actorAgent != st.actor.ID {
				t.Errorf("step %d (%s): actor %s, want %s", i, r.action, r.actorAgent, st.actor.ID)
			}
		}
		last = rows[len(rows)-1].id
	}
	// agreement.create names the agreement, and the message.send row the sizes.
	all := h.auditAfter(start)
	for _, r := range all {
		if r.action == "agreement.create" && r.subject == g.AgreementID && !strings.Contains(r.details, r1.RequestID) {
			t.Errorf("agreement.create does not name its request: %s", r.details)
		}
		if r.action == "message.send" && !strings.Contains(r.details, fmt.Sprintf(`"bytes": %d`, len(text))) {
			t.Errorf("message.send details %s lack the size", r.details)
		}
		if r.action == "message.read" && !strings.Contains(r.details, m.MessageID) {
			t.Errorf("message.read details %s lack the message id", r.details)
		}
	}
	if n := h.count("SELECT count(*) FROM audit_log WHERE details::text LIKE '%MARK%' OR details::text LIKE '%zebra%'"); n != 0 {
		t.Errorf("%d audit rows contain purpose or message text", n)
	}
	if n := h.count("SELECT count(*) FROM notifications WHERE type LIKE '%MARK%' OR type LIKE '%zebra%'"); n != 0 {
		t.Errorf("%d notifications contain purpose or message text", n)
	}
	// sanity: the marker is findable where it belongs
	if n := h.count("SELECT count(*) FROM messages WHERE text LIKE '%TEXTMARK%'"); n != 1 {
		t.Fatalf("marker search is broken: %d", n)
	}
}
