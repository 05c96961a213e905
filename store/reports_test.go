package store_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// REPORT's rules (spec §3b, §4) and the operators' side, at the store. The
// helpers (hs, act, wantErr, noSuchID) are handshake_test.go's.

func (h *hs) report(from pircan.Agent, reported string, category, details string) (string, error) {
	return h.s.Report(h.ctx, act(from), pircan.NewReport{Reported: reported, Category: category, Details: details}, pircan.ReportRule{Limits: pircan.DefaultLimits})
}

func (h *hs) mustReport(from, reported pircan.Agent) string {
	h.t.Helper()
	id, err := h.report(from, reported.ID, "spam", "posts ads")
	if err != nil {
		h.t.Fatalf("report %s -> %s: %v", from.Name, reported.Name, err)
	}
	return id
}

func TestReportSelfAndUnknownAgent(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a := h.agent("alice")
	audits := h.lastAuditID()
	_, err := h.report(a, a.ID, "spam", "me")
	wantErr(t, "report self", err, pircan.CodeSelfReport)
	_, err = h.report(a, noSuchID, "spam", "nobody")
	wantErr(t, "report a valid UUID that is no agent", err, pircan.ErrUnknownAgent)
	_, err = h.report(a, "not-a-uuid", "spam", "nobody")
	wantErr(t, "report a non-UUID", err, pircan.ErrUnknownAgent)
	if n := h.count("SELECT count(*) FROM reports"); n != 0 {
		t.Fatalf("refused reports were stored: %d rows", n)
	}
	if got := h.auditAfter(audits); len(got) != 0 {
		t.Errorf("refused reports wrote audit rows: %v", actions(got))
	}
}

// One open report per reporter and reported agent, until an operator
// resolves it; other reporters are not blocked by it.
func TestReportDuplicateUntilResolved(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b, c := h.agent("alice"), h.agent("bob"), h.agent("carol")
	first := h.mustReport(a, b)
	_, err := h.report(a, b.ID, "abuse", "again")
	wantErr(t, "second open report", err, pircan.CodeDuplicateReport)
	h.mustReport(c, b) // another reporter
	h.mustReport(b, a) // the other way round
	h.mustReport(a, c) // another target

	wantErr(t, "resolve a missing report", h.s.ResolveReport(h.ctx, pircan.Actor{Account: "operator:op"}, noSuchID, "x", "none"), pircan.ErrNotFound)
	if s := h.str("SELECT status FROM reports WHERE id = $1", first); s != pircan.ReportOpen {
		t.Fatalf("refused resolutions changed the report: %s", s)
	}
	if err := h.s.ResolveReport(h.ctx, pircan.Actor{Account: "operator:op"}, first, "warned them about the ads", "warned"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "resolve twice", h.s.ResolveReport(h.ctx, pircan.Actor{Account: "operator:op"}, first, "again", "none"), pircan.ErrNotPending)
	second := h.mustReport(a, b) // allowed again once resolved
	if second == first {
		t.Fatal("the new report reused the old id")
	}
	r, err := h.s.ReportByID(h.ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != pircan.ReportResolved || r.ResolvedAt == nil || r.ResolvedBy != "operator:op" ||
		r.Resolution != "warned them about the ads" || r.Action != "warned" {
		t.Fatalf("resolved report: %+v", r)
	}
}

func TestReportRateLimited(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	r := h.agent("reporter")
	targets := h.agents("t", 8)
	for i := 0; i < 5; i++ {
		h.mustReport(r, targets[i])
	}
	// Refused reports do not count; the limit is per reporter.
	_, err := h.report(r, r.ID, "spam", "self")
	wantErr(t, "self", err, pircan.CodeSelfReport)
	_, err = h.report(r, targets[5].ID, "spam", "sixth")
	wantErr(t, "6th report in an hour", err, pircan.ErrRateLimited)
	h.mustReport(targets[6], targets[5])
	// Resolving does not give the hour back: the rows count, not the open ones.
	for _, id := range h.strs("SELECT id::text FROM reports WHERE reporter = $1", r.ID) {
		if err := h.s.ResolveReport(h.ctx, pircan.Actor{Account: "op"}, id, "done", "none"); err != nil {
			t.Fatal(err)
		}
	}
	_, err = h.report(r, targets[5].ID, "spam", "sixth")
	wantErr(t, "6th report after resolutions", err, pircan.ErrRateLimited)
	h.exec("UPDATE reports SET created_at = created_at - interval '61 minutes' WHERE reporter = $1", r.ID)
	h.mustReport(r, targets[5])
}

func (h *hs) strs(sql string, args ...any) []string {
	h.t.Helper()
	rows, err := h.s.Pool().Query(h.ctx, sql, args...)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			h.t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		h.t.Fatal(err)
	}
	return out
}

