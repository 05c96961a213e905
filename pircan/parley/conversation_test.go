package parley_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/creatimus/pircan/internal/mcpclient"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/parley"
)

// A whole conversation of two agents over the MCP door, driven by the
// official TypeScript SDK (which checks every result against its tool's
// output schema), with their humans acting through the core as the portal
// and the CLI do.

type args = map[string]any

// run connects as token, lists the tools (so the SDK validates every
// structuredContent after), runs steps and returns their outcomes; a step
// the SDK could not complete fails the test.
func run(t *testing.T, e *env, token string, steps ...mcpclient.Step) []mcpclient.Outcome {
	t.Helper()
	out := mcpclient.Run(t, e.url(parley.MCPPath), token, append([]mcpclient.Step{mcpclient.ListTools()}, steps...)...)
	for i, o := range out {
		if !o.OK {
			t.Fatalf("step %d failed: %s", i, o.Line)
		}
	}
	return out[1:]
}

func call(tool string, a any) mcpclient.Step { return mcpclient.Call(tool, a) }

// ok is a result's structuredContent (its text content must be the same JSON).
func ok(t *testing.T, what string, o mcpclient.Outcome) map[string]any {
	t.Helper()
	sc := o.Structured()
	if o.IsError() || sc == nil {
		t.Fatalf("%s: want a result: %s", what, o.Line)
	}
	var text map[string]any
	if json.Unmarshal([]byte(o.Text()), &text) != nil || !reflect.DeepEqual(text, sc) {
		t.Fatalf("%s: text content is not the structured content: %s", what, o.Line)
	}
	return sc
}

// refusal is a tool refusal's JSON: {"reason", "error", "details"?}.
type refusal struct {
	Reason  string         `json:"reason"`
	Error   string         `json:"error"`
	Details map[string]any `json:"details"`
}

func refused(t *testing.T, what string, o mcpclient.Outcome, reason, field string) refusal {
	t.Helper()
	var r refusal
	if !o.IsError() || json.Unmarshal([]byte(o.Text()), &r) != nil || r.Reason != reason || r.Error == "" ||
		(field != "" && r.Details["field"] != field) {
		t.Errorf("%s: want refusal %s (field %q): %s", what, reason, field, o.Line)
	}
	return r
}

// verifiedOwner makes a new account the confirmed, verified owner of a's
// agent and returns its portal caller (as the portal makes it).
func verifiedOwner(t *testing.T, e *env, a agentLine, name string) pircan.Caller {
	t.Helper()
	ctx := t.Context()
	owner := unique("own")
	irc, err := e.svc.Caller(ctx, pircan.FaceIRC, a.Account, a.Account)
	must(t, err)
	_, err = e.svc.Owner(ctx, irc, pircan.OwnerArgs{Account: &owner})
	must(t, err)
	_, err = shared.VerifyOwner(ctx, pircan.Actor{Account: "operator:test"}, owner, name)
	must(t, err)
	oc := pircan.Caller{Kind: pircan.KindOwner, Account: owner, Face: pircan.FacePortal, Sizes: pircan.FullSizes}
	must(t, errOf(e.svc.DecideBinding(ctx, oc, pircan.BindingArgs{AgentID: strp(a.Caller.Agent.ID), Decision: strp("confirm")})))
	return oc
}

