package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/store"
)

// cli runs the command line as main does and returns its exit status and
// outputs.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestCLIHelpAndUsageErrors(t *testing.T) {
	t.Setenv("PIRCAN_SASL_ACCOUNT", "")
	t.Setenv("PIRCAN_CONFIG", "")
	// Nothing reaches a database here: a wrong argument is refused first.
	t.Setenv("PIRCAN_DATABASE_URL", "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=1")

	for _, args := range [][]string{nil, {"help"}, {"-h"}, {"--help"}, {"help", "--help"}, {"help", "-h"}} {
		code, out, errOut := cli(t, args...)
		if code != 0 || errOut != "" || !strings.Contains(out, "commands:") || !strings.Contains(out, "  channel ") ||
			!strings.Contains(out, "  owner ") || strings.Contains(out, "--irc-server") {
			t.Errorf("pircan %v: %d\n%s\n%s", args, code, out, errOut)
		}
	}

	helps := []struct {
		args       []string
		want, not_ string
	}{
		{[]string{"channel", "--help"}, "pircan channel remove <#name>", "unknown"},
		{[]string{"help", "channel"}, "pircan channel invite <#name> <agent_id>", "--irc-server"},
		{[]string{"channel", "add", "--help"}, "--private", "--irc-server"},
		{[]string{"channel", "add", "-h"}, "pircan channel add <#name>", "channel list"},
		{[]string{"audit", "--help"}, "--limit", "--irc-server"},
		{[]string{"serve", "--help"}, "--irc-server", "flag: help requested"},
		{[]string{"owner", "verify", "--help"}, "--force", "--irc-server"},
		{[]string{"reports", "--help"}, "pircan reports resolve <report_id>", "--irc-server"},
		{[]string{"bench", "--help"}, "--agents", "flag: help requested"},
		{[]string{"token", "--help"}, "pircan token revoke <token_id>", "--irc-server"},
		{[]string{"token", "issue", "--help"}, "--expires", "token list"},
		{[]string{"resources", "--help"}, "pircan resources remove <resource_id>", "--irc-server"},
		{[]string{"resources", "list", "--help"}, "--by", "resources show"},
		{[]string{"reports", "resolve", "--help"}, "--resolution", "reports list"},
		{[]string{"owner", "clear", "--help"}, "pircan owner clear <agent_id>", "owner verify"},
		{[]string{"migrate", "--help"}, "pircan migrate", "--irc-server"},
		{[]string{"help", "token"}, "pircan token issue <account>", "--irc-server"},
	}
	for _, h := range helps {
		code, out, errOut := cli(t, h.args...)
		if code != 0 || errOut != "" || !strings.Contains(out, h.want) || strings.Contains(out, h.not_) {
			t.Errorf("pircan %v: %d\n%s\n%s", h.args, code, out, errOut)
		}
	}

	// Every flag a usage line promises is listed by that command's --help,
	// a group's included, in one style (--name, as flags are typed).
	flagInLine := regexp.MustCompile(`\[?(--[a-z-]+)`)
	for _, c := range commands {
		if c.name == "help" {
			continue
		}
		code, out, errOut := cli(t, c.name, "--help")
		if code != 0 || errOut != "" {
			t.Errorf("pircan %s --help: %d %s", c.name, code, errOut)
		}
		for _, line := range c.synopsis {
			for _, m := range flagInLine.FindAllStringSubmatch(line, -1) {
				if !strings.Contains(out, "\n  "+m[1]+"\n") && m[1] != "--no-irc" && m[1] != "--no-migrate" {
					t.Errorf("pircan %s --help does not list %s (promised by %q):\n%s", c.name, m[1], line, out)
				}
			}
		}
		if regexp.MustCompile(`(?m)^  -[a-z]`).MatchString(out) {
			t.Errorf("pircan %s --help lists a flag as -name:\n%s", c.name, out)
		}
	}

	// Every command and subcommand in the table answers --help with its usage.
	for _, c := range commands {
		if c.name == "help" { // pircan help --help: the list, above
			continue
		}
		for _, line := range c.synopsis {
			words := strings.Fields(line)
			args := words[:1]
			if len(c.synopsis) > 1 { // a group: "channel add ..."
				args = words[:2]
			}
			args = append(slices.Clone(args), "--help")
			code, out, errOut := cli(t, args...)
			if code != 0 || errOut != "" || !strings.Contains(out, "pircan "+line) {
				t.Errorf("pircan %v: %d\n%s\n%s", args, code, out, errOut)
			}
		}
	}

	errs := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"channel", "add"}, 2, "pircan channel add: missing argument <#name>"},
		{[]string{"channel", "invite", "#x"}, 2, "pircan channel invite: missing argument <agent_id>"},
		{[]string{"channel", "list", "extra"}, 2, `pircan channel list: unexpected argument "extra"`},
		{[]string{"channel", "frob"}, 2, `pircan channel: unknown subcommand "frob"`},
		{[]string{"channel"}, 2, "pircan channel: name a subcommand: add, list, invite, remove"},
		{[]string{"channel", "add", "#x", "--nosuch"}, 2, "pircan channel add: flag provided but not defined: -nosuch"},
		{[]string{"audit", "--limit", "-5"}, 2, "pircan audit: --limit must be from 1 to 100000"},
		{[]string{"audit", "--limit", "0"}, 2, "pircan audit: --limit must be from 1 to 100000"},
		{[]string{"audit", "--limit", "many"}, 2, `pircan audit: invalid value "many" for flag -limit`},
		{[]string{"reports", "list", "--limit", "0"}, 2, "pircan reports list: --limit must be from 1 to 10000"},
		{[]string{"reports", "show"}, 2, "pircan reports show: missing argument <report_id>"},
		{[]string{"owner", "verify"}, 2, "pircan owner verify: missing argument <account>"},
		{[]string{"owner", "verify", "alice"}, 2, "pircan owner verify: --name is required"},
		{[]string{"owner", "clear", "x"}, 2, "pircan owner clear: <agent_id> must be an id (a UUID)"},
		{[]string{"bench", "--agents", "0"}, 2, "pircan bench: --agents 0: want 1 to 100000"},
		{[]string{"bench", "--flood", "--flood-conns", "-5", "--agent-password", "x"}, 2, "pircan bench: --flood-conns -5: want 1 to 100000"},
		{[]string{"bench", "--flood", "--flood-nicks", "0", "--agent-password", "x"}, 2, "pircan bench: --flood-nicks 0: want 1 to 10000000"},
		{[]string{"bench", "--flood", "--whoami-every", "0s", "--agent-password", "x"}, 2, "pircan bench: --whoami-every and --target must be positive"},
		{[]string{"bench", "--flood", "--baseline", "-1s", "--agent-password", "x"}, 2, "--baseline not negative"},
		{[]string{"token", "issue", "alice", "--expires", "-1d"}, 2, `pircan token issue: --expires "-1d": a lifetime is positive`},
		{[]string{"resources", "list", "--limit", "0"}, 2, "pircan resources list: --limit must be from 1 to 1000"},
		{[]string{"resources", "show"}, 2, "pircan resources show: missing argument <resource_id>"},
		{[]string{"token", "revoke"}, 2, "pircan token revoke: missing argument <token_id>"},
		{[]string{"serve", "--workers", "-3", "--sasl-account", "a", "--sasl-password", "p"}, 1, `pircan serve: --workers: "-3": want a whole number, 0 or more`},
		{[]string{"serve", "--workers", "0", "--sasl-account", "a", "--sasl-password", "p"}, 1, "pircan serve: bursts and workers must be at least 1"},
		{[]string{"serve", "extra"}, 2, `pircan serve: unexpected argument "extra"`},
		{[]string{"frob"}, 2, `pircan: unknown command "frob"`},
		{[]string{"--nick", "X"}, 2, "pircan: name a command before the flags"},
		{[]string{"channel", "remove", "#agents"}, 1, "pircan channel: #agents is the lobby (--lobby): PIRCAN always keeps it"},
		{[]string{"channel", "remove", "#AGENTS"}, 1, "is the lobby"},
		{[]string{"channel", "remove", "#lounge", "--lobby", "#lounge"}, 1, "#lounge is the lobby"},
	}
	for _, e := range errs {
		code, out, errOut := cli(t, e.args...)
		if code != e.code || out != "" || !strings.Contains(errOut, e.want) {
			t.Errorf("pircan %v: exit %d, want %d; stderr:\n%s\nstdout:\n%s", e.args, code, e.code, errOut, out)
			continue
		}
		if e.code == 2 && (strings.Contains(errOut, "--irc-server") || strings.Count(errOut, "\n") > 12) {
			t.Errorf("pircan %v: usage beyond the command's own:\n%s", e.args, errOut)
		}
	}
	// Only the one subcommand's usage, not the group's.
	if _, _, errOut := cli(t, "channel", "add"); !strings.Contains(errOut, "pircan channel add <#name>") || strings.Contains(errOut, "channel list") {
		t.Errorf("channel add's usage:\n%s", errOut)
	}
}

