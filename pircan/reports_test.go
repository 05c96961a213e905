package pircan_test

import (
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

func TestReport(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	me := agent(t, svc, pircan.FaceIRC)
	others := make([]pircan.Caller, 7)
	for i := range others {
		others[i] = agent(t, svc, pircan.FaceIRC)
	}
	report := func(who pircan.Caller, on int, category, details string) (string, error) {
		return svc.Report(ctx, who, pircan.ReportArgs{AgentID: &others[on].Agent.ID, Category: &category, Details: &details})
	}
	first, err := report(me, 0, "spam", "Posts ads in #agents")
	if err != nil || !pircan.ValidID(first) {
		t.Fatalf("REPORT: %q %v", first, err)
	}
	// One open report per reported agent, until an operator resolves it.
	_, err = report(me, 0, "abuse", "Still posting")
	wantErr(t, "second report while open", err, pircan.CodeDuplicateReport, "")
	must(t, shared.ResolveReport(ctx, pircan.Actor{Account: "operator:test"}, first, "Warned the owner", "warned"))
	if id, err := report(me, 0, "abuse", "Again after the warning"); err != nil || id == first {
		t.Fatalf("report after the first was resolved: %q %v", id, err)
	}

	detailsMax := pircan.ArgNamed(pircan.ReportArgs{}, "details").Text
	to := others[1].Agent.ID
	before := auditCount(t, me.Account)
	for _, c := range []struct {
		name  string
		args  pircan.ReportArgs
		code  pircan.Code
		field string
	}{
		{"self", pircan.ReportArgs{AgentID: &me.Agent.ID, Category: sp("spam"), Details: sp("me")}, pircan.CodeSelfReport, ""},
		{"nobody", pircan.ReportArgs{AgentID: sp(noID), Category: sp("spam"), Details: sp("x")}, pircan.CodeUnknownAgent, "agent_id"},
		{"bad id", pircan.ReportArgs{AgentID: sp("not-an-id"), Category: sp("spam"), Details: sp("x")}, pircan.CodeInvalidArgument, "agent_id"},
		{"no id", pircan.ReportArgs{Category: sp("spam"), Details: sp("x")}, pircan.CodeInvalidArgument, "agent_id"},
		{"unknown category", pircan.ReportArgs{AgentID: &to, Category: sp("phishing"), Details: sp("x")}, pircan.CodeInvalidArgument, "category"},
		{"upper category", pircan.ReportArgs{AgentID: &to, Category: sp("SPAM"), Details: sp("x")}, pircan.CodeInvalidArgument, "category"},
		{"no category", pircan.ReportArgs{AgentID: &to, Details: sp("x")}, pircan.CodeInvalidArgument, "category"},
		{"no details", pircan.ReportArgs{AgentID: &to, Category: sp("spam")}, pircan.CodeInvalidArgument, "details"},
		{"empty details", pircan.ReportArgs{AgentID: &to, Category: sp("spam"), Details: sp("")}, pircan.CodeEmpty, "details"},
		{"blank details", pircan.ReportArgs{AgentID: &to, Category: sp("spam"), Details: sp("   ")}, pircan.CodeEmpty, "details"},
		{"long details", pircan.ReportArgs{AgentID: &to, Category: sp("spam"), Details: sp(strings.Repeat("d", detailsMax+1))}, pircan.CodeTooLong, "details"},
		{"bell in details", pircan.ReportArgs{AgentID: &to, Category: sp("spam"), Details: sp("bell\a")}, pircan.CodeInvalidArgument, "details"},
	} {
		_, err := svc.Report(ctx, me, c.args)
		wantErr(t, c.name, err, c.code, c.field)
	}
	if auditCount(t, me.Account) != before {
		t.Fatalf("refused REPORTs changed state")
	}

	// Every category; the longest details fit; ReportsHour an hour, refused ones not counted.
	filed := 2
	for i, cat := range pircan.ReportCategories {
		if filed == svc.Limits().ReportsHour {
			break
		}
		details := "report " + cat
		if i == 0 {
			details = strings.Repeat("m", detailsMax)
		}
		if _, err := report(me, i+1, cat, details); err != nil {
			t.Fatalf("report %s: %v", cat, err)
		}
		filed++
	}
	if filed != svc.Limits().ReportsHour {
		t.Fatalf("filed %d, the test needs more categories or agents", filed)
	}
	_, err = report(me, 6, "spam", "one too many")
	wantErr(t, "a report over the hourly limit", err, pircan.CodeRateLimited, "")
	// The limit is checked before the open report.
	_, err = report(me, 0, "spam", "dup over the limit")
	wantErr(t, "a duplicate over the limit", err, pircan.CodeRateLimited, "")
	// The limit is the reporter's.
	if _, err := report(others[6], 0, "other", "me too"); err != nil {
		t.Fatalf("another reporter: %v", err)
	}
	var leaks int
	must(t, shared.Pool().QueryRow(ctx, "SELECT count(*) FROM audit_log WHERE details::text LIKE '%Posts ads%'").Scan(&leaks))
	if leaks != 0 {
		t.Errorf("%d audit rows carry report details", leaks)
	}
}
