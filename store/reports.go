package store

import (
	"context"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// Report implements pircan.Store: REPORT's facts are read inside one
// transaction, with the reporter's row locked, so racing reports (several
// connections of one account, MCP) beat neither the hourly limit nor the
// one open report per reported agent; the core's rule decides from them.
func (s *Store) Report(ctx context.Context, actor pircan.Actor, r pircan.NewReport, rule pircan.ReportRule) (string, error) {
	var id string
	me := actor.AgentID
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		f, err := reportFacts(ctx, q, me, r)
		if err != nil {
			return err
		}
		if refusal := rule.Decide(me, r, f); refusal != nil {
			return refusal
		}
		var resource *string
		if r.Resource != "" {
			resource = &r.Resource
		}
		row, err := q.InsertReport(ctx, db.InsertReportParams{Reporter: me, Reported: r.Reported,
			Category: r.Category, Details: r.Details, ResourceID: resource})
		if err != nil {
			if isUniqueViolation(err) {
				return pircan.ErrDuplicateReport // cannot happen under the lock; the index is the backstop
			}
			return err
		}
		id = row.ID
		details := map[string]any{"reported": r.Reported, "category": r.Category, "details_bytes": len(r.Details)}
		if resource != nil {
			details["resource"] = *resource
		}
		return audit(ctx, q, actor, "report.file", row.ID, details)
	})
	return id, err
}

// reportFacts reads what REPORT's rule needs, taking its locks: none past
// a reported agent that is the reporter or does not exist.
func reportFacts(ctx context.Context, q *db.Queries, me string, r pircan.NewReport) (pircan.ReportFacts, error) {
	var f pircan.ReportFacts
	if r.Reported == me || !pircan.ValidID(r.Reported) {
		return f, nil
	}
	var err error
	if f.TargetExists, err = q.AgentExists(ctx, r.Reported); err != nil || !f.TargetExists {
		return f, err
	}
	if err := q.LockAgent(ctx, me); err != nil {
		return f, err
	}
	if r.Resource != "" && pircan.ValidID(r.Resource) {
		// One of the reported agent's, held until the report references it.
		_, lockErr := q.LockResourceOf(ctx, db.LockResourceOfParams{ID: r.Resource, AgentID: r.Reported})
		if err := notFoundOr(lockErr); err != nil {
			return f, err
		}
		f.ResourceFound = lockErr == nil
	}
	n, err := q.CountReportsLastHour(ctx, db.CountReportsLastHourParams{Reporter: me, Span: pircan.HourWindow})
	if err != nil {
		return f, err
	}
	f.ReportsHour = int(n)
	f.OpenReport, err = q.HasOpenReport(ctx, db.HasOpenReportParams{Reporter: me, Reported: r.Reported})
	return f, err
}

// ListReports returns up to limit reports of a status (open, resolved or
// all), newest first, and how many match in all (operator command).
func (s *Store) ListReports(ctx context.Context, status string, limit int) ([]pircan.ReportInfo, int, error) {
	var out []pircan.ReportInfo
	total := 0
	err := s.readPlanned(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.ListReports(ctx, db.ListReportsParams{Status: status, Lim: int32(limit)})
		for _, r := range rows {
			out = append(out, pircan.ReportInfo{ID: r.ID, CreatedAt: r.CreatedAt, Category: r.Category, Status: r.Status,
				ResourceID: orEmpty(r.ResourceID),
				Reporter:   pircan.ReportParty{AgentID: r.Reporter, Name: r.ReporterName},
				Reported:   pircan.ReportParty{AgentID: r.Reported, Name: r.ReportedName}})
			total = int(r.Total)
		}
		return err
	})
	return out, total, err
}

// ReportByID returns everything about one report, or pircan.ErrNotFound
// (operator command).
func (s *Store) ReportByID(ctx context.Context, id string) (pircan.ReportInfo, error) {
	if !pircan.ValidID(id) {
		return pircan.ReportInfo{}, pircan.ErrNotFound
	}
	return readOne(ctx, s, (*db.Queries).ReportByID, id, func(r db.ReportByIDRow) pircan.ReportInfo {
		info := pircan.ReportInfo{ID: r.ID, CreatedAt: r.CreatedAt, Category: r.Category, Details: r.Details, Status: r.Status,
			ResourceID: orEmpty(r.ResourceID),
			Reporter:   pircan.ReportParty{AgentID: r.Reporter, Name: r.ReporterName, Accounts: r.ReporterAccounts},
			Reported:   pircan.ReportParty{AgentID: r.Reported, Name: r.ReportedName, Accounts: r.ReportedAccounts}}
		if r.ResolvedAt.Valid {
			at := r.ResolvedAt.Time
			info.ResolvedAt = &at
		}
		info.ResolvedBy, info.Resolution, info.Action = orEmpty(r.ResolvedBy), orEmpty(r.Resolution), orEmpty(r.Action)
		return info
	})
}

// ResolveReport closes an open report (the core checked its words),
// audited with the operator as actor. A report that is not open is
// pircan.ErrNotPending; one that does not exist, pircan.ErrNotFound.
func (s *Store) ResolveReport(ctx context.Context, actor pircan.Actor, id, resolution, action string) error {
	return s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		r, err := q.LockReport(ctx, id)
		if err != nil {
			return notFound(err)
		}
		if r.Status != pircan.ReportOpen {
			return pircan.ErrNotPending
		}
		if err := q.ResolveReport(ctx, db.ResolveReportParams{ID: id, ResolvedBy: actor.Account,
			Resolution: resolution, Action: action}); err != nil {
			return err
		}
		return audit(ctx, q, actor, "report.resolve", id, map[string]any{
			"reporter": r.Reporter, "reported": r.Reported, "action": action, "resolution_bytes": len(resolution)})
	})
}

// orEmpty reads a nullable text column.
func orEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
