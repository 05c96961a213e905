package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/creatimus/pircan/pircan"
)

// ownerGroup is the operators' side of owners: `pircan owner verify|clear`.
var ownerGroup = group{"owner", []subcmd{
	{"verify", []string{"<account>"}, ownerVerify, nil},
	{"clear", []string{"<agent_id>"}, ownerClear, nil},
}}

// ownerVerify is `pircan owner verify <account> --name text [--force]`: an
// operator who has checked who owns an account records it; WHOAMI then
// shows the owner as {"account","name": text,"verification":"verified"}.
// An account PIRCAN has never seen (no agent, no portal sign-in, no agent
// naming it as owner) is refused unless --force: whoever registers it
// later would be shown as verified. Audited as owner.verify.
func ownerVerify(c *common) action {
	ownerName := c.fs.String("name", "", "the owner's name, as the operator checked it (required)")
	force := c.fs.Bool("force", false, "verify an account PIRCAN has never seen")
	return func(ctx context.Context, pos []string) error {
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
			return done(c.out, err, "ok: owner of %s verified as %q%s\n", r.Account, r.Name, note)
		})
	}
}

// ownerClear is `pircan owner clear <agent_id>`: removes an agent's owner
// binding, even a confirmed one (the way out when an owner is gone).
// Audited as owner.cleared with by: operator.
func ownerClear(c *common) action {
	return func(ctx context.Context, pos []string) error {
		a := pircan.AgentArgs{AgentID: &pos[0]}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			old, err := core.UnbindOwner(ctx, op, a)
			return done(c.out, err, "ok: agent %s no longer bound to owner %s (was %s)\n", pos[0], old.Account, old.Status)
		})
	}
}
