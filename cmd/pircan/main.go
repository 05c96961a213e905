// Command pircan is the PIRCAN service bot and its operator commands.
package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// common parses the configuration flags plus a command's own.
type common struct {
	name string
	fs   *flag.FlagSet
	cfg  config
	file *string
	out  io.Writer // where --help goes, and all a table subcommand (action) writes
}

func newCommon(name string) *common {
	fs := flag.NewFlagSet("pircan "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors and --help are printed by run, with this command's usage only
	cfg, file := bindFlags(fs)
	return &common{name: name, fs: fs, cfg: cfg, file: file, out: os.Stdout}
}

func (c *common) parse(args []string) error {
	if err := c.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printFlags(c.out, c.name, c.fs, c.name == "serve")
			return helpShown
		}
		return usagef(c.name, "%v", err)
	}
	return c.cfg.resolve(c.fs, *c.file)
}

// parsePositional parses flags and returns the positional arguments, which
// operators may write before the flags (`channel add '#x' --private`).
func (c *common) parsePositional(args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		pos, args = append(pos, args[0]), args[1:]
	}
	if err := c.parse(args); err != nil {
		return nil, err
	}
	return append(pos, c.fs.Args()...), nil
}
