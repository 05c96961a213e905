package bot_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/pircan"
)

// pair registers two agents and returns them with their agent ids.
func pair(t *testing.T, bot *bottest.Bot, base string) (a, b *bottest.Agent, aID, bID string) {
	t.Helper()
	agents := bot.Agents(t, base, 2)
	a, b = agents[0], agents[1]
	return a, b, a.Hello(`{"name":"` + a.Nick() + `"}`), b.Hello(`{"name":"` + b.Nick() + `"}`)
}

func raised() pircan.Limits {
	l := pircan.DefaultLimits
	l.PerCaller = 1000 // many requests from one agent: the per-minute limit has its own test
	return l
}

func TestPolicyVerb(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{})
	a := bot.Agents(t, "pol", 1)[0]
	id := a.Hello("")
	if r := a.Ask(`PIRCAN/1 POLICY {"id":"p"}`); r.Str("policy") != "agent-decides" || r.Fields["locked"] != false || r.Str("re") != "p" {
		t.Fatalf("default policy: %s", r.Raw)
	}
	for _, p := range []string{"auto-accept", "deny", "owner-decides", "agent-decides"} {
		if r := a.Ask(`PIRCAN/1 POLICY {"policy":"` + p + `"}`); r.Str("policy") != p {
			t.Fatalf("set %s: %s", p, r.Raw)
		}
	}
	if r := a.Ask(`PIRCAN/1 POLICY {"policy":"whatever"}`); r.Code() != "invalid_argument" || r.Str("field") != "policy" {
		t.Fatalf("bad policy: %s", r.Raw)
	}
	// The owner (portal, a later issue; here through the store) sets
	// owner-decides: the agent cannot change it any more.
	must(t, bot.Store().SetPolicy(t.Context(), pircan.Actor{AgentID: id, ByOwner: true}, pircan.PolicyOwnerDecides))
	if r := a.Ask(`PIRCAN/1 POLICY {"policy":"auto-accept"}`); r.Code() != "not_authorized" {
		t.Fatalf("locked policy changed: %s", r.Raw)
	}
	if r := a.Ask(`PIRCAN/1 POLICY`); r.Str("policy") != "owner-decides" || r.Fields["locked"] != true {
		t.Fatalf("locked policy: %s", r.Raw)
	}
}

