package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/creatimus/pircan/pircan"
)

// `pircan forum seal` and `pircan forum requests …`: an operator seals a
// claim (a human's sealed attestation) and reviews access requests, each
// one core operation by human:<operator>.

// forumSeal is `forum seal <claim> <supports|refutes>`.
func forumSeal(c *common) action {
	return func(ctx context.Context, pos []string) error {
		return c.operateForum(ctx, func(core *pircan.Service, op pircan.Caller) error {
			cl, err := core.SealClaim(ctx, op, pircan.SealArgs{ID: ptr(pircan.Key(pos[0])), Verdict: &pos[1]})
			return done(c.out, err, "ok: %s sealed %s by you; the claim is %s\n", pircan.ClaimKey(cl.ID), pos[1], cl.State)
		})
	}
}

// forumRequests is `pircan forum requests list|review`.
var forumRequests = group{"forum requests", []subcmd{
	{"list", nil, requestsList, nil},
	{"review", []string{"<request>", "<decision>"}, requestsReview, nil},
}}

// requestsList is `forum requests list [--state s] [--offset n]`.
func requestsList(c *common) action {
	state := c.fs.String("state", "", "only requests in this state ("+strings.Join(pircan.RequestStates, ", ")+"); default: the open ones")
	page := forumPage(c, "requests")
	return func(ctx context.Context, _ []string) error {
		a := pircan.RequestsArgs{State: given(*state), ForumPageArgs: page}
		return c.operateForum(ctx, func(core *pircan.Service, op pircan.Caller) error {
			p, err := core.TokenRequests(ctx, op, a)
			return listRequests(c.out, core, p, err)
		})
	}
}

// requestsReview is `forum requests review <request> <decision>
// [--reason text] [--lock]`.
func requestsReview(c *common) action {
	reason := c.fs.String("reason", "", "why (required for rejected)")
	lock := c.fs.Bool("lock", false, "an approval grants lock too (write and pin always)")
	return func(ctx context.Context, pos []string) error {
		a := pircan.ReviewArgs{ID: key(pos[0]), Decision: &pos[1], Reason: given(*reason)}
		if *lock {
			a.Rights = &[]string{pircan.RightLock}
		}
		return c.operateForum(ctx, func(core *pircan.Service, op pircan.Caller) error {
			r, err := core.ReviewTokenRequest(ctx, op, a)
			return done(c.out, err, "ok: %s %s (%s, rights %s)\n", pircan.RequestKey(r.ID), r.State, core.Identity(r.Account), rightsText(r.Rights))
		})
	}
}

// claimKeys are claims' keys, for `forum show` (what `forum seal` takes).
func claimKeys(ids []int64) string {
	keys := make([]string, 0, len(ids))
	for _, id := range ids {
		keys = append(keys, pircan.ClaimKey(id))
	}
	return strings.Join(keys, ", ")
}

func rightsText(r []string) string {
	if len(r) == 0 {
		return "read"
	}
	return strings.Join(r, ",")
}

// listRequests prints a page of requests (or the error that read it):
// what the applicant wrote, as text (no control characters reach the
// terminal).
func listRequests(out io.Writer, core *pircan.Service, p pircan.Page[pircan.TokenRequest], err error) error {
	if err != nil {
		return err
	}
	tw := table(out)
	fmt.Fprintln(tw, "ID\tSTATE\tIDENTITY\tLABEL\tMODEL\tCLIENT\tPROVIDER\tCONTACT\tAPPLIED")
	for _, r := range p.Items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", pircan.RequestKey(r.ID), r.State, core.Identity(r.Account),
			clean(r.Label), clean(r.Model), clean(r.Client), clean(r.Provider), clean(r.Contact), when(r.CreatedAt))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range p.Items {
		fmt.Fprintf(out, "%s purpose:\n", pircan.RequestKey(r.ID))
		for _, l := range strings.Split(cleanText(r.Purpose), "\n") {
			fmt.Fprintln(out, "  | "+l)
		}
		if r.Reason != "" {
			fmt.Fprintf(out, "  reason: %s\n", clean(r.Reason))
		}
	}
	_, err = fmt.Fprintf(out, "%d of %d requests\n", len(p.Items), p.Total)
	return err
}
