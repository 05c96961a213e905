package parley_test

import (
	"slices"
	"testing"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/parley"
)

// The dialectic profile, access by application and feature requests over
// the MCP door, driven by the official TypeScript SDK (which holds every
// result to its tool's output schema); the application itself over plain
// HTTP, from a client that has no token yet.

func claimKeys(t *testing.T, posted map[string]any) []string {
	t.Helper()
	var out []string
	list, _ := posted["claims"].([]any)
	for _, c := range list {
		out = append(out, c.(map[string]any)["id"].(string))
	}
	return out
}

func TestDialecticOverMCP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pircan.DefaultLimits)
	ctx := t.Context()
	alice, bob, carol, vera := e.line(t, "dalice", nil), e.line(t, "dbob", nil), e.line(t, "dcarol", nil), e.line(t, "dvera", nil)
	_, err := e.svc.SetForumRights(ctx, pircan.OperatorCaller("operator:test"), pircan.RightsArgs{Account: vera.Account, Grant: []string{"verify"}})
	must(t, err)

	// alice asserts two claims with evidence.
	out := run(t, e, alice.Token,
		call("post_boards_id_threads", args{"id": "lobby", "kind": "note", "body": "Findings.", "claims": []any{
			args{"statement": "The cache halves p99.", "evidence": []any{args{"kind": "commit", "ref": "abc123", "note": "the change"}}},
			args{"statement": "The index is unused.", "evidence": []any{args{"kind": "reproducer", "ref": "EXPLAIN SELECT …"}}},
		}}),
	)
	posted := ok(t, "assert", out[0])
	keys := claimKeys(t, posted)
	if len(keys) != 2 {
		t.Fatalf("claims made: %v", posted)
	}
	c1, c2 := keys[0], keys[1]
	th := sub(posted, "thread")["id"].(string)

	// bob supports c1: supported. carol refutes it from a thread of her
	// own, with evidence: still supported (one unsealed refutation decides
	// nothing); her seal is refused; vera (verify) seals a refutation.
	out = run(t, e, bob.Token, call("post_claims_id_attest", args{"id": c1, "verdict": "supports", "note": "Seen in prod."}))
	if cl := ok(t, "support", out[0]); cl["state"] != "supported" {
		t.Fatalf("supported: %v", cl)
	}
	out = run(t, e, carol.Token,
		call("post_boards_id_threads", args{"id": "lobby", "kind": "note", "body": "Our bench."}),
	)
	other := sub(ok(t, "carol's thread", out[0]), "thread")["id"].(string)
	out = run(t, e, carol.Token,
		call("post_threads_id_messages", args{"id": other, "kind": "refute", "body": "Not on our hardware.",
			"refutes": []any{c1}, "evidence": []any{args{"kind": "url", "ref": "https://bench.example/42"}}}),
		call("post_threads_id_messages", args{"id": other, "kind": "refute", "body": "No proof.", "refutes": []any{c1}}),
		call("post_claims_id_attest", args{"id": c1, "verdict": "refutes", "seal": true}),
	)
	refute := ok(t, "refute", out[0])
	if r := refute["refuted"].([]any)[0].(map[string]any); r["id"] != c1 || r["state"] != "supported" || sub(refute, "thread")["awaiting"] != true {
		t.Fatalf("carol's refute: %v", refute)
	}
	refused(t, "refute without evidence", out[1], "evidence_required", "")
	refused(t, "seal without verify", out[2], "verify_right_missing", "")
	out = run(t, e, vera.Token,
		call("post_claims_id_attest", args{"id": c1, "verdict": "refutes", "seal": true, "note": "Reproduced.",
			"evidence": []any{args{"kind": "log", "ref": "https://ci.example/run/7"}}}),
	)
	if cl := ok(t, "sealed refutation", out[0]); cl["state"] != "refuted" {
		t.Fatalf("sealed: %v", cl)
	}
	// Whatever the support: bob supports again, a human seals a support.
	out = run(t, e, bob.Token, call("post_claims_id_attest", args{"id": c1, "verdict": "supports", "note": "Still seen."}))
	if cl := ok(t, "support after", out[0]); cl["state"] != "refuted" {
		t.Fatalf("support after the sealed refutation: %v", cl)
	}
	k1 := pircan.Key(c1)
	_, err = e.svc.SealClaim(ctx, pircan.OperatorCaller("operator:ops"), pircan.SealArgs{ID: &k1, Verdict: strp("supports")})
	must(t, err)

	// alice refines c2: superseded; attesting it is claim_superseded.
	out = run(t, e, alice.Token,
		call("post_threads_id_messages", args{"id": th, "kind": "refine", "body": "Sharper.", "relates_to": []any{c2},
			"claims": []any{args{"statement": "The index is unused before v2."}}}),
	)
	c3 := claimKeys(t, ok(t, "refine", out[0]))[0]
	out = run(t, e, bob.Token,
		call("get_claims_id", args{"id": c1}),
		call("get_claims_id", args{"id": c2}),
		call("post_claims_id_attest", args{"id": c2, "verdict": "supports"}),
		call("get_threads_id_claims", args{"id": th}),
		call("get_claims_id", args{"id": "cl_999999999"}),
		call("post_claims_id_attest", args{"id": c3, "verdict": "agrees"}),
		call("get_threads_id", args{"id": th}),
		call("get_threads_id", args{"id": other}),
	)
	one := ok(t, "get_claims_id", out[0])
	atts := one["attestations"].([]any)
	hist := one["history"].([]any)
	if one["state"] != "refuted" || len(atts) != 4 || len(hist) != 5 {
		t.Fatalf("c1: %v", one)
	}
	var sealedBy []string
	for _, a := range atts {
		a := a.(map[string]any)
		if a["sealed"] == true {
			sealedBy = append(sealedBy, sub(a, "by")["identity"].(string)+":"+a["verdict"].(string))
		}
	}
	slices.Sort(sealedBy)
	if want := []string{"human:ops:supports", "pircan:" + vera.Account + ":refutes"}; !slices.Equal(sealedBy, want) {
		t.Fatalf("seals: %v, want %v", sealedBy, want)
	}
	if two := ok(t, "c2", out[1]); two["state"] != "superseded" || two["superseded_by"] != c3 {
		t.Fatalf("c2: %v", two)
	}
	refused(t, "attest a superseded claim", out[2], "claim_superseded", "")
	list := ok(t, "thread claims", out[3])
	if list["total"] != float64(3) || len(list["items"].([]any)) != 3 || list["items"].([]any)[0].(map[string]any)["state"] != "refuted" {
		t.Fatalf("thread claims: %v", list)
	}
	refused(t, "no claim", out[4], "claim_not_found", "")
	refused(t, "unknown verdict", out[5], "invalid_body", "verdict")
	// A thread's page shows each message's claims, and a refute's refutes
	// and evidence, as the envelope had them.
	first := ok(t, "thread", out[6])["messages"].([]any)[0].(map[string]any)
	if !slices.Equal(first["claims"].([]any), []any{c1, c2}) {
		t.Fatalf("the asserting message: %v", first)
	}
	ref := ok(t, "carol's thread", out[7])["messages"].([]any)[1].(map[string]any)
	if ref["kind"] != "refute" || !slices.Equal(ref["refutes"].([]any), []any{c1}) ||
		ref["evidence"].([]any)[0].(map[string]any)["ref"] != "https://bench.example/42" {
		t.Fatalf("the refute as read: %v", ref)
	}
}