func TestContactAcceptAgreementsRevoke(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Limits: raised()})
	a, b, aID, bID := pair(t, bot, "hs")

	r := a.Ask(`PIRCAN/1 CONTACT {"to":"` + bID + `","purpose":"Share chemical release data","scopes":["message","task:assess"],"ttl_days":30,"id":"c1"}`)
	if r.Verb != "CONTACT" || r.Str("status") != "pending" || !pircan.ValidID(r.Str("request_id")) || r.Str("re") != "c1" {
		t.Fatalf("CONTACT: %s", r.Raw)
	}
	reqID := r.Str("request_id")

	// The target sees it, with the purpose, only when it asks.
	items, end := b.AskList(`PIRCAN/1 CONTACTS {"id":"l"}`)
	if len(items) != 1 || end.Int("total") != 1 || end.Str("re") != "l" {
		t.Fatalf("incoming: %v %s", items, end.Raw)
	}
	it := items[0]
	from, _ := it.Fields["from"].(map[string]any)
	if it.Str("request_id") != reqID || from["agent_id"] != aID || it.Str("purpose") != "Share chemical release data" ||
		fmt.Sprint(it.Fields["scopes"]) != "[message task:assess]" || it.Int("ttl_days") != 30 || it.Str("status") != "pending" || it.Str("expires_at") == "" {
		t.Fatalf("CONTACT-ITEM: %s", it.Raw)
	}
	if items, _ := a.AskList(`PIRCAN/1 CONTACTS {"direction":"outgoing"}`); len(items) != 1 || items[0].Fields["to"] == nil {
		t.Fatalf("outgoing: %v", items)
	}
	if items, _ := a.AskList(`PIRCAN/1 CONTACTS`); len(items) != 0 {
		t.Fatalf("a has no incoming requests: %v", items)
	}

	// Only the target accepts, and never more than was asked.
	if r := a.Ask(`PIRCAN/1 ACCEPT {"request_id":"` + reqID + `"}`); r.Code() != "not_found" {
		t.Fatalf("requester accepts: %s", r.Raw)
	}
	if r := b.Ask(`PIRCAN/1 ACCEPT {"request_id":"` + reqID + `","scopes":["message","resource:read"]}`); r.Code() != "invalid_argument" || r.Str("field") != "scopes" {
		t.Fatalf("wider scopes: %s", r.Raw)
	}
	if r := b.Ask(`PIRCAN/1 ACCEPT {"request_id":"` + reqID + `","ttl_days":31}`); r.Code() != "invalid_argument" || r.Str("field") != "ttl_days" {
		t.Fatalf("longer ttl: %s", r.Raw)
	}
	r = b.Ask(`PIRCAN/1 ACCEPT {"request_id":"` + reqID + `","scopes":["message"],"ttl_days":7}`)
	if r.Verb != "ACCEPT" || !pircan.ValidID(r.Str("agreement_id")) || fmt.Sprint(r.Fields["scopes"]) != "[message]" {
		t.Fatalf("ACCEPT: %s", r.Raw)
	}
	agreementID := r.Str("agreement_id")
	if r := b.Ask(`PIRCAN/1 ACCEPT {"request_id":"` + reqID + `"}`); r.Code() != "not_pending" {
		t.Fatalf("second ACCEPT: %s", r.Raw)
	}

	// Both see the agreement, with the accounts to accept direct PMs from.
	items, _ = a.AskList(`PIRCAN/1 AGREEMENTS`)
	if len(items) != 1 {
		t.Fatalf("AGREEMENTS: %v", items)
	}
	g := items[0]
	with, _ := g.Fields["with"].(map[string]any)
	if g.Str("agreement_id") != agreementID || with["agent_id"] != bID || fmt.Sprint(with["irc_accounts"]) != "["+b.Account+"]" ||
		g.Str("role") != "requester" || g.Str("status") != "active" || fmt.Sprint(g.Fields["scopes"]) != "[message]" {
		t.Fatalf("AGREEMENT: %s", g.Raw)
	}
	if items, _ := b.AskList(`PIRCAN/1 AGREEMENTS`); len(items) != 1 || items[0].Str("role") != "target" {
		t.Fatalf("target's AGREEMENTS: %v", items)
	}
	// The agreement now covers message: asking again is already_agreed.
	if r := a.Ask(`PIRCAN/1 CONTACT {"to":"` + bID + `","purpose":"again"}`); r.Code() != "already_agreed" {
		t.Fatalf("CONTACT again: %s", r.Raw)
	}
	if r := b.Ask(`PIRCAN/1 CONTACT {"to":"` + aID + `","purpose":"other way"}`); r.Code() != "already_agreed" {
		t.Fatalf("message goes both ways: %s", r.Raw)
	}

	// REVOKE ends it for both at once.
	if r := b.Ask(`PIRCAN/1 REVOKE {"agreement_id":"` + agreementID + `"}`); r.Verb != "REVOKE" {
		t.Fatalf("REVOKE: %s", r.Raw)
	}
	if r := a.Ask(`PIRCAN/1 REVOKE {"agreement_id":"` + agreementID + `"}`); r.Code() != "not_active" {
		t.Fatalf("second REVOKE: %s", r.Raw)
	}
	if r := a.Ask(`PIRCAN/1 SEND {"to":"` + bID + `","text":"still there?"}`); r.Code() != "not_authorized" {
		t.Fatalf("SEND after REVOKE: %s", r.Raw)
	}
	if items, _ := a.AskList(`PIRCAN/1 AGREEMENTS`); len(items) != 0 {
		t.Fatalf("revoked agreement still listed: %v", items)
	}
	if items, _ := a.AskList(`PIRCAN/1 AGREEMENTS {"all":true}`); len(items) != 1 || items[0].Str("status") != "revoked" {
		t.Fatalf("AGREEMENTS all: %v", items)
	}
	third := bot.Agents(t, "third", 1)[0]
	third.Hello("")
	if r := third.Ask(`PIRCAN/1 REVOKE {"agreement_id":"` + agreementID + `"}`); r.Code() != "not_found" {
		t.Fatalf("third party REVOKE: %s", r.Raw)
	}
}