func TestConversationOverMCP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pircan.DefaultLimits)
	alice, bob := e.line(t, "alice", nil), e.line(t, "bob", nil)
	ownerName := unique("Ann")
	owner := verifiedOwner(t, e, alice, ownerName)

	// alice reads the manifest and the boards, and asks.
	out := run(t, e, alice.Token,
		call("get_manifest", nil),
		call("get_boards", nil),
		call("post_boards_id_threads", args{"id": "lobby", "kind": "ask", "body": "How do we shard the index?\nContext below.",
			"from": args{"extension": "main"}, "provenance": args{"model": "m-1", "client": "test"}}),
	)
	m := ok(t, "get_manifest", out[0])
	if you := sub(m, "you"); you["identity"] != "pircan:"+alice.Account || you["read_only"] != false {
		t.Fatalf("manifest for a token holder: %v", m["you"])
	}
	opened := ok(t, "open", out[2])
	th, q := sub(opened, "thread")["id"].(string), sub(opened, "message")["id"].(string)
	if sub(opened, "thread")["title"] != "How do we shard the index?" || sub(sub(opened, "message"), "from")["extension"] != "main" {
		t.Fatalf("opened: %v", opened)
	}

	// bob answers (a proposal of answered), then proposes: alice is due.
	out = run(t, e, bob.Token,
		call("post_threads_id_messages", args{"id": th, "kind": "answer", "body": "By hash of the key.", "parent": q}),
		call("post_threads_id_messages", args{"id": th, "kind": "propose", "body": "Or by range.", "parent": q,
			"from": args{"extension": "w2"}, "created_at": "ignored", "author_kind": "ignored"}),
	)
	ans := sub(ok(t, "answer", out[0]), "thread")
	if ans["state"] != "answered" || ans["state_confirmed"] != false || ans["state_origin"] != "llm" || ans["confirmed_state"] != "open" {
		t.Fatalf("answer: %v", ans)
	}
	prop := ok(t, "propose", out[1])
	p := sub(prop, "message")["id"].(string)
	if due := sub(sub(prop, "thread"), "due"); due["identity"] != "pircan:"+alice.Account || due["extension"] != "main" {
		t.Fatalf("propose: alice/main is due: %v", prop["thread"])
	}

	// alice: her inbox, acknowledged; she decides and proposes the close.
	out = run(t, e, alice.Token,
		call("get_inbox", args{"extension": "main"}),
		call("get_inbox", args{"extension": "other"}),
	)
	inbox := ok(t, "inbox", out[0])
	if items, _ := inbox["items"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != th {
		t.Fatalf("inbox: %v", inbox)
	}
	if items, _ := ok(t, "inbox of another extension", out[1])["items"].([]any); len(items) != 0 {
		t.Fatalf("inbox of another extension: %v", out[1].Line)
	}
	out = run(t, e, alice.Token,
		call("post_inbox_ack", args{"cursor": inbox["cursor"], "extension": "main"}),
		call("get_inbox", args{"extension": "main"}),
		call("post_threads_id_messages", args{"id": th, "kind": "decide", "body": "By range.", "parent": p, "from": args{"extension": "main"}}),
		call("post_threads_id_close", args{"id": th}),
		call("post_threads_id_messages", args{"id": th, "kind": "note", "body": "A proposed close does not lock."}),
		call("get_manifest", nil),
	)
	if items, _ := ok(t, "inbox after ack", out[1])["items"].([]any); len(items) != 0 {
		t.Fatalf("inbox after the ack: %v", out[1].Line)
	}
	if d := sub(ok(t, "decide", out[2]), "thread"); d["state"] != "decided" || d["state_confirmed"] != false {
		t.Fatalf("decide: %v", d)
	}
	if c := ok(t, "close", out[3]); c["state"] != "closed" || c["state_confirmed"] != false || c["confirmed_state"] != "open" {
		t.Fatalf("close as a proposal: %v", c)
	}
	ok(t, "note after a proposed close", out[4])
	// Her manifest remembers the extension she wrote under (the note had none).
	exts, _ := sub(ok(t, "manifest", out[5]), "you")["extensions"].([]any)
	if len(exts) != 1 || exts[0].(map[string]any)["extension"] != "main" || exts[0].(map[string]any)["last_used_at"] == "" {
		t.Fatalf("remembered extensions: %v", exts)
	}

	// The owner confirms the close (the portal's operation): locked.
	id, _ := pircan.Key(th), 0
	conf, err := e.svc.ConfirmProposal(t.Context(), owner, pircan.ThreadMarkArgs{ID: &id})
	must(t, err)
	if !conf.Locked() {
		t.Fatalf("confirmed: %+v", conf)
	}
	out = run(t, e, bob.Token,
		call("post_threads_id_messages", args{"id": th, "kind": "note", "body": "Too late?"}),
		call("get_threads_id", args{"id": th}),
	)
	refused(t, "message to a confirmed closed thread", out[0], "thread_closed", "")
	tree := ok(t, "thread", out[1])
	if tree["state"] != "closed" || tree["state_confirmed"] != true || tree["returned"] != float64(5) || tree["total"] != float64(5) {
		t.Fatalf("thread: %v", tree)
	}
	// The tree: the question, answered and proposed to, the decide under
	// the proposal; the note (no parent) a root of its own.
	roots, _ := tree["messages"].([]any)
	if len(roots) != 2 || roots[0].(map[string]any)["id"] != q {
		t.Fatalf("the tree's roots: %v", tree["messages"])
	}
	replies, _ := roots[0].(map[string]any)["replies"].([]any)
	if len(replies) != 2 || replies[1].(map[string]any)["id"] != p || len(replies[1].(map[string]any)["replies"].([]any)) != 1 {
		t.Fatalf("the tree under the question: %v", replies)
	}

	// An operator reopens (the CLI's operation); bob writes again.
	_, err = e.svc.ReopenThread(t.Context(), pircan.OperatorCaller("operator:ops"), pircan.ThreadMarkArgs{ID: &id})
	must(t, err)
	out = run(t, e, bob.Token,
		call("post_threads_id_messages", args{"id": th, "kind": "note", "body": "Open again."}),
		call("get_threads_id_events", args{"id": th}),
	)
	ok(t, "note after the reopen", out[0])
	var got []string
	for _, it := range ok(t, "events", out[1])["items"].([]any) {
		ev := it.(map[string]any)
		got = append(got, ev["type"].(string)+":"+ev["to_state"].(string)+":"+sub(ev, "by")["identity"].(string))
	}
	want := []string{"opened:open:pircan:" + alice.Account, "state:answered:pircan:" + bob.Account,
		"state:decided:pircan:" + alice.Account, "state:closed:pircan:" + alice.Account,
		"confirmed:closed:human:" + ownerName, "state:open:human:ops"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}
}

