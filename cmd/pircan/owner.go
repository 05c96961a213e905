package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

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
	sub, c, args, err := groupCommand("owner", args, out, "verify", "clear")
	if err != nil {
		return err
	}
	name := c.name
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
		a := pircan.AgentArgs{AgentID: &pos[0]}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			old, err := core.UnbindOwner(ctx, op, a)
			return done(out, err, "ok: agent %s no longer bound to owner %s (was %s)\n", pos[0], old.Account, old.Status)
		})
	}
	if err := wantArgs(name, pos, "<account>"); err != nil {
		return err
	}
	a := pircan.VerifyOwnerArgs{Account: &pos[0], Name: given(strings.TrimSpace(*ownerName)), Force: force}
	return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
		r, err := core.VerifyOwner(ctx, op, a)
		if perr := (*pircan.Error)(nil); errors.As(err, &perr) && perr.Code == pircan.CodeNotFound {
			return fmt.Errorf("%s (--force)", strings.TrimSuffix(perr.Message, "."))
		}
		note := ""
		if r.Created {
			note = " (the owner has not signed in to the portal yet)"
		}
		return done(out, err, "ok: owner of %s verified as %q%s\n", r.Account, r.Name, note)
	})
}
