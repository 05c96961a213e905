package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// maxReportsListed bounds `reports list --limit`.
const maxReportsListed = 10000

// runReports is `pircan reports list|show|resolve`: the operators' side of
// REPORT. Resolving is audited with the operator as actor.
func runReports(ctx context.Context, args []string, out io.Writer) error {
	sub, args, err := subcommand("reports", args, out, "list", "show", "resolve")
	if err != nil {
		return err
	}
	name := "reports " + sub
	c := newCommon(name)
	c.out = out
	var status, resolution, action *string
	var limit *int
	switch sub {
	case "list":
		status = c.fs.String("status", store.ReportOpen, "open, resolved or all")
		limit = c.fs.Int("limit", 50, "how many of the newest reports to print")
	case "resolve":
		resolution = c.fs.String("resolution", "", "what was found and done (required)")
		action = c.fs.String("action", "none", "what was done: "+strings.Join(store.ReportActions, ", "))
	}
	pos, err := c.parsePositional(args)
	if err != nil {
		return err
	}
	names := map[string][]string{"list": nil, "show": {"<report_id>"}, "resolve": {"<report_id>"}}
	if err := wantArgs(name, pos, names[sub]...); err != nil {
		return err
	}
	switch sub {
	case "list":
		switch *status {
		case store.ReportOpen, store.ReportResolved, "all":
		default:
			return usagef(name, "--status %q: want open, resolved or all", *status)
		}
		if err := c.intFlag("limit", *limit, 1, maxReportsListed); err != nil {
			return err
		}
	case "resolve":
		if strings.TrimSpace(*resolution) == "" {
			return usagef(name, "--resolution is required")
		}
	}
	st, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	switch sub {
	case "list":
		return listReports(ctx, st, *status, *limit, out)
	case "show":
		return showReport(ctx, st, pos[0], out)
	}
	err = st.ResolveReport(ctx, operator(), pos[0], *resolution, *action)
	switch {
	case errors.Is(err, pircan.ErrNotFound):
		return fmt.Errorf("no report %s", pos[0])
	case errors.Is(err, pircan.ErrNotPending):
		return fmt.Errorf("report %s is already resolved", pos[0])
	case err != nil:
		return err
	}
	fmt.Fprintf(out, "ok: report %s resolved (action %s)\n", pos[0], *action)
	return nil
}

func listReports(ctx context.Context, st *store.Store, status string, limit int, out io.Writer) error {
	list, total, err := st.ListReports(ctx, status, limit)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		if status == "all" {
			status = "" // "no reports", not "no all reports"
		} else {
			status += " "
		}
		_, err := fmt.Fprintf(out, "no %sreports\n", status)
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCREATED\tREPORTER\tREPORTER_NAME\tREPORTED\tREPORTED_NAME\tCATEGORY\tSTATUS\tRESOURCE")
	for _, r := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, when(r.CreatedAt), r.Reporter.AgentID, clean(r.Reporter.Name),
			r.Reported.AgentID, clean(r.Reported.Name), r.Category, r.Status, orDash(r.ResourceID))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if total > len(list) {
		_, err = fmt.Fprintf(out, "(%d of %d; the newest first: raise --limit for more)\n", len(list), total)
	}
	return err
}

func showReport(ctx context.Context, st *store.Store, id string, out io.Writer) error {
	r, err := st.ReportByID(ctx, id)
	if errors.Is(err, pircan.ErrNotFound) {
		return fmt.Errorf("no report %s", id)
	}
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
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
		who  store.ReportParty
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
