package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// `pircan forum …` and `pircan token issue --rights`, run as the real
// binary against a real database: each command is one core operation by
// human:<operator>, leaves its audit row, and a refusal is the core's.
func TestForumCommands(t *testing.T) {
	dsn := pgtest.Database(t)
	t.Setenv("PIRCAN_DATABASE_URL", dsn)
	ctx := t.Context()
	if code, out, errOut := cli(t, "migrate"); code != 0 {
		t.Fatalf("migrate: %d %s %s", code, out, errOut)
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	core := pircan.NewService(st, pircan.Config{Limits: pircan.DefaultLimits}, zerolog.Nop())
	agent := func(account string) pircan.Caller {
		c, err := core.Caller(ctx, pircan.FaceMCP, account, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := core.Hello(ctx, c, pircan.HelloArgs{}); err != nil {
			t.Fatal(err)
		}
		c, _ = core.Caller(ctx, pircan.FaceParley, account, "")
		return c
	}
	alice, bob := agent("alice"), agent("bob")
	body := "How do we <b>ship</b>?\nSecond line."
	open, err := core.OpenThread(ctx, alice, pircan.OpenThreadArgs{ID: key("lobby"), EnvelopeArgs: pircan.EnvelopeArgs{Kind: ptr("ask"), Body: &body}})
	if err != nil {
		t.Fatal(err)
	}
	th := pircan.ThreadKey(open.Thread.ID)
	ans, err := core.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: key(th), EnvelopeArgs: pircan.EnvelopeArgs{
		Kind: ptr("answer"), Body: ptr("By boat."), Parent: key(pircan.MessageKey(open.Message.ID))}})
	if err != nil {
		t.Fatal(err)
	}

	// The real binary, as the operator dora.
	pircanCmd := func(args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, binary(t), args...)
		cmd.Env = append(os.Environ(), "PIRCAN_DATABASE_URL="+dsn, "USER=dora", "SUDO_USER=", "PIRCAN_SASL_ACCOUNT=", "PIRCAN_CONFIG=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stdout.String(), stderr.String()
	}
	ok := func(want string, args ...string) string {
		t.Helper()
		code, out, errOut := pircanCmd(args...)
		if code != 0 || errOut != "" || !strings.Contains(out, want) {
			t.Fatalf("pircan %v: %d\n%s\n%s\nwant %q", args, code, out, errOut, want)
		}
		return out
	}
	op := pircan.OperatorCaller("operator:test")
	lastAudit := func() pircan.AuditEntry {
		t.Helper()
		var last pircan.AuditEntry
		if err := core.Audit(ctx, op, pircan.AuditArgs{Limit: ptr(1)}, func(e pircan.AuditEntry) error { last = e; return nil }, nil); err != nil {
			t.Fatal(err)
		}
		return last
	}
	refused := func(want string, args ...string) {
		t.Helper()
		before := lastAudit().ID
		code, out, errOut := pircanCmd(args...)
		if after := lastAudit().ID; after != before {
			t.Errorf("pircan %v: a refusal wrote audit row %d", args, after)
		}
		if code != 1 || out != "" || !strings.Contains(errOut, want) {
			t.Fatalf("pircan %v: %d\n%s\n%s\nwant the refusal %q", args, code, out, errOut, want)
		}
	}
	audited := func(action, subject string) map[string]any {
		t.Helper()
		e := lastAudit()
		var d map[string]any
		if err := json.Unmarshal(e.Details, &d); err != nil {
			t.Fatal(err)
		}
		if e.Action != action || e.Subject != subject || e.ActorAccount != "operator:dora" {
			t.Fatalf("audit row %+v, want %s on %s by operator:dora", e, action, subject)
		}
		return d
	}

	// show: the thread, its tree, its events and what the operator may do.
	out := ok("state      answered (llm, proposed; confirmed state open)", "forum", "show", th)
	for _, want := range []string{
		"title      How do we <b>ship</b>?",
		"opened by  pircan:alice\n",
		"  " + pircan.MessageKey(open.Message.ID) + " ask by pircan:alice (alice)",
		"    | How do we <b>ship</b>?\n    | Second line.",
		"    " + pircan.MessageKey(ans.Message.ID) + " answer by pircan:bob (bob)",
		"opened open, confirmed, by pircan:alice",
		"state open -> answered, proposed, by pircan:bob",
		"you may now: confirm, decline, close, reopen, deferred, obsolete, rejected, forbid-ai",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show: no %q in\n%s", want, out)
		}
	}

	// Each mark: its outcome, its audit row by operator:dora as human:dora.
	ok("ok: "+th+" answered (llm, confirmed)", "forum", "confirm", th)
	if d := audited("forum.confirmed", th); d["human"] != "human:dora" || d["to"] != "answered" {
		t.Errorf("confirm's audit details: %v", d)
	}
	refused("Thread "+th+" has no pending proposal.", "forum", "confirm", th)
	ok("ok: "+th+" closed (user, confirmed, locked)", "forum", "close", th)
	audited("forum.state", th)
	refused("The thread is closed (confirmed)", "forum", "state", th, "deferred")
	ok("ok: "+th+" open (user, confirmed)", "forum", "reopen", th)
	if _, err := core.CloseThread(ctx, alice, pircan.ThreadMarkArgs{ID: key(th)}); err != nil {
		t.Fatal(err)
	}
	ok("ok: "+th+" open (user, confirmed)", "forum", "decline", th)
	if d := audited("forum.declined", th); d["from"] != "closed" || d["to"] != "open" {
		t.Errorf("decline's audit details: %v", d)
	}
	ok("ok: "+th+" obsolete (user, confirmed)", "forum", "state", th, "obsolete")
	audited("forum.state", th)
	refused(`"open" is not set this way`, "forum", "state", th, "open")
	refused(`is a thread key (th_<n>) or its number`, "forum", "close", "nothing")
	refused("No thread th_99999", "forum", "reopen", "th_99999")
	out = ok("confirmed, by human:dora", "forum", "show", strings.TrimPrefix(th, "th_"))
	if strings.Count(out, "by human:dora") != 5 {
		t.Errorf("show: want the five marks by human:dora:\n%s", out)
	}

	// AI reactions forbidden: an audit row, bob may not write; forbidding
	// again changes and records nothing; allowed again.
	ok("ok: "+th+" obsolete (user, confirmed, AI reactions forbidden)", "forum", "forbid-ai", th)
	if d := audited("forum.llm_reply_forbidden", th); d["human"] != "human:dora" || d["confirmed"] != true || len(d) != 2 {
		t.Errorf("forbid-ai's audit details: %v", d)
	}
	forbidden := lastAudit().ID
	ok("ok: "+th+" obsolete (user, confirmed, AI reactions forbidden)", "forum", "forbid-ai", th)
	if lastAudit().ID != forbidden {
		t.Errorf("forbidding again wrote an audit row")
	}
	if _, err := core.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: key(th), EnvelopeArgs: pircan.EnvelopeArgs{
		Kind: ptr("note"), Body: ptr("may I?")}}); pircan.AsError(err).Code != pircan.CodeLLMReplyForbidden {
		t.Fatalf("bob where AI reactions are forbidden: %v", err)
	}
	out = ok("AI reactions forbidden", "forum", "show", th)
	if !strings.Contains(out, "llm_reply_forbidden, confirmed, by human:dora") || !strings.Contains(out, "you may now: reopen, allow-ai\n") {
		t.Errorf("show of a thread where AI reactions are forbidden:\n%s", out)
	}
	ok("ok: "+th+" obsolete (user, confirmed)\n", "forum", "allow-ai", th)
	audited("forum.llm_reply_allowed", th)

	// Boards.
	ok("ok: board 2 research added (Research)", "forum", "boards", "add", "research", "--name", "Research", "--description", "Long reads")
	if d := audited("forum.board_added", "research"); d["human"] != "human:dora" {
		t.Errorf("board's audit details: %v", d)
	}
	refused(`A board with slug "research" exists.`, "forum", "boards", "add", "research", "--name", "Again")
	refused(`--name is required`, "forum", "boards", "add", "other")
	out = ok("2 of 2 boards", "forum", "boards", "list")
	if !strings.Contains(out, "lobby") || !strings.Contains(out, "research  Research") {
		t.Errorf("boards list:\n%s", out)
	}

	// Rights: the default, then an operator's grant and revocation; with
	// them, the extensions the account last wrote under.
	note := pircan.EnvelopeArgs{Kind: ptr("note"), Body: ptr("from a worker"), From: &pircan.FromArgs{Extension: ptr("w1")}}
	if _, err := core.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: key(th), EnvelopeArgs: note}); err != nil {
		t.Fatal(err)
	}
	ok("alice: write (the default", "forum", "rights", "alice")
	if out := ok("bob: write (the default", "forum", "rights", "bob"); !strings.Contains(out, "\nextensions: w1 (20") {
		t.Errorf("bob's remembered extensions:\n%s", out)
	}
	ok("carol: none (the default (PIRCAN_PARLEY_DEFAULT_RIGHTS for an account with an agent))\nextensions: none remembered", "forum", "rights", "carol")
	ok("alice: pin,lock (set by an operator)", "forum", "rights", "alice", "--grant", "lock,pin", "--revoke", "write")
	if d := audited("forum.rights", "alice"); !slices.Equal(toStrings(d["rights"]), []string{"pin", "lock"}) {
		t.Errorf("rights' audit details: %v", d)
	}
	ok("alice: pin,lock (set by an operator)", "forum", "rights", "alice")
	refused(`"boss" is not a right`, "forum", "rights", "alice", "--grant", "boss")
	if _, err := core.PostMessage(ctx, alice, pircan.PostMessageArgs{ID: key(th), EnvelopeArgs: pircan.EnvelopeArgs{
		Kind: ptr("note"), Body: ptr("no write")}}); pircan.AsError(err).Code != pircan.CodeTokenReadOnly {
		t.Fatalf("alice without write: %v", err)
	}

	// A token narrowed to some rights: read alone is read-only.
	out = ok("rights   read", "token", "issue", "bob", "--rights", "read")
	if d := audited("token.issued", lastAudit().Subject); !slices.Equal(toStrings(d["rights"]), []string{"read"}) {
		t.Errorf("token's audit details: %v", d)
	}
	tokens, err := core.Tokens(ctx, op, pircan.TokensArgs{Account: ptr("bob")})
	if err != nil || len(tokens) != 1 || !slices.Equal(tokens[0].Rights, []string{"read"}) {
		t.Fatalf("stored token: %+v %v", tokens, err)
	}
	ok("rights   write,pin", "token", "issue", "bob", "--rights", "pin,write")
	refused(`"boss" is not a right`, "token", "issue", "bob", "--rights", "read,boss")
	ok("rights   account's", "token", "issue", "bob")
	ok("account's", "token", "list", "bob")

	// Usage errors never reach the database.
	if code, _, errOut := pircanCmd("forum", "state", th); code != 2 || !strings.Contains(errOut, "missing argument <state>") {
		t.Errorf("state without a state: %d %s", code, errOut)
	}
	if code, _, errOut := pircanCmd("forum", "boards", "drop", "x"); code != 2 || !strings.Contains(errOut, `unknown subcommand "drop"`) {
		t.Errorf("boards drop: %d %s", code, errOut)
	}
}

func toStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
