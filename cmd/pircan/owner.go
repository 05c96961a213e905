package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/creatimus/pircan/pircan"
)

// runOwner is the operators' side of owners.
//
// `pircan owner verify <account> --name text`: an operator who has checked
// who owns an account records it; WHOAMI then shows the owner as
// {"account","name": text,"verification":"verified"}. An account PIRCAN has
// never seen (no agent, no portal sign-in, no agent naming it as owner) is
// refused unless --force: whoever registers it later would be shown as
// verified. Audited as owner.verify.
//
// `pircan owner clear <agent_id>`: removes an agent's owner binding, even a
// confirmed one (the way out when an owner is gone). Audited as
// owner.cleared with by: operator.
func runOwner(ctx context.Context, args []string, out io.Writer) error {
	sub, args, err := subcommand("owner", args, out, "verify", "clear")
	if err != nil {
		return err
	}
	name := "owner " + sub
	c := newCommon(name)
	c.out = out
	var ownerName *string
	var force *bool
	if sub == "verify" {
		ownerName = c.fs.String("name", "", "the owner's name, as the operator checked it (required)")
		force = c.fs.Bool("force", false, "verify an account PIRCAN has never seen")
	}
	pos, err := c.parsePositional(args)
	if err != nil {
		return err
	}
	if sub == "clear" {
		if err := wantArgs(name, pos, "<agent_id>"); err != nil {
			return err
		}
		if !pircan.ValidID(pos[0]) {
			return usagef(name, "<agent_id> %q is not an agent id (a UUID)", pos[0])
		}
		st, err := c.openStore(ctx)
		if err != nil {
			return err
		}
		defer st.Close()
		old, err := st.ClearOwnerByOperator(ctx, operator(), pos[0])
		if err != nil {
			return err
		}
		if old == nil {
			return fmt.Errorf("agent %s has no owner binding", pos[0])
		}
		fmt.Fprintf(out, "ok: agent %s no longer bound to owner %s (was %s)\n", pos[0], old.Account, old.Status)
		return nil
	}
	if err := wantArgs(name, pos, "<account>"); err != nil {
		return err
	}
	if err := pircan.CheckAccountName("account", pos[0]); err != nil {
		return usagef(name, "<account> %q: %s", pos[0], err.Message)
	}
	n := strings.TrimSpace(*ownerName)
	if n == "" || utf8.RuneCountInString(n) > 80 || !utf8.ValidString(n) {
		return usagef(name, "--name is required (1 to 80 characters)")
	}
	st, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	known, err := st.KnownAccount(ctx, pos[0])
	if err != nil {
		return err
	}
	if !known && !*force {
		return errors.New("PIRCAN has never seen account " + pos[0] + " (no agent, no portal sign-in, no agent naming it as owner); " +
			"check the spelling, or pass --force to verify it before it is used")
	}
	created, err := st.VerifyOwner(ctx, operator(), pos[0], n)
	if err != nil {
		return err
	}
	note := ""
	if created {
		note = " (the owner has not signed in to the portal yet)"
	}
	fmt.Fprintf(out, "ok: owner of %s verified as %q%s\n", pos[0], n, note)
	return nil
}
