package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// An operator command is a core operation called by the operator's
// Caller (OperatorCaller, named by $USER): the core checks, decides,
// audits and words its refusals, as for any other door; the CLI parses
// flags and prints.

// operate checks args as the core will (a refusal is a usage error, and
// nothing reaches the database), then opens the store and runs fn with the
// core and the operator's caller; a refusal of the core is its message.
func (c *common) operate(ctx context.Context, args any, fn func(core *pircan.Service, op pircan.Caller) error) error {
	if perr := pircan.CheckArgs(args); perr != nil {
		return usagef(c.name, "%s", c.words(perr))
	}
	st, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	// The forum's identities and default rights are the deployment's
	// (an operator's `forum rights` shows what serve would hold).
	cfg := pircan.Config{Limits: pircan.DefaultLimits, Realm: c.cfg.str("realm")}
	if err := pircan.CheckRealm(cfg.Realm); err != nil {
		return err
	}
	if cfg.ForumDefaultRights, err = pircan.ParseRights(c.cfg.str("parley-default-rights")); err != nil {
		return fmt.Errorf("--parley-default-rights: %w", err)
	}
	core := pircan.NewService(st, cfg, zerolog.Nop())
	err = fn(core, pircan.OperatorCaller(operator()))
	var perr *pircan.Error
	if errors.As(err, &perr) && perr.Code != pircan.CodeInternalError {
		return errors.New(c.words(perr))
	}
	return err
}

// openStore opens the database of an operator command, refusing a schema
// that is not this binary's (unmigrated, older or newer).
func (c *common) openStore(ctx context.Context) (*store.Store, error) {
	st, err := store.Open(ctx, c.cfg.str("database-url"))
	if err != nil {
		return nil, err
	}
	if err := st.CheckSchema(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// operator is the name operator commands are audited under.
func operator() string {
	if u := os.Getenv("SUDO_USER"); u != "" {
		return "operator:" + u
	}
	if u := os.Getenv("USER"); u != "" {
		return "operator:" + u
	}
	return "operator"
}

// words is a core refusal as the operator reads it: the core's message,
// its field named as the command line spells it (--limit, <agent_id>).
func (c *common) words(perr *pircan.Error) string {
	if perr.Field == "" {
		return perr.Message
	}
	arg := "<" + perr.Field + ">"
	if c.fs.Lookup(perr.Field) != nil {
		arg = "--" + perr.Field
	}
	return strings.Replace(perr.Message, strconv.Quote(perr.Field), arg, 1)
}

// done prints what an operation did, unless it was refused.
func done(out io.Writer, err error, format string, args ...any) error {
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, format, args...)
	return err
}

// ptr is the address of v: an argument given.
func ptr[T any](v T) *T { return &v }

// given is v's address, or nil when v is its zero value (a flag not given).
func given[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}
