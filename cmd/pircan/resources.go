package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// maxResourcesListed bounds `resources list --limit`.
const maxResourcesListed = 1000

// runResources is `pircan resources list|show|remove`: the operators' side
// of the resource library. A removal is audited with the operator as actor
// and the publisher is told (NOTIFY resource_update, content-free).
func runResources(ctx context.Context, args []string, out io.Writer) error {
	sub, args, err := subcommand("resources", args, out, "list", "show", "remove")
	if err != nil {
		return err
	}
	name := "resources " + sub
	c := newCommon(name)
	c.out = out
	var by, reason *string
	var limit *int
	switch sub {
	case "list":
		by = c.fs.String("by", "", "only the resources of this agent (agent_id)")
		limit = c.fs.Int("limit", 50, "how many of the newest resources to print")
	case "remove":
		reason = c.fs.String("reason", "", "why, for the audit log")
	}
	pos, err := c.parsePositional(args)
	if err != nil {
		return err
	}
	names := map[string][]string{"list": nil, "show": {"<resource_id>"}, "remove": {"<resource_id>"}}
	if err := wantArgs(name, pos, names[sub]...); err != nil {
		return err
	}
	if sub == "list" {
		if err := c.intFlag("limit", *limit, 1, maxResourcesListed); err != nil {
			return err
		}
		if *by != "" && !pircan.ValidID(*by) {
			return usagef(name, "--by %q: want an agent_id", *by)
		}
	} else if !pircan.ValidID(pos[0]) {
		return usagef(name, "%q: want a resource_id", pos[0])
	}
	st, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	switch sub {
	case "list":
		return listResources(ctx, st, *by, *limit, out)
	case "show":
		return showResource(ctx, st, pos[0], out)
	}
	svc := pircan.NewService(st, pircan.Config{}, zerolog.Nop())
	r, err := svc.RemoveResource(ctx, operator(), pos[0], *reason)
	if err != nil {
		if pe := (*pircan.Error)(nil); errors.As(err, &pe) && pe.Code == pircan.CodeNotFound {
			return fmt.Errorf("no resource %s", pos[0])
		}
		return err
	}
	_, err = fmt.Fprintf(out, "ok: resource %s of agent %s removed (%d bytes); its publisher is told\n", r.ID, r.By.AgentID, r.Size)
	return err
}

func listResources(ctx context.Context, st *store.Store, by string, limit int, out io.Writer) error {
	list, total, err := st.Resources(ctx, pircan.ResourceQuery{By: by, Limit: limit})
	if err != nil {
		return err
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(out, "no resources")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCREATED\tBY\tBY_NAME\tACCESS\tSIZE\tTITLE")
	for _, r := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, when(r.CreatedAt), r.By.AgentID, clean(r.By.Name), r.Access, r.Size, clean(r.Title))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if total > len(list) {
		_, err = fmt.Fprintf(out, "(%d of %d; the newest first: raise --limit for more)\n", len(list), total)
	}
	return err
}

// showResource prints a resource's metadata, then its content as the
// publisher wrote it (control characters but tabs and line breaks shown
// as U+FFFD).
func showResource(ctx context.Context, st *store.Store, id string, out io.Writer) error {
	r, err := st.Resource(ctx, "", id)
	if errors.Is(err, pircan.ErrNotFound) {
		return fmt.Errorf("no resource %s", id)
	}
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("resource", r.ID)
	row("title", clean(r.Title))
	row("by", r.By.AgentID+"  "+clean(r.By.Name))
	row("access", r.Access)
	row("tags", clean(strings.Join(r.Tags, ", ")))
	row("media type", clean(r.MediaType))
	row("size", fmt.Sprintf("%d bytes", r.Size))
	row("created", when(r.CreatedAt))
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "\n%s\n", cleanText(r.Content))
	return err
}

// cleanText is clean for multi-line text: tabs and line breaks stay.
func cleanText(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) {
			return r
		}
		return unicode.ReplacementChar
	}, s)
}
