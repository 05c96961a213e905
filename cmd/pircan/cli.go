package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
)

// command is one row of the CLI's table: `pircan help`, `pircan <cmd>
// --help` and the argument errors are all drawn from it; runners holds
// what each runs (apart, since the runners read this table).
type command struct {
	name     string
	synopsis []string // usage lines, without "pircan "
	summary  string
}

type runner func(ctx context.Context, args []string, out io.Writer) error

var runners = map[string]runner{
	"serve":   runServe,
	"migrate": migrateTo,
	"channel": channelGroup.run,
	"audit": func(ctx context.Context, args []string, out io.Writer) error {
		return runAudit(ctx, args, out, os.Stderr)
	},
	"reports":   reportsGroup.run,
	"owner":     ownerGroup.run,
	"token":     tokenGroup.run,
	"resources": resourcesGroup.run,
	"forum":     forumGroup.run,
	"bench":     runBench,
}

// commands is the CLI. A group (channel, reports, owner, token, resources,
// forum) has one synopsis line per subcommand, each starting with the
// group's name and the subcommand's.
var commands = []command{
	{"serve", []string{"serve [--no-migrate] [--no-irc] [configuration flags]"}, "run the bot; migrates first unless --no-migrate; --no-irc: HTTP faces only"},
	{"migrate", []string{"migrate"}, "bring the database schema up to date"},
	{"channel", []string{
		"channel add <#name> [--private] [--topic text]",
		"channel list",
		"channel invite <#name> <agent_id>",
		"channel remove <#name>",
	}, "the channels PIRCAN joins and lists (the lobby always exists)"},
	{"audit", []string{"audit [--follow] [--limit n]"}, "print the audit log as JSON lines, newest last"},
	{"reports", []string{
		"reports list [--status open|resolved|all] [--limit n]",
		"reports show <report_id>",
		"reports resolve <report_id> --resolution text [--action none|warned|removed]",
	}, "the reports agents filed (REPORT)"},
	{"owner", []string{
		"owner verify <account> --name text [--force]",
		"owner clear <agent_id>",
	}, "owners: record a checked name; remove an agent's owner binding"},
	{"token", []string{
		"token issue <account> [--label text] [--expires <lifetime>] [--rights r,…]",
		"token list [<account>]",
		"token revoke <token_id>",
	}, "bearer tokens of the HTTP faces (MCP, A2A): the secret is shown once"},
	{"resources", []string{
		"resources list [--by <agent_id>] [--limit n]",
		"resources show <resource_id>",
		"resources remove <resource_id> [--reason text]",
	}, "the resource library: list, show, remove (the publisher is told)"},
	{"forum", []string{
		"forum confirm <thread>",
		"forum decline <thread>",
		"forum close <thread>",
		"forum reopen <thread>",
		"forum forbid-ai <thread>",
		"forum allow-ai <thread>",
		"forum state <thread> <deferred|obsolete|rejected>",
		"forum show <thread> [--after msg_<n>]",
		"forum boards add <slug> --name text [--description text]",
		"forum boards list [--offset n]",
		"forum rights <account> [--grant r,…] [--revoke r,…]",
		"forum seal <claim> <supports|refutes>",
		"forum requests list [--state s] [--offset n]",
		"forum requests review <request> <approved|rejected|deferred|in_review> [--reason text] [--lock]",
	}, "the Parley forum as human:<operator>: marks, threads, boards, rights, seals, access requests"},
	{"bench", []string{"bench [--agents n] [--rate r] [flags]"}, "load test a running PIRCAN over IRC"},
	{"help", []string{"help [command]"}, "this list, or one command's usage"},
}

func findCommand(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// topUsage is what `pircan`, `pircan help`, -h and --help print.
func topUsage() string {
	var b strings.Builder
	b.WriteString("usage: pircan <command> [arguments] [flags]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-9s %s\n", c.name, c.summary)
	}
	b.WriteString("\n" + `pircan <command> --help shows a command's usage and flags. Every command that
uses the database takes the configuration flags (--database-url, --config, ...;
pircan serve --help lists them all), each with a PIRCAN_* environment twin.
pircan alone runs serve when PIRCAN_SASL_ACCOUNT or PIRCAN_CONFIG is set.
`)
	return b.String()
}

