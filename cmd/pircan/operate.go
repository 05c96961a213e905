package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
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
