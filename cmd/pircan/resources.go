package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/creatimus/pircan/pircan"
)

// resourcesGroup is `pircan resources list|show|remove`: the operators'
// side of the resource library. A removal is audited with the operator as
// actor and the publisher is told (NOTIFY resource_update, content-free).
var resourcesGroup = group{"resources", []subcmd{
	{"list", nil, resourcesList, nil},
	{"show", []string{"<resource_id>"}, resourcesShow, nil},
	{"remove", []string{"<resource_id>"}, resourcesRemove, nil},
}}

// resourcesList is `resources list [--by <agent_id>] [--limit n]`.
func resourcesList(c *common) action {
	by := c.fs.String("by", "", "only the resources of this agent (agent_id)")
	limit := c.fs.Int("limit", 50, "how many of the newest resources to print")
	return func(ctx context.Context, _ []string) error {
		a := pircan.AllResourcesArgs{By: given(*by), Limit: limit}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			page, err := core.AllResources(ctx, op, a)
			if err != nil {
				return err
			}
			return listResources(c.out, page)
		})
	}
}

// resourcesShow is `resources show <resource_id>`.
func resourcesShow(c *common) action {
	return func(ctx context.Context, pos []string) error {
		a := pircan.ResourceArgs{ResourceID: &pos[0]}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			r, err := core.ReadResource(ctx, op, a)
			if err != nil {
				return err
			}
			return showResource(c.out, r)
		})
	}
}

// resourcesRemove is `resources remove <resource_id> [--reason text]`.
func resourcesRemove(c *common) action {
	reason := c.fs.String("reason", "", "why, for the audit log")
	return func(ctx context.Context, pos []string) error {
		a := pircan.RemoveResourceArgs{ResourceID: &pos[0], Reason: reason}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			r, err := core.RemoveResource(ctx, op, a)
			return done(c.out, err, "ok: resource %s of agent %s removed (%d bytes); its publisher is told\n", r.ID, r.By.AgentID, r.Size)
		})
	}
}

func listResources(out io.Writer, page pircan.Page[pircan.Resource]) error {
	list, total := page.Items, page.Total
	if len(list) == 0 {
		_, err := fmt.Fprintln(out, "no resources")
		return err
	}
	tw := table(out)
	fmt.Fprintln(tw, "ID\tCREATED\tBY\tBY_NAME\tACCESS\tSIZE\tTITLE")
	for _, r := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, when(r.CreatedAt), r.By.AgentID, clean(r.By.Name), r.Access, r.Size, clean(r.Title))
	}
	return flushMore(out, tw, len(list), total)
}

// showResource prints a resource's metadata, then its content as the
// publisher wrote it (control characters but tabs and line breaks shown
// as U+FFFD).
func showResource(out io.Writer, r pircan.Resource) error {
	tw := table(out)
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
	_, err := fmt.Fprintf(out, "\n%s\n", cleanText(r.Content))
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