func TestContactPoliciesAndErrors(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Limits: raised()})
	agents := bot.Agents(t, "cp", 5)
	me := agents[0]
	meID := me.Hello("")
	ids := make([]string, 5)
	for i, a := range agents[1:] {
		ids[i+1] = a.Hello("")
	}
	auto, deny, owner, plain := agents[1], agents[2], agents[3], agents[4]
	auto.Ask(`PIRCAN/1 POLICY {"policy":"auto-accept"}`)
	deny.Ask(`PIRCAN/1 POLICY {"policy":"deny"}`)
	owner.Ask(`PIRCAN/1 POLICY {"policy":"owner-decides"}`)

	contact := func(to, extra string) bottest.Reply {
		return me.Ask(`PIRCAN/1 CONTACT {"to":"` + to + `","purpose":"test"` + extra + `}`)
	}
	if r := contact(ids[1], ""); r.Str("status") != "accepted" || !pircan.ValidID(r.Str("agreement_id")) {
		t.Fatalf("auto-accept, message only: %s", r.Raw)
	}
	if r := contact(ids[1], `,"scopes":["task:assess"]`); r.Str("status") != "pending" {
		t.Fatalf("auto-accept never accepts a task scope: %s", r.Raw)
	}
	if r := contact(ids[2], ""); r.Str("status") != "declined" {
		t.Fatalf("deny: %s", r.Raw)
	}
	r := contact(ids[3], "")
	if r.Str("status") != "pending" {
		t.Fatalf("owner-decides: %s", r.Raw)
	}
	if r := owner.Ask(`PIRCAN/1 ACCEPT {"request_id":"` + r.Str("request_id") + `"}`); r.Code() != "not_authorized" {
		t.Fatalf("an owner-decides agent accepts: %s", r.Raw)
	}

	cases := []struct{ args, code, field string }{
		{`{"to":"` + meID + `","purpose":"me"}`, "self_contact", ""},
		{`{"to":"00000000-0000-4000-8000-000000000000","purpose":"nobody"}`, "unknown_agent", "to"},
		{`{"to":"not-an-id","purpose":"x"}`, "invalid_argument", "to"},
		{`{"to":"` + ids[4] + `"}`, "invalid_argument", "purpose"},
		{`{"to":"` + ids[4] + `","purpose":"` + strings.Repeat("p", 301) + `"}`, "too_long", "purpose"},
		{`{"to":"` + ids[4] + `","purpose":"x","scopes":["admin"]}`, "invalid_scope", "scopes"},
		{`{"to":"` + ids[4] + `","purpose":"x","scopes":["task:"]}`, "invalid_scope", "scopes"},
		{`{"to":"` + ids[4] + `","purpose":"x","scopes":[]}`, "invalid_scope", "scopes"},
		{`{"to":"` + ids[4] + `","purpose":"x","ttl_days":0}`, "invalid_argument", "ttl_days"},
		{`{"to":"` + ids[4] + `","purpose":"x","ttl_days":366}`, "invalid_argument", "ttl_days"},
	}
	before := auditCount(t, bot)
	for _, c := range cases {
		r := me.Ask(`PIRCAN/1 CONTACT ` + c.args)
		if r.Code() != c.code || r.Str("field") != c.field {
			t.Errorf("CONTACT %s: got %s, want %s/%s", c.args, r.Raw, c.code, c.field)
		}
	}
	if after := auditCount(t, bot); after != before {
		t.Errorf("refused CONTACTs changed state: %d audit rows before, %d after", before, after)
	}

	// One pending request per target; a decline starts a 24-hour cooldown.
	r = contact(ids[4], "")
	if r.Str("status") != "pending" {
		t.Fatalf("to plain: %s", r.Raw)
	}
	if r := contact(ids[4], ""); r.Code() != "duplicate_request" {
		t.Fatalf("second pending: %s", r.Raw)
	}
	plain.Ask(`PIRCAN/1 DECLINE {"request_id":"` + r.Str("request_id") + `"}`)
	if r := contact(ids[4], ""); r.Code() != "cooldown" {
		t.Fatalf("after a decline: %s", r.Raw)
	}
	if _, err := bot.Store().Pool().Exec(t.Context(), "UPDATE contact_requests SET decided_at = decided_at - interval '25 hours'"); err != nil {
		t.Fatal(err)
	}
	if r = contact(ids[4], ""); r.Str("status") != "pending" {
		t.Fatalf("after the cooldown: %s", r.Raw)
	}
	// The requester may cancel; the target may not.
	if r := plain.Ask(`PIRCAN/1 CANCEL {"request_id":"` + r.Str("request_id") + `"}`); r.Code() != "not_found" {
		t.Fatalf("target cancels: %s", r.Raw)
	}
	if r := me.Ask(`PIRCAN/1 CANCEL {"request_id":"` + r.Str("request_id") + `"}`); r.Str("status") != "cancelled" {
		t.Fatalf("CANCEL: %s", r.Raw)
	}
	// 10 requests an hour: this agent has made 6 (refused ones do not
	// count). The deny target declines each at once, with no cooldown.
	for i := 7; i <= 10; i++ {
		if r := contact(ids[2], ""); r.Str("status") != "declined" {
			t.Fatalf("request %d: %s", i, r.Raw)
		}
	}
	if r := contact(ids[1], `,"scopes":["task:late"]`); r.Code() != "rate_limited" {
		t.Fatalf("11th request in an hour: %s", r.Raw)
	}
}

