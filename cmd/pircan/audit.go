package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// runAudit is `pircan audit`: the audit log as JSON lines on out, newest
// last; while it follows, a lost database connection is told on errOut.
func runAudit(ctx context.Context, args []string, out, errOut io.Writer) error {
	c := newCommon("audit")
	c.out = out
	follow := c.fs.Bool("follow", false, "keep printing new entries as they are appended")
	limit := c.fs.Int("limit", 50, "how many of the latest entries to print first")
	if err := c.parse(args); err != nil {
		return err
	}
	if c.fs.NArg() > 0 {
		return usagef("audit", "unexpected argument %q", c.fs.Arg(0))
	}
	enc := json.NewEncoder(out)
	a := pircan.AuditArgs{Limit: limit, Follow: follow}
	return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
		// A database restart costs a reconnect, not the follow: it resumes
		// after the last entry printed.
		return core.Audit(ctx, op, a, func(e pircan.AuditEntry) error { return enc.Encode(e) },
			func(err error, in time.Duration) {
				fmt.Fprintf(errOut, "pircan audit: database connection lost (%v); reconnecting in %s\n", err, in.Round(time.Millisecond))
			})
	})
}
