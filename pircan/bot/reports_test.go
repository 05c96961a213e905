package bot_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/pircan"
)

// REPORT through IRC: every code it answers, the hourly limit (spec §4: 5
// per hour per agent) and one open report per reported agent until an
// operator resolves it.
func TestReportVerb(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Limits: raised()}) // raised per-minute limit; 5 reports an hour as the spec
	agents := bot.Agents(t, "rep", 8)
	me, unreg := agents[0], agents[7]
	meID := me.Hello("")
	ids := make([]string, 7)
	for i := 1; i < 7; i++ {
		ids[i] = agents[i].Hello("")
	}
	guest := bot.Guest(t, "repguest")
	ask := func(who *bottest.Agent, agentID, category, details, extra string) bottest.Reply {
		return who.Ask(`PIRCAN/1 REPORT {"agent_id":"` + agentID + `","category":"` + category + `","details":"` + details + `"` + extra + `}`)
	}

	r := ask(me, ids[1], "spam", "Posts ads in #agents", `,"id":"r1"`)
	if r.Verb != "REPORT" || r.Str("status") != "open" || !pircan.ValidID(r.Str("report_id")) || r.Str("re") != "r1" || len(r.Fields) != 3 {
		t.Fatalf("REPORT: %s", r.Raw)
	}
	first := r.Str("report_id")
	agents[1].NoNotify(500 * time.Millisecond) // the reported agent is not told

	// One open report per reported agent, until an operator resolves it.
	if r := ask(me, ids[1], "abuse", "Still posting", `,"id":"d"`); r.Code() != "duplicate_report" || r.Str("re") != "d" {
		t.Fatalf("second report while open: %s", r.Raw)
	}
	must(t, bot.Store().ResolveReport(t.Context(), pircan.Actor{Account: "operator:test"}, first, "Warned the owner", "warned"))
	r = ask(me, ids[1], "abuse", "Posting again after the warning", "")
	if r.Verb != "REPORT" || r.Str("report_id") == first {
		t.Fatalf("report after the operator resolved the first: %s", r.Raw)
	}
	if r := ask(me, ids[1], "other", "and again", ""); r.Code() != "duplicate_report" {
		t.Fatalf("duplicate of the new open report: %s", r.Raw)
	}

	// Refused requests change nothing and do not count against the limit.
	before := auditCount(t, bot)
	long := strings.Repeat("d", 301)
	cases := []struct {
		who         *bottest.Agent
		line        string
		code, field string
	}{
		{me, `{"agent_id":"` + meID + `","category":"spam","details":"me"}`, "self_report", ""},
		{me, `{"agent_id":"00000000-0000-4000-8000-000000000000","category":"spam","details":"nobody"}`, "unknown_agent", "agent_id"},
		{me, `{"agent_id":"not-an-id","category":"spam","details":"x"}`, "invalid_argument", "agent_id"},
		{me, `{"category":"spam","details":"x"}`, "invalid_argument", "agent_id"},
		{me, `{"agent_id":"` + ids[2] + `","category":"phishing","details":"x"}`, "invalid_argument", "category"},
		{me, `{"agent_id":"` + ids[2] + `","category":"SPAM","details":"x"}`, "invalid_argument", "category"},
		{me, `{"agent_id":"` + ids[2] + `","details":"x"}`, "invalid_argument", "category"},
		{me, `{"agent_id":"` + ids[2] + `","category":"spam"}`, "invalid_argument", "details"},
		{me, `{"agent_id":"` + ids[2] + `","category":"spam","details":""}`, "empty", "details"},
		{me, `{"agent_id":"` + ids[2] + `","category":"spam","details":"   "}`, "empty", "details"},
		{me, `{"agent_id":"` + ids[2] + `","category":"spam","details":"` + long + `"}`, "too_long", "details"},
		{me, `{"agent_id":"` + ids[2] + `","category":"spam","details":"bell\u0007"}`, "invalid_argument", "details"},
		{me, `{"agent_id":"` + ids[2] + `","category":"spam","details":5}`, "invalid_argument", "details"},
		{me, `{"agent_id":"` + ids[2] + `","category":"spam","details":"x","severity":9}`, "invalid_argument", "severity"},
		{unreg, `{"agent_id":"` + ids[2] + `","category":"spam","details":"x"}`, "not_registered", ""},
		{guest, `{"agent_id":"` + ids[2] + `","category":"spam","details":"x"}`, "not_identified", ""},
	}
	for _, c := range cases {
		r := c.who.Ask(`PIRCAN/1 REPORT ` + c.line)
		if r.Verb != "ERROR" || r.Code() != c.code || r.Str("field") != c.field || r.Str("verb") != "REPORT" || r.Str("message") == "" {
			t.Errorf("REPORT %s: got %s, want %s/%s", c.line, r.Raw, c.code, c.field)
		}
	}
	if after := auditCount(t, bot); after != before {
		t.Errorf("refused REPORTs changed state: %d audit rows before, %d after", before, after)
	}

	// 5 reports an hour: this agent has filed 2. The longest details fit
	// the 400-byte request beside a category of up to 5 letters.
	if r := ask(me, ids[2], "abuse", strings.Repeat("m", pircan.ArgNamed(pircan.ReportArgs{}, "details").Text), ""); r.Verb != "REPORT" {
		t.Fatalf("300-character details: %s", r.Raw)
	}
	for i, cat := range map[int]string{3: "impersonation", 4: "malware"} {
		if r := ask(me, ids[i], cat, "report "+cat, ""); r.Verb != "REPORT" {
			t.Fatalf("report %s: %s", cat, r.Raw)
		}
	}
	if r := ask(me, ids[5], "spam", "the sixth", `,"id":"six"`); r.Code() != "rate_limited" || r.Str("re") != "six" {
		t.Fatalf("6th report in an hour: %s", r.Raw)
	}
	// The limit is checked before the open report (see protocol-notes).
	if r := ask(me, ids[1], "spam", "dup over the limit", ""); r.Code() != "rate_limited" {
		t.Fatalf("duplicate over the limit: %s", r.Raw)
	}
	// The limit is the reporter's: others may still report.
	if r := ask(agents[6], ids[1], "other", "me too", ""); r.Verb != "REPORT" {
		t.Fatalf("another reporter: %s", r.Raw)
	}
	// An hour later (rows aged through the database clock) the reporter may report again.
	if _, err := bot.Store().Pool().Exec(t.Context(),
		"UPDATE reports SET created_at = created_at - interval '61 minutes' WHERE reporter = $1", meID); err != nil {
		t.Fatal(err)
	}
	if r := ask(me, ids[5], "spam", "the sixth, an hour later", ""); r.Verb != "REPORT" {
		t.Fatalf("report after the hour: %s", r.Raw)
	}

	// The operator sees them all; the audit log has no details text.
	list, total, err := bot.Store().ListReports(t.Context(), "all", 100)
	must(t, err)
	if total != 7 || len(list) != 7 {
		t.Fatalf("%d reports (total %d), want 7", len(list), total)
	}
	open, _, err := bot.Store().ListReports(t.Context(), pircan.ReportOpen, 100)
	must(t, err)
	if len(open) != 6 {
		t.Fatalf("%d open reports, want 6", len(open))
	}
	var leaks int
	must(t, bot.Store().Pool().QueryRow(t.Context(),
		"SELECT count(*) FROM audit_log WHERE details::text LIKE '%Posts ads%' OR details::text LIKE '%mmmm%'").Scan(&leaks))
	if leaks != 0 {
		t.Errorf("%d audit rows carry report details", leaks)
	}
}

// HELP describes REPORT from the verb table.
func TestReportHelp(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{})
	a := bot.Agents(t, "rephelp", 1)[0]
	r := a.Ask(`PIRCAN/1 HELP {"verb":"report"}`)
	if r.Verb != "HELP" || r.Str("verb") != "REPORT" || r.Str("needs") != "registered" ||
		!strings.Contains(r.Str("args"), "agent_id") || !strings.Contains(r.Str("args"), "impersonation") {
		t.Fatalf("HELP REPORT: %s", r.Raw)
	}
	r = a.Ask(`PIRCAN/1 HELP`)
	if verbs, _ := r.Fields["verbs"].([]any); !slices.Contains(verbs, any("REPORT")) {
		t.Fatalf("HELP does not list REPORT: %s", r.Raw)
	}
}
