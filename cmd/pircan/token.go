package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// tokenGroup is `pircan token issue|list|revoke`: the operators' side of
// the HTTP faces' bearer tokens (DESIGN.md "Identity and tokens"). The
// rules live in the core (pircan.Service); issuing and revoking are
// audited with the operator as actor. A secret is printed once, by issue,
// alone on the last line of stdout (`| tail -1`); nothing else ever shows
// it.
var tokenGroup = group{"token", []subcmd{
	{"issue", []string{"<account>"}, tokenIssue, nil},
	{"list", []string{"[<account>]"}, tokenList, nil},
	{"revoke", []string{"<token_id>"}, tokenRevoke, nil},
}}

// tokenIssue is `token issue <account> [--label text] [--expires
// <lifetime>] [--rights r,…]`.
func tokenIssue(c *common) action {
	label := c.fs.String("label", "", "a note on what the token is for")
	rights := c.fs.String("rights", "", "the forum rights the token holds at most, comma-separated (read alone: read-only; without it: the account's)")
	expires := c.fs.String("expires", "", "lifetime: Nd (days, e.g. 90d), Nh or a Go duration (1h30m); without it the token lasts until revoked")
	return func(ctx context.Context, pos []string) error {
		ttl, err := parseLifetime(*expires)
		if err != nil {
			return usagef(c.name, "--expires %q: %v", *expires, err)
		}
		a := pircan.IssueTokenArgs{Account: &pos[0], Label: label, ExpiresIn: given(ttl)}
		// A --rights that names nothing is a mistake, not "the account's
		// rights": only leaving the flag out means that.
		c.fs.Visit(func(f *flag.Flag) {
			if f.Name == "rights" {
				a.Rights = ptr(splitList(*rights))
			}
		})
		if a.Rights != nil && len(*a.Rights) == 0 {
			return usagef(c.name, "--rights names no right (leave the flag out for the account's rights)")
		}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			t, err := core.IssueToken(ctx, op, a)
			if err != nil {
				return err
			}
			return printIssued(c.out, t)
		})
	}
}

// tokenList is `token list [<account>]`.
func tokenList(c *common) action {
	return func(ctx context.Context, pos []string) error {
		var a pircan.TokensArgs
		if len(pos) == 1 {
			a.Account = &pos[0]
		}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			list, err := core.Tokens(ctx, op, a)
			if err != nil {
				return err
			}
			return listTokens(c.out, list, time.Now())
		})
	}
}

// tokenRevoke is `token revoke <token_id>`.
func tokenRevoke(c *common) action {
	return func(ctx context.Context, pos []string) error {
		a := pircan.TokenArgs{TokenID: &pos[0]}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			t, err := core.RevokeToken(ctx, op, a)
			return done(c.out, err, "ok: token %s of %s revoked at %s\n", t.ID, t.Account, when(t.RevokedAt))
		})
	}
}

// parseLifetime reads --expires: Nd (days), and whatever time.ParseDuration
// reads (12h, 90m, 1h30m); "" is none (until revoked).
func parseLifetime(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days > 100*365 {
			return 0, errors.New("want Nd (days, up to 36500), Nh or a Go duration")
		}
		d = time.Duration(days) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, errors.New("want Nd (days), Nh or a Go duration")
		}
	}
	if d <= 0 {
		return 0, errors.New("a lifetime is positive (leave --expires out for a token that lasts until revoked)")
	}
	return d, nil
}

func expiry(t pircan.Token) string {
	if t.ExpiresAt.IsZero() {
		return "never"
	}
	return when(t.ExpiresAt)
}

func printIssued(out io.Writer, t pircan.IssuedToken) error {
	tw := table(out)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("token", t.ID)
	row("account", t.Account)
	label := clean(t.Label)
	if label == "" {
		label = "(none)"
	}
	row("label", label)
	row("expires", expiry(t.Token))
	row("rights", tokenRights(t.Token))
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(out, "secret (shown only now; PIRCAN keeps only its hash):\n%s\n", t.Secret)
	return err
}

// listTokens prints one line per token, never a secret (the store has none).
func listTokens(out io.Writer, list []pircan.Token, now time.Time) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(out, "no tokens")
		return err
	}
	tw := table(out)
	fmt.Fprintln(tw, "ID\tACCOUNT\tLABEL\tCREATED\tEXPIRES\tSTATUS\tFIRST_USED\tRIGHTS")
	for _, t := range list {
		status := "active"
		switch {
		case !t.RevokedAt.IsZero():
			status = "revoked " + when(t.RevokedAt)
		case !t.Active(now):
			status = "expired"
		}
		used := "never"
		if !t.UsedAt.IsZero() {
			used = when(t.UsedAt)
		}
		label := clean(t.Label)
		if label == "" {
			label = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Account, label, when(t.CreatedAt), expiry(t), status, used, tokenRights(t))
	}
	return tw.Flush()
}

// tokenRights are the forum rights a token holds at most: "account's"
// when it was not narrowed.
func tokenRights(t pircan.Token) string {
	if t.Rights == nil {
		return "account's"
	}
	return strings.Join(t.Rights, ",")
}