func TestApplicationOverMCP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pircan.DefaultLimits)
	ctx := t.Context()
	reviewer, stranger := e.line(t, "grantor", nil), e.line(t, "stranger", nil)
	_, err := e.svc.SetForumRights(ctx, pircan.OperatorCaller("operator:test"), pircan.RightsArgs{Account: reviewer.Account, Grant: []string{"grant"}})
	must(t, err)

	// A client without a token applies; a field missing is refused.
	fields := args{"label": "scout", "purpose": "Summarise threads.", "model": "m-1", "client": "c/2", "provider": "p", "contact": "ops@example.org"}
	short := args{"label": "scout", "purpose": "x", "model": "m", "client": "c", "provider": "p"}
	if status, r := post(t, e.url(parley.ApplyPath), "", short); status != 400 || r["reason"] != "invalid_body" || sub(r, "details")["field"] != "contact" {
		t.Fatalf("application without contact: %d %v", status, r)
	}
	status, app := post(t, e.url(parley.ApplyPath), "", fields)
	if status != 200 || app["token"] == nil || !slices.Equal(app["rights"].([]any), []any{"read"}) || sub(app, "request")["state"] != "pending" {
		t.Fatalf("application: %d %v", status, app)
	}
	token, id := app["token"].(string), app["request_id"].(string)

	// With that token: it reads its request, it may not write.
	out := run(t, e, token,
		call("get_token_requests_id", args{"id": id}),
		call("post_boards_id_threads", args{"id": "lobby", "kind": "ask", "body": "Hello?"}),
		call("get_manifest", nil),
	)
	if r := ok(t, "poll", out[0]); r["state"] != "pending" || r["contact"] != "ops@example.org" {
		t.Fatalf("poll: %v", r)
	}
	refused(t, "read-only applicant writes", out[1], "token_read_only", "")
	if you := sub(ok(t, "manifest", out[2]), "you"); you["read_only"] != true {
		t.Fatalf("manifest: %v", you)
	}
	// Others: not theirs; no such request.
	out = run(t, e, stranger.Token,
		call("get_token_requests_id", args{"id": id}),
		call("post_token_requests_id_review", args{"id": id, "decision": "approved"}),
		call("get_token_requests_id", args{"id": "tr_999999999"}),
	)
	refused(t, "another's request", out[0], "request_forbidden", "")
	refused(t, "review without grant", out[1], "token_right_missing", "right")
	refused(t, "no request", out[2], "request_not_found", "")

	// The reviewer on MCP: in review, then approved with lock; a second
	// decision is request_decided.
	out = run(t, e, reviewer.Token,
		call("get_token_requests", nil),
		call("post_token_requests_id_review", args{"id": id, "decision": "approved", "rights": []any{"verify"}}),
		call("post_token_requests_id_review", args{"id": id, "decision": "in_review"}),
		call("post_token_requests_id_review", args{"id": id, "decision": "approved", "rights": []any{"lock"}}),
		call("post_token_requests_id_review", args{"id": id, "decision": "rejected", "reason": "late"}),
	)
	var listed bool
	for _, it := range ok(t, "open requests", out[0])["items"].([]any) {
		listed = listed || it.(map[string]any)["id"] == id
	}
	if !listed {
		t.Fatalf("the reviewer's list lacks %s", id)
	}
	refused(t, "approve verify", out[1], "invalid_body", "rights")
	if r := ok(t, "in_review", out[2]); r["state"] != "in_review" {
		t.Fatalf("in review: %v", r)
	}
	if r := ok(t, "approved", out[3]); r["state"] != "approved" || !slices.Equal(r["rights"].([]any), []any{"write", "pin", "lock"}) ||
		r["reviewer"] != "pircan:"+reviewer.Account {
		t.Fatalf("approved: %v", r)
	}
	refused(t, "decided", out[4], "request_decided", "")

	// The same token now writes.
	out = run(t, e, token,
		call("get_token_requests_id", args{"id": id}),
		call("post_boards_id_threads", args{"id": "lobby", "kind": "ask", "body": "Hello, now with write?"}),
		call("post_token_requests_id_withdraw", args{"id": id}),
	)
	if r := ok(t, "poll after", out[0]); r["state"] != "approved" {
		t.Fatalf("poll after: %v", r)
	}
	ok(t, "write after the approval", out[1])
	refused(t, "withdraw a decided request", out[2], "request_decided", "")
}

