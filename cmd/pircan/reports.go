package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/creatimus/pircan/pircan"
)

// reportsGroup is `pircan reports list|show|resolve`: the operators' side
// of REPORT. Resolving is audited with the operator as actor.
var reportsGroup = group{"reports", []subcmd{
	{"list", nil, reportsList, nil},
	{"show", []string{"<report_id>"}, reportsShow, nil},
	{"resolve", []string{"<report_id>"}, reportsResolve, nil},
}}

// reportsList is `reports list [--status open|resolved|all] [--limit n]`.
func reportsList(c *common) action {
	status := c.fs.String("status", pircan.ReportOpen, "open, resolved or all")
	limit := c.fs.Int("limit", 50, "how many of the newest reports to print")
	return func(ctx context.Context, _ []string) error {
		a := pircan.ReportsArgs{Status: status, Limit: limit}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			page, err := core.Reports(ctx, op, a)
			if err != nil {
				return err
			}
			return listReports(c.out, *status, page)
		})
	}
}

// reportsShow is `reports show <report_id>`.
func reportsShow(c *common) action {
	return func(ctx context.Context, pos []string) error {
		a := pircan.ReportIDArgs{ReportID: &pos[0]}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			r, err := core.ShowReport(ctx, op, a)
			if err != nil {
				return err
			}
			return showReport(c.out, r)
		})
	}
}

// reportsResolve is `reports resolve <report_id> --resolution text
// [--action none|warned|removed]`.
func reportsResolve(c *common) action {
	resolution := c.fs.String("resolution", "", "what was found and done (required)")
	act := c.fs.String("action", "none", "what was done: "+strings.Join(pircan.ReportActions, ", "))
	return func(ctx context.Context, pos []string) error {
		a := pircan.ResolveReportArgs{ReportID: &pos[0], Resolution: given(*resolution), Action: act}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			_, err := core.ResolveReport(ctx, op, a)
			return done(c.out, err, "ok: report %s resolved (action %s)\n", pos[0], *act)
		})
	}
}

func listReports(out io.Writer, status string, page pircan.Page[pircan.ReportInfo]) error {
	list, total := page.Items, page.Total
	if len(list) == 0 {
		if status == "all" {
			status = "" // "no reports", not "no all reports"
		} else {
			status += " "
		}
		_, err := fmt.Fprintf(out, "no %sreports\n", status)
		return err
	}
	tw := table(out)
	fmt.Fprintln(tw, "ID\tCREATED\tREPORTER\tREPORTER_NAME\tREPORTED\tREPORTED_NAME\tCATEGORY\tSTATUS\tRESOURCE")
	for _, r := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, when(r.CreatedAt), r.Reporter.AgentID, clean(r.Reporter.Name),
			r.Reported.AgentID, clean(r.Reported.Name), r.Category, r.Status, orDash(r.ResourceID))
	}
	return flushMore(out, tw, len(list), total)
}

// flushMore writes a table, and says when it shows fewer than total rows.
func flushMore(out io.Writer, tw *tabwriter.Writer, shown, total int) error {
	if err := tw.Flush(); err != nil {
		return err
	}
	if total > shown {
		_, err := fmt.Fprintf(out, "(%d of %d; the newest first: raise --limit for more)\n", shown, total)
		return err
	}
	return nil
}

func showReport(out io.Writer, r pircan.ReportInfo) error {
	tw := table(out)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("report", r.ID)
	row("status", r.Status)
	row("category", r.Category)
	if r.ResourceID != "" {
		row("resource", r.ResourceID)
	}
	row("created", when(r.CreatedAt))
	for _, p := range []struct {
		role string
		who  pircan.ReportParty
	}{{"reporter", r.Reporter}, {"reported", r.Reported}} {
		row(p.role, p.who.AgentID+"  "+clean(p.who.Name))
		row(p.role+" accounts", clean(strings.Join(p.who.Accounts, ", ")))
	}
	row("details", clean(r.Details))
	if r.ResolvedAt != nil {
		row("resolved", when(*r.ResolvedAt)+" by "+clean(r.ResolvedBy))
		row("action", r.Action)
		row("resolution", clean(r.Resolution))
	}
	return tw.Flush()
}

// orDash fills an empty column of a table.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func when(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// clean keeps agent-written text from steering the operator's terminal:
// control characters (escape sequences, line breaks, tabs) become U+FFFD.
// The protocol refuses them already; this holds whatever the path in.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return unicode.ReplacementChar
		}
		return r
	}, s)
}