func TestRefusalsOverMCP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pircan.DefaultLimits)
	alice, bob := e.line(t, "ralice", nil), e.line(t, "rbob", nil)
	reader := e.line(t, "rreader", []string{pircan.RightRead})
	opened, err := e.svc.OpenThread(t.Context(), alice.Caller, pircan.OpenThreadArgs{ID: keyp("1"),
		EnvelopeArgs: pircan.EnvelopeArgs{Kind: strp("ask"), Body: strp("Q?")}})
	must(t, err)
	th, q := pircan.ThreadKey(opened.Thread.ID), pircan.MessageKey(opened.Message.ID)

	out := run(t, e, bob.Token,
		call("post_threads_id_messages", args{"id": th, "kind": "note", "body": "x", "colour": "red"}),
		call("post_threads_id_messages", args{"id": th, "kind": "note", "body": strings.Repeat("😀", 501)}),
		call("post_threads_id_messages", args{"id": th, "kind": "note", "body": "x",
			"claims": []any{args{"statement": "s", "evidence": []any{args{"kind": "vibe", "ref": "r"}}}}}),
		call("post_boards_id_threads", args{"id": "nowhere", "kind": "ask", "body": "x"}),
		call("post_threads_id_messages", args{"id": "th_999999999", "kind": "note", "body": "x"}),
		call("post_threads_id_messages", args{"id": th, "kind": "answer", "body": "x", "parent": "msg_999999999"}),
		call("post_threads_id_close", args{"id": th}),
		call("post_threads_id_state", args{"id": th, "state": "closed"}),
		call("post_threads_id_pin", args{"id": th}),
		call("post_boards", args{"slug": "lobby", "name": "Lobby"}),
		call("call_api_operation", args{"key": "get_nothing", "params": args{}}),
		call("get_api_operation", args{"key": "get_nothing"}),
	)
	refused(t, "unknown field", out[0], "invalid_body", "colour")
	if r := refused(t, "501 code points", out[1], "invalid_body", "body"); r.Details["rule"] != "length" {
		t.Errorf("rule: %v", r.Details)
	}
	if r := refused(t, "claims", out[2], "invalid_body", "claims[0].evidence[0].kind"); r.Details["rule"] != "enum" {
		t.Errorf("rule: %v", r.Details)
	}
	refused(t, "board", out[3], "board_not_found", "")
	refused(t, "thread", out[4], "thread_not_found", "")
	refused(t, "parent", out[5], "parent_not_found", "")
	refused(t, "close by another", out[6], "thread_authority_missing", "")
	refused(t, "state closed", out[7], "state_not_settable", "")
	if r := refused(t, "pin", out[8], "token_right_missing", "right"); r.Details["rule"] != "pin" {
		t.Errorf("pin: %v", r.Details)
	}
	refused(t, "slug", out[9], "conflict", "")
	refused(t, "call of no operation", out[10], "operation_not_found", "")
	refused(t, "contract of no operation", out[11], "operation_not_found", "")

	out = run(t, e, alice.Token,
		call("post_threads_id_messages", args{"id": th, "kind": "answer", "body": "me again", "parent": q}),
		call("post_threads_id_reopen", args{"id": th}),
	)
	refused(t, "self reply", out[0], "self_reply", "")
	refused(t, "reopen an open thread", out[1], "state_invalid", "")

	out = run(t, e, reader.Token,
		call("get_manifest", nil),
		call("post_threads_id_messages", args{"id": th, "kind": "note", "body": "x"}),
		call("get_threads_id", args{"id": th}),
	)
	if you := sub(ok(t, "manifest", out[0]), "you"); you["read_only"] != true || len(you["rights"].([]any)) != 0 {
		t.Fatalf("a read-only token's manifest: %v", you)
	}
	refused(t, "read-only token", out[1], "token_read_only", "")
	ok(t, "reading with a read-only token", out[2])

	// A human forbade AI reactions (the CLI's operation): a model's write is
	// refused through every door, the thread shows it, its events say who.
	_, err = e.svc.ForbidLLMReplies(t.Context(), pircan.OperatorCaller("operator:ops"), pircan.ThreadMarkArgs{ID: keyp(th)})
	must(t, err)
	out = run(t, e, bob.Token,
		call("post_threads_id_messages", args{"id": th, "kind": "answer", "body": "x", "parent": q}),
		call("call_api_operation", args{"key": "post_threads_id_messages", "params": args{"id": th, "kind": "note", "body": "x"}}),
		call("get_threads_id", args{"id": th}),
		call("get_threads_id_events", args{"id": th}),
		call("get_threads", args{"author": "pircan:" + alice.Account, "llm_reply_forbidden": false}),
	)
	refused(t, "AI reactions forbidden", out[0], "llm_reply_forbidden", "")
	if items, _ := ok(t, "threads a model may react in", out[4])["items"].([]any); len(items) != 0 {
		t.Fatalf("threads a model may react in: %v", items)
	}
	refused(t, "AI reactions forbidden, through the catalog", out[1], "llm_reply_forbidden", "")
	if tree := ok(t, "thread where AI reactions are forbidden", out[2]); tree["llm_reply_forbidden"] != true || tree["total"] != float64(1) {
		t.Fatalf("thread: %v", tree)
	}
	events, _ := ok(t, "events", out[3])["items"].([]any)
	if last := events[len(events)-1].(map[string]any); last["type"] != "llm_reply_forbidden" || sub(last, "by")["identity"] != "human:ops" {
		t.Fatalf("events: %v", events)
	}
	if status, body := post(t, e.url(parley.APIPath+"/threads/"+th+"/messages"), bob.Token, `{"kind":"note","body":"x"}`); status != 403 ||
		body["reason"] != "llm_reply_forbidden" {
		t.Fatalf("REST: %d %v", status, body)
	}
	status, list := get(t, e.url(parley.APIPath+"/threads?llm_reply_forbidden=true&author=pircan:"+alice.Account), bob.Token)
	if items, _ := list["items"].([]any); status != 200 || len(items) != 1 || items[0].(map[string]any)["id"] != th {
		t.Fatalf("REST threads where AI reactions are forbidden: %d %v", status, list)
	}

	// An unknown tool stays a JSON-RPC error.
	o := mcpclient.Run(t, e.url(parley.MCPPath), bob.Token, call("no_such_tool", nil))[0]
	if o.OK || o.Err == nil || o.Err.Code == 0 {
		t.Errorf("unknown tool: %s", o.Line)
	}
	// No token, or a bad one: 401 before MCP (token_required; unauthenticated).
	for token, reason := range map[string]string{"": "token_required", "pircan_nope": "unauthenticated"} {
		o := mcpclient.Run(t, e.url(parley.MCPPath), token, mcpclient.ConnectFails())[0]
		if o.OK || o.Err == nil || o.Err.HTTPStatus != 401 {
			t.Errorf("token %q: %s", token, o.Line)
		}
		status, body := post(t, e.url(parley.MCPPath), token, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if status != 401 || body["reason"] != reason {
			t.Errorf("token %q: %d %v", token, status, body)
		}
	}
}

func TestRateLimitedOverMCP(t *testing.T) {
	t.Parallel()
	l := pircan.DefaultLimits
	l.ForumPerMinute = 3
	e := newEnv(t, l)
	a := e.line(t, "rl", nil)
	// initialize, tools/list and three calls: the window of 3 refuses the
	// rest, each call as a result with isError and retry_after.
	out := mcpclient.Run(t, e.url(parley.MCPPath), a.Token, mcpclient.ConnectFails(),
		call("get_boards", nil), call("get_boards", nil), call("get_boards", nil), call("get_boards", nil))
	if !out[0].OK && (out[0].Err == nil || out[0].Err.Code != -32010) {
		t.Fatalf("initialize over the limit: %s", out[0].Line)
	}
	last := out[len(out)-1]
	if r := refused(t, "over the limit", last, "rate_limited", ""); r.Details["retry_after"] == nil {
		t.Errorf("retry_after: %v", r.Details)
	}
}

func keyp(s string) *pircan.Key { k := pircan.Key(s); return &k }
func strp(s string) *string     { return &s }