// race runs n calls at once and counts the successes; every failure must be
// one of the allowed rule errors.
func race(t *testing.T, n int, call func(i int) error, allowed ...any) int {
	t.Helper()
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			errs[i] = call(i)
		}(i)
	}
	close(start)
	wg.Wait()
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case !slices.ContainsFunc(allowed, func(w any) bool { return is(err, w) }):
			t.Errorf("call %d: %v", i, err)
		}
	}
	return ok
}

// One agent's racing REPORTs (several connections, later MCP) must not beat
// the hourly limit or the one open report per reported agent: the
// reporter's row is locked for the whole transaction.
func TestRacingReportsKeepTheLimits(t *testing.T) {
	t.Parallel()
	t.Run("hourly", func(t *testing.T) {
		h := newHS(t)
		r := h.agent("reporter")
		targets := h.agents("t", 20)
		ok := race(t, 20, func(i int) error { _, err := h.report(r, targets[i].ID, "spam", "racing"); return err }, pircan.ErrRateLimited)
		if ok != 5 {
			t.Errorf("%d of 20 racing reports succeeded, want 5 (limit beaten by a race)", ok)
		}
		if n := h.count("SELECT count(*) FROM reports"); n != 5 {
			t.Errorf("%d reports stored, want 5", n)
		}
	})
	t.Run("one open per pair", func(t *testing.T) {
		h := newHS(t)
		r, b := h.agent("reporter"), h.agent("bob")
		ok := race(t, 10, func(int) error { _, err := h.report(r, b.ID, "spam", "racing"); return err }, pircan.CodeDuplicateReport)
		if ok != 1 {
			t.Errorf("%d of 10 racing reports of one agent succeeded, want 1", ok)
		}
		if n := h.count("SELECT count(*) FROM reports WHERE status = 'open'"); n != 1 {
			t.Errorf("%d open reports, want 1", n)
		}
	})
	t.Run("racing resolutions", func(t *testing.T) {
		h := newHS(t)
		id := h.mustReport(h.agent("reporter"), h.agent("bob"))
		ok := race(t, 10, func(i int) error {
			return h.s.ResolveReport(h.ctx, pircan.Actor{Account: fmt.Sprintf("operator:op%d", i)}, id, "done", "none")
		}, pircan.ErrNotPending)
		if ok != 1 || h.count("SELECT count(*) FROM audit_log WHERE action = 'report.resolve'") != 1 {
			t.Errorf("%d racing resolutions succeeded, want 1", ok)
		}
	})
}

// Agents reporting each other, and contacting each other, at the same
// moment: the reporter's lock must not deadlock against the other
// transaction's foreign-key checks on the same agents rows.
func TestRacingReportsBothDirections(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	const pairs = 20
	as, bs := h.agents("a", pairs), h.agents("b", pairs)
	ok := race(t, 4*pairs, func(i int) error {
		from, to := as[i/4], bs[i/4]
		if i%2 == 1 {
			from, to = to, from
		}
		if i%4 >= 2 {
			_, err := h.contact(from, to)
			return err
		}
		_, err := h.report(from, to.ID, "other", "racing")
		return err
	})
	if ok != 4*pairs {
		t.Fatalf("%d of %d reports and contacts succeeded", ok, 4*pairs)
	}
	if n := h.count("SELECT count(*) FROM reports"); n != 2*pairs {
		t.Fatalf("%d reports, want %d", n, 2*pairs)
	}
}

