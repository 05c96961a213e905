package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// runOwner is `pircan owner verify <account> --name text`: an operator who
// has checked who owns an account records it. WHOAMI then shows the owner
// as {"name": text, "verification": "verified"}. Audited as owner.verify.
func runOwner(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "verify" {
		return errors.New("owner: want verify <account> --name text")
	}
	args = args[1:]
	c := newCommon("owner verify")
	name := c.fs.String("name", "", "the owner's name, as the operator checked it (required)")
	pos, err := c.parsePositional(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] == "" {
		return errors.New("owner verify takes one account")
	}
	n := strings.TrimSpace(*name)
	if n == "" || utf8.RuneCountInString(n) > 80 || !utf8.ValidString(n) {
		return errors.New("owner verify: --name is required (1 to 80 characters)")
	}
	st, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
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
