package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/creatimus/pircan/store"
)

// runMigrate is `pircan migrate` writing to stdout.
func runMigrate(ctx context.Context, args []string) error { return migrateTo(ctx, args, os.Stdout) }

// migrateTo is `pircan migrate`: brings the schema up to date and says
// its version on out.
func migrateTo(ctx context.Context, args []string, out io.Writer) error {
	c := newCommon("migrate")
	c.out = out
	if err := c.parse(args); err != nil {
		return err
	}
	if c.fs.NArg() > 0 {
		return usagef("migrate", "unexpected argument %q", c.fs.Arg(0))
	}
	st, err := store.Open(ctx, c.cfg.str("database-url"))
	if err != nil {
		return err
	}
	defer st.Close()
	v, err := st.Migrate(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "schema at version %d\n", v)
	return nil
}