func TestFeaturesOverMCP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pircan.DefaultLimits)
	alice, gina := e.line(t, "falice", nil), e.line(t, "fgina", nil)
	_, err := e.svc.SetForumRights(t.Context(), pircan.OperatorCaller("operator:test"), pircan.RightsArgs{Account: gina.Account, Grant: []string{"grant"}})
	must(t, err)
	out := run(t, e, alice.Token,
		call("post_features", args{"title": "Images", "body": "Screenshots would help.\nPNG is enough."}),
		call("get_features", nil),
	)
	f := ok(t, "post_features", out[0])
	if f["status"] != "open" || sub(f, "author")["identity"] != "pircan:"+alice.Account {
		t.Fatalf("filed: %v", f)
	}
	if l := ok(t, "own", out[1]); l["total"] != float64(1) {
		t.Fatalf("own: %v", l)
	}
	out = run(t, e, alice.Token, call("post_features_id_status", args{"id": f["id"], "status": "accepted"}))
	refused(t, "the author decides", out[0], "token_right_missing", "right")
	out = run(t, e, gina.Token,
		call("post_features_id_status", args{"id": f["id"], "status": "accepted", "note": "Next release."}),
		call("get_features", args{"status": "accepted"}),
	)
	if d := ok(t, "accepted", out[0]); d["status"] != "accepted" || d["decided_by"] != "pircan:"+gina.Account {
		t.Fatalf("accepted: %v", d)
	}
	var seen bool
	for _, it := range ok(t, "all", out[1])["items"].([]any) {
		seen = seen || it.(map[string]any)["id"] == f["id"]
	}
	if !seen {
		t.Fatal("a grant holder does not see alice's request")
	}
}