// report.file names the ids, the category and the size, never the text;
// report.resolve names the operator as actor, and the resolution's size.
func TestReportAuditWithoutDetails(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b := h.agent("alice"), h.agent("bob")
	const details, resolution = "DETAILMARK posts zebra ads", "RESOLUTIONMARK warned about zebras"
	start := h.lastAuditID()
	id, err := h.report(a, b.ID, "impersonation", details)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.s.ResolveReport(h.ctx, pircan.Actor{Account: "operator:carol"}, id, resolution, "removed"); err != nil {
		t.Fatal(err)
	}
	rows := h.auditAfter(start)
	if got := actions(rows); !slices.Equal(got, []string{"report.file", "report.resolve"}) {
		t.Fatalf("audit actions %v", got)
	}
	file, res := rows[0], rows[1]
	if file.subject != id || file.actorAgent != a.ID || h.str("SELECT actor_account FROM audit_log WHERE id = $1", file.id) != a.Account {
		t.Errorf("report.file row: %+v", file)
	}
	for _, want := range []string{b.ID, `"impersonation"`, fmt.Sprintf(`"details_bytes": %d`, len(details))} {
		if !strings.Contains(file.details, want) {
			t.Errorf("report.file details %s lack %s", file.details, want)
		}
	}
	if res.subject != id || res.actorAgent != "" || h.str("SELECT actor_account FROM audit_log WHERE id = $1", res.id) != "operator:carol" {
		t.Errorf("report.resolve row: %+v", res)
	}
	for _, want := range []string{`"removed"`, fmt.Sprintf(`"resolution_bytes": %d`, len(resolution)), a.ID, b.ID} {
		if !strings.Contains(res.details, want) {
			t.Errorf("report.resolve details %s lack %s", res.details, want)
		}
	}
	if n := h.count("SELECT count(*) FROM audit_log WHERE details::text LIKE '%MARK%' OR details::text LIKE '%zebra%'"); n != 0 {
		t.Errorf("%d audit rows contain report text", n)
	}
	if n := h.count("SELECT count(*) FROM reports WHERE details LIKE '%DETAILMARK%' AND resolution LIKE '%RESOLUTIONMARK%'"); n != 1 {
		t.Fatalf("marker search is broken: %d", n)
	}
}

func TestListAndShowReports(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b, c := h.agent("alice"), h.agent("bob"), h.agent("carol")
	r1 := h.mustReport(a, b)
	h.exec("UPDATE reports SET created_at = created_at - interval '2 minutes' WHERE id = $1", r1)
	r2 := h.mustReport(a, c)
	h.exec("UPDATE reports SET created_at = created_at - interval '1 minute' WHERE id = $1", r2)
	r3 := h.mustReport(c, b)
	if err := h.s.ResolveReport(h.ctx, pircan.Actor{Account: "op"}, r2, "fine", "none"); err != nil {
		t.Fatal(err)
	}
	ids := func(list []pircan.ReportInfo) []string {
		out := make([]string, len(list))
		for i, r := range list {
			out[i] = r.ID
		}
		return out
	}
	for _, tc := range []struct {
		status string
		limit  int
		want   []string
		total  int
	}{
		{"open", 10, []string{r3, r1}, 2},
		{"resolved", 10, []string{r2}, 1},
		{"all", 10, []string{r3, r2, r1}, 3},
		{"all", 2, []string{r3, r2}, 3},
	} {
		list, total, err := h.s.ListReports(h.ctx, tc.status, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(list), tc.want) || total != tc.total {
			t.Errorf("list %s/%d: %v (total %d), want %v (total %d)", tc.status, tc.limit, ids(list), total, tc.want, tc.total)
		}
	}
	list, _, _ := h.s.ListReports(h.ctx, "open", 1)
	if got := list[0]; got.Reporter.AgentID != c.ID || got.Reporter.Name != "carol" || got.Reporter.Accounts != nil || got.Reported.Name != "bob" ||
		got.Category != "spam" || got.Status != "open" || got.Details != "" {
		t.Errorf("list item: %+v", got)
	}
	r, err := h.s.ReportByID(h.ctx, r1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Details != "posts ads" || !slices.Equal(r.Reporter.Accounts, []string{"alice"}) ||
		!slices.Equal(r.Reported.Accounts, []string{"bob"}) || r.ResolvedAt != nil || r.Action != "" {
		t.Errorf("show: %+v", r)
	}
	_, err = h.s.ReportByID(h.ctx, noSuchID)
	wantErr(t, "show a missing report", err, pircan.ErrNotFound)
	_, err = h.s.ReportByID(h.ctx, "nope")
	wantErr(t, "show a non-UUID", err, pircan.ErrNotFound)
}
