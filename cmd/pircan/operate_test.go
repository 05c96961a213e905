package main

import (
	"bytes"
	"testing"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// Every operator command is a core operation: each change leaves the
// audit row the operation writes from any door (the operator as actor),
// and each refusal is the core's own words, as another door gets them.
func TestOperatorCommandsAuditedAndRefusedByTheCore(t *testing.T) {
	dsn := pgtest.Database(t)
	t.Setenv("PIRCAN_DATABASE_URL", dsn)
	t.Setenv("USER", "dora")
	t.Setenv("SUDO_USER", "")
	ctx := t.Context()
	if err := runMigrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	core := pircan.NewService(st, pircan.Config{Limits: pircan.DefaultLimits}, zerolog.Nop())
	hello := func(account string) pircan.Caller {
		c, err := core.Caller(ctx, pircan.FaceMCP, account, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := core.Hello(ctx, c, pircan.HelloArgs{}); err != nil {
			t.Fatal(err)
		}
		c, _ = core.Caller(ctx, pircan.FaceMCP, account, "")
		return c
	}
	alice, bob := hello("alice"), hello("bob")
	title, content := "Notes", "some text"
	res, err := core.PublishResource(ctx, bob, pircan.PublishResourceArgs{Title: &title, Content: &content})
	if err != nil {
		t.Fatal(err)
	}
	cat, details := "spam", "ads"
	report, err := core.Report(ctx, alice, pircan.ReportArgs{AgentID: &bob.Agent.ID, Category: &cat, Details: &details})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.Owner(ctx, bob, pircan.OwnerArgs{Account: ptr("olga")}); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	cmd := func(args ...string) error {
		out.Reset()
		return runners[args[0]](ctx, args[1:], &out)
	}
	lastAudit := func() pircan.AuditEntry {
		t.Helper()
		var last pircan.AuditEntry
		err := core.Audit(ctx, pircan.OperatorCaller("operator:test"), pircan.AuditArgs{Limit: ptr(1)},
			func(e pircan.AuditEntry) error { last = e; return nil }, nil)
		if err != nil {
			t.Fatal(err)
		}
		return last
	}
	for _, c := range []struct {
		args            []string
		action, subject string
	}{
		{[]string{"channel", "add", "#lab", "--private"}, "channel.add", "#lab"},
		{[]string{"channel", "invite", "#lab", alice.Agent.ID}, "channel.invite", "#lab"},
		{[]string{"channel", "remove", "#lab"}, "channel.remove", "#lab"},
		{[]string{"reports", "resolve", report, "--resolution", "Looked: ads", "--action", "warned"}, "report.resolve", report},
		{[]string{"owner", "verify", "olga", "--name", "Olga O."}, "owner.verify", "olga"},
		{[]string{"owner", "clear", bob.Agent.ID}, "owner.cleared", bob.Agent.ID},
		{[]string{"resources", "remove", res.ID, "--reason", "spam"}, "resource.removed", res.ID},
		{[]string{"token", "issue", "alice", "--label", "ci"}, "token.issued", ""},
	} {
		if err := cmd(c.args...); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		e := lastAudit()
		if e.Action != c.action || e.ActorAccount != "operator:dora" || (c.subject != "" && e.Subject != c.subject) {
			t.Errorf("%v: audit row %+v, want %s on %s by operator:dora", c.args, e, c.action, c.subject)
		}
	}
	tokens, err := core.Tokens(ctx, pircan.OperatorCaller("operator:test"), pircan.TokensArgs{Account: ptr("alice")})
	if err != nil || len(tokens) != 1 {
		t.Fatalf("tokens: %v %v", tokens, err)
	}
	if err := cmd("token", "revoke", tokens[0].ID); err != nil {
		t.Fatal(err)
	}
	if e := lastAudit(); e.Action != "token.revoked" || e.Subject != tokens[0].ID || e.ActorAccount != "operator:dora" {
		t.Errorf("token revoke: audit row %+v", e)
	}

	// The refusals are the core's: the same words the operation gives any
	// caller, the field spelled as the command line spells it.
	before := lastAudit().ID
	noID := "0b5e4f3a-9c1d-4e2f-8a7b-6c5d4e3f2a1b"
	op := pircan.OperatorCaller("operator:dora")
	for _, c := range []struct {
		args []string
		core func() error
	}{
		{[]string{"channel", "remove", "#nowhere"}, func() error {
			_, err := core.RemoveChannel(ctx, op, pircan.ChannelArgs{Channel: ptr("#nowhere")})
			return err
		}},
		{[]string{"channel", "invite", "#nowhere", alice.Agent.ID}, func() error {
			_, err := core.InviteToChannel(ctx, op, pircan.InviteArgs{Channel: ptr("#nowhere"), AgentID: &alice.Agent.ID})
			return err
		}},
		{[]string{"reports", "resolve", report, "--resolution", "again"}, func() error {
			_, err := core.ResolveReport(ctx, op, pircan.ResolveReportArgs{ReportID: &report, Resolution: ptr("again"), Action: ptr("none")})
			return err
		}},
		{[]string{"owner", "clear", bob.Agent.ID}, func() error {
			_, err := core.UnbindOwner(ctx, op, pircan.AgentArgs{AgentID: &bob.Agent.ID})
			return err
		}},
		// An agent deleting a resource that is gone gets the same refusal.
		{[]string{"resources", "remove", res.ID}, func() error {
			_, err := core.DeleteResource(ctx, bob, pircan.ResourceArgs{ResourceID: &res.ID})
			return err
		}},
		{[]string{"token", "revoke", noID}, func() error {
			_, err := core.RevokeToken(ctx, op, pircan.TokenArgs{TokenID: &noID})
			return err
		}},
	} {
		err := cmd(c.args...)
		want := pircan.AsError(c.core()).Message
		if err == nil || err.Error() != want {
			t.Errorf("%v: %v, want the core's %q", c.args, err, want)
		}
	}
	if e := lastAudit(); e.ID != before {
		t.Errorf("a refusal wrote an audit row: %+v", e)
	}

	// Only an operator: an agent or an owner calling the same operations is refused.
	for name, c := range map[string]pircan.Caller{"agent": alice, "owner": pircan.OwnerCaller(pircan.PortalSession{Account: "alice", ID: noID})} {
		if _, err := core.AddChannel(ctx, c, pircan.AddChannelArgs{Channel: ptr("#x")}); pircan.AsError(err).Code != pircan.CodeNotAuthorized {
			t.Errorf("%s adds a channel: %v", name, err)
		}
		if err := core.Audit(ctx, c, pircan.AuditArgs{}, func(pircan.AuditEntry) error { return nil }, nil); pircan.AsError(err).Code != pircan.CodeNotAuthorized {
			t.Errorf("%s reads the audit log: %v", name, err)
		}
	}
}