// synopsis returns the usage lines of a command, or of one subcommand of a
// group ("channel add"), as "usage:" text.
func synopsis(name string) string {
	group, _, _ := strings.Cut(name, " ")
	c := findCommand(group)
	if c == nil {
		return ""
	}
	var lines []string
	for _, l := range c.synopsis {
		if l == name || strings.HasPrefix(l, name+" ") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		lines = c.synopsis
	}
	var b strings.Builder
	b.WriteString("usage:\n")
	for _, l := range lines {
		b.WriteString("  pircan " + l + "\n")
	}
	return b.String()
}

// usageError is a mistake in the command line: main prints it with the
// command's usage only and exits 2.
type usageError struct {
	cmd, msg string
}

func (e *usageError) Error() string { return e.msg }

func usagef(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, args...)}
}

// helpShown means a command printed its --help: main exits 0.
var helpShown = errors.New("help shown")

// wantArgs checks the positional arguments of cmd against their names
// ("<#name>"): a missing one is named, an extra one quoted. Optional ones
// come last, bracketed ("[<account>]"); one given empty is the core's to
// refuse, in its own words, as it refuses the value of a flag.
func wantArgs(cmd string, pos []string, names ...string) error {
	need := len(names)
	for need > 0 && strings.HasPrefix(names[need-1], "[") {
		need--
	}
	if len(pos) < need {
		return usagef(cmd, "missing argument %s", strings.Join(names[len(pos):need], " "))
	}
	if len(pos) > len(names) {
		return usagef(cmd, "unexpected argument %q", pos[len(names)])
	}
	for i, p := range pos[:min(len(pos), need)] {
		if strings.TrimSpace(p) == "" {
			return usagef(cmd, "argument %s is empty", names[i])
		}
	}
	return nil
}

// table is how the operator commands print rows: columns two spaces
// apart, flushed by the caller.
func table(out io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(out, 0, 4, 2, ' ', 0) }

// subcmd is one row of a group's table (`forum boards add`): its
// positional arguments, named as wantArgs names them, and flags, which
// declares its own flags on c and returns what runs once they are parsed;
// or, for a group within the group (`forum boards`), that group alone.
type subcmd struct {
	name  string
	args  []string
	flags func(c *common) action
	group *group
}

// action is a subcommand run with its flags parsed and its positional
// arguments checked; it writes to its common's out.
type action func(ctx context.Context, pos []string) error

// group is a group declared as its subcommands. Its run is a runner, the
// same at the top (a row of runners, whose --help run completes) as nested
// (through nested).
type group struct {
	name string
	subs []subcmd
}

// run splits the subcommand off (on --help, the group's synopsis: run or
// nested adds the flags), lets it declare its flags, parses them with the
// configuration flags, checks its positional arguments and runs it.
func (g group) run(ctx context.Context, args []string, out io.Writer) error {
	names := make([]string, len(g.subs))
	for i, s := range g.subs {
		names[i] = s.name
	}
	if len(args) == 0 {
		return usagef(g.name, "name a subcommand: %s", strings.Join(names, ", "))
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(out, synopsis(g.name))
		return &groupHelp{subs: names}
	}
	i := slices.Index(names, args[0])
	if i < 0 {
		return usagef(g.name, "unknown subcommand %q (want %s)", args[0], strings.Join(names, ", "))
	}
	s, args := g.subs[i], args[1:]
	if s.group != nil {
		return s.group.nested(ctx, args, out)
	}
	c := newCommon(g.name + " " + s.name)
	c.out = out
	act := s.flags(c)
	pos, err := c.parsePositional(args)
	if err != nil {
		return err
	}
	if err := wantArgs(c.name, pos, s.args...); err != nil {
		return err
	}
	return act(ctx, pos)
}