// An unmigrated or older database is refused with what to do.
func TestCLISchemaCheck(t *testing.T) {
	dsn := pgtest.Database(t)
	t.Setenv("PIRCAN_DATABASE_URL", dsn)
	refused := func(when string) {
		t.Helper()
		for _, args := range databaseCommands {
			if code, out, errOut := cli(t, args...); code != 1 || out != "" || !strings.Contains(errOut, "run pircan migrate") || strings.Contains(errOut, "does not exist") {
				t.Errorf("%s, pircan %v: %d %s%s", when, args, code, out, errOut)
			}
		}
	}
	refused("unmigrated")
	if code, out, errOut := cli(t, "migrate"); code != 0 {
		t.Fatalf("migrate: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "channel", "list"); code != 0 {
		t.Fatalf("migrated: %d %s", code, errOut)
	}
	// One migration short: an older schema.
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Pool().Exec(t.Context(), `DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version)`); err != nil {
		t.Fatal(err)
	}
	refused("older schema")
}

// databaseCommands are every operator command that opens the database,
// with arguments it accepts (so each gets as far as the schema check).
var databaseCommands = [][]string{
	{"channel", "list"}, {"channel", "add", "#x"}, {"channel", "invite", "#x", zeroID}, {"channel", "remove", "#x"},
	{"audit"}, {"audit", "--follow"},
	{"reports", "list"}, {"reports", "show", zeroID}, {"reports", "resolve", zeroID, "--resolution", "r"},
	{"owner", "verify", "alice", "--name", "Alice"}, {"owner", "clear", zeroID},
	{"token", "issue", "alice"}, {"token", "list"}, {"token", "revoke", zeroID},
	{"resources", "list"}, {"resources", "show", zeroID}, {"resources", "remove", zeroID},
}

const zeroID = "00000000-0000-4000-8000-000000000000"

// Console logs carry ANSI colours only on a terminal, or when told to
// (dev/up on a terminal): never into a pipe or a file (dev/up | tee log).
func TestLogColour(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	t.Setenv("NO_COLOR", "")
	t.Setenv("CLICOLOR_FORCE", "")
	if colour(w) {
		t.Error("colours into a pipe")
	}
	t.Setenv("CLICOLOR_FORCE", "1")
	if !colour(w) {
		t.Error("CLICOLOR_FORCE=1 not honoured")
	}
	t.Setenv("NO_COLOR", "1")
	if colour(w) {
		t.Error("NO_COLOR not honoured")
	}
	t.Setenv("NO_COLOR", "")
	t.Setenv("CLICOLOR_FORCE", "0")
	if colour(w) {
		t.Error("CLICOLOR_FORCE=0 forced colours")
	}
}