// A request expires 7 days after creation (rows aged through the database).
func TestContactExpiry(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{})
	a, b, _, bID := pair(t, bot, "exp")
	r := a.Ask(`PIRCAN/1 CONTACT {"to":"` + bID + `","purpose":"old news"}`)
	if _, err := bot.Store().Pool().Exec(t.Context(), "UPDATE contact_requests SET created_at = created_at - interval '7 days 1 minute'"); err != nil {
		t.Fatal(err)
	}
	if items, _ := b.AskList(`PIRCAN/1 CONTACTS`); len(items) != 0 {
		t.Fatalf("expired request is still pending: %v", items)
	}
	items, _ := b.AskList(`PIRCAN/1 CONTACTS {"status":"expired"}`)
	if len(items) != 1 || items[0].Str("status") != "expired" {
		t.Fatalf("expired: %v", items)
	}
	if r := b.Ask(`PIRCAN/1 ACCEPT {"request_id":"` + r.Str("request_id") + `"}`); r.Code() != "not_pending" {
		t.Fatalf("ACCEPT of an expired request: %s", r.Raw)
	}
	if r := a.Ask(`PIRCAN/1 CONTACT {"to":"` + bID + `","purpose":"try again"}`); r.Str("status") != "pending" {
		t.Fatalf("a new request after expiry: %s", r.Raw)
	}
}

// Two connections of the same account ACCEPT at once: one agreement.
func TestRacingAccepts(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{})
	a, b, _, bID := pair(t, bot, "race")
	twin, err := bot.Net.Dial(t.Context(), bottest.Unique("twin"))
	must(t, err)
	t.Cleanup(func() { twin.Close() })
	must(t, twin.Identify(t.Context(), b.Account, "pw-"+b.Account))
	b2 := bot.Adopt(t, twin, b.Account)

	reqID := a.Ask(`PIRCAN/1 CONTACT {"to":"` + bID + `","purpose":"race"}`).Str("request_id")
	var wg sync.WaitGroup
	replies := make([]bottest.Reply, 2)
	for i, c := range []*bottest.Agent{b, b2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = c.Ask(`PIRCAN/1 ACCEPT {"request_id":"` + reqID + `"}`)
		}()
	}
	wg.Wait()
	won := 0
	for _, r := range replies {
		switch {
		case r.Verb == "ACCEPT":
			won++
		case r.Code() != "not_pending":
			t.Errorf("loser: %s", r.Raw)
		}
	}
	var n int
	must(t, bot.Store().Pool().QueryRow(context.Background(), "SELECT count(*) FROM agreements").Scan(&n))
	if won != 1 || n != 1 {
		t.Fatalf("%d ACCEPTs won, %d agreements", won, n)
	}
}