// nested runs a group within a group (`pircan forum boards`): its --help
// lists its subcommands' flags itself, as the one flag section the outer
// group's --help shows.
func (g group) nested(ctx context.Context, args []string, out io.Writer) error {
	err := g.run(ctx, args, out)
	var gh *groupHelp
	if !errors.As(err, &gh) {
		return err
	}
	fmt.Fprint(out, "\nflags:\n")
	for _, s := range gh.subs {
		if flags, ok := subFlags(ctx, g.run, s); ok {
			fmt.Fprint(out, flags)
		}
	}
	return helpShown
}

// subFlags is the flag section of a subcommand's --help, as its group's
// --help lists it.
func subFlags(ctx context.Context, run runner, sub string) (string, bool) {
	var b strings.Builder
	_ = run(ctx, []string{sub, "--help"}, &b)
	_, flags, ok := strings.Cut(b.String(), "\nflags:\n")
	flags, _, _ = strings.Cut(flags, "\nand the configuration flags")
	return flags, ok
}

// configured says whether the environment configures a deployment, so
// that `pircan` alone serves (a container given only its environment).
func configured() bool {
	return os.Getenv("PIRCAN_SASL_ACCOUNT") != "" || os.Getenv("PIRCAN_CONFIG") != ""
}

// run is main without the exit: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		if !configured() {
			fmt.Fprint(stdout, topUsage())
			return 0
		}
		args = []string{"serve"}
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, topUsage())
		return 0
	case "help":
		if len(rest) == 0 || slices.Contains([]string{"-h", "-help", "--help"}, rest[0]) {
			fmt.Fprint(stdout, topUsage())
			return 0
		}
		name, rest = rest[0], []string{"--help"}
	}
	fn := runners[name]
	if fn == nil {
		if strings.HasPrefix(name, "-") {
			fmt.Fprintf(stderr, "pircan: name a command before the flags (pircan serve %s ...); pircan help lists the commands\n", name)
		} else {
			fmt.Fprintf(stderr, "pircan: unknown command %q; pircan help lists the commands\n", name)
		}
		return 2
	}
	err := fn(ctx, rest, stdout)
	var ue *usageError
	var gh *groupHelp
	switch {
	case errors.As(err, &gh):
		// The synopsis promises flags: list each subcommand's own, as its
		// --help does.
		for _, sub := range gh.subs {
			if flags, ok := subFlags(ctx, fn, sub); ok {
				fmt.Fprintf(stdout, "\n%s %s flags:\n%s", name, sub, flags)
			}
		}
		return 0
	case err == nil, errors.Is(err, helpShown):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "pircan %s: %s\n\n%s(pircan %s --help for the flags)\n", ue.cmd, ue.msg, synopsis(ue.cmd), ue.cmd)
		return 2
	default:
		fmt.Fprintf(stderr, "pircan %s: %v\n", name, err)
		return 1
	}
}

// printFlags writes a command's --help: its usage, its own flags, and a
// word on the configuration flags (listed in full for serve).
func printFlags(out io.Writer, name string, fs *flag.FlagSet, all bool) {
	fmt.Fprint(out, synopsis(name))
	var own, conf strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		line := flagLine(f)
		if isSetting(f.Name) {
			if all {
				conf.WriteString(line + "\n")
			}
			return
		}
		own.WriteString(line + "\n")
	})
	if own.Len() > 0 {
		fmt.Fprint(out, "\nflags:\n"+own.String())
	}
	if all {
		fmt.Fprint(out, "\nconfiguration flags:\n"+conf.String())
	} else {
		fmt.Fprint(out, "\nand the configuration flags (--database-url, --config, ...): pircan serve --help\n")
	}
}

// flagLine is one flag as every --help lists it: --name, then its usage
// and default.
func flagLine(f *flag.Flag) string {
	line := fmt.Sprintf("  --%s\n    \t%s", f.Name, f.Usage)
	if f.DefValue != "" && f.DefValue != "false" {
		line += fmt.Sprintf(" (default %q)", f.DefValue)
	}
	return line
}

// groupHelp is a group's --help (pircan token --help): its synopsis is
// printed; run then lists each subcommand's own flags.
type groupHelp struct{ subs []string }

func (groupHelp) Error() string { return "help requested" }

func isSetting(name string) bool {
	if name == "config" {
		return true
	}
	for _, s := range settings {
		if s.flag == name {
			return true
		}
	}
	return false
}
