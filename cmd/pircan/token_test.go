package main

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

func TestTokenCommands(t *testing.T) {
	dsn := pgtest.Database(t)
	t.Setenv("PIRCAN_DATABASE_URL", dsn)
	t.Setenv("SUDO_USER", "")
	t.Setenv("USER", "dana")
	ctx := t.Context()
	if code, out, errOut := cli(t, "migrate"); code != 0 {
		t.Fatalf("migrate: %d %s %s", code, out, errOut)
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := pircan.NewService(st, pircan.Config{}, zerolog.Nop())

	code, out, errOut := cli(t, "token", "issue", "Alice", "--label", "ci runner", "--expires", "90d")
	if code != 0 || errOut != "" {
		t.Fatalf("issue: %d\n%s\n%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	secret := lines[len(lines)-1]
	if !strings.HasPrefix(secret, pircan.TokenPrefix) || strings.ContainsAny(secret, " \t") {
		t.Fatalf("last line %q is not the secret alone:\n%s", secret, out)
	}
	if strings.Count(out, secret) != 1 || !strings.Contains(out, "account  Alice") || !strings.Contains(out, "label    ci runner") {
		t.Fatalf("issue output:\n%s", out)
	}
	c, err := svc.Authenticate(ctx, pircan.FaceMCP, secret)
	if err != nil || c.Account != "Alice" {
		t.Fatalf("the printed secret does not authenticate: %+v %v", c, err)
	}
	tokens, err := svc.Tokens(ctx, pircan.OperatorCaller("operator:test"), pircan.TokensArgs{Account: ptr("alice")})
	if err != nil || len(tokens) != 1 || tokens[0].Label != "ci runner" || tokens[0].ExpiresAt.Sub(tokens[0].CreatedAt).Hours() < 90*24-1 {
		t.Fatalf("stored: %+v %v", tokens, err)
	}
	id := tokens[0].ID
	if !strings.Contains(out, "token    "+id) {
		t.Fatalf("issue output does not name the id %s:\n%s", id, out)
	}
	if code, out, errOut := cli(t, "token", "issue", "bob"); code != 0 || !strings.Contains(out, "expires  never") {
		t.Fatalf("issue without --expires: %d\n%s\n%s", code, out, errOut)
	}

	for _, args := range [][]string{{"token", "list"}, {"token", "list", "ALICE"}} {
		code, out, errOut := cli(t, args...)
		if code != 0 || errOut != "" || !strings.Contains(out, id) || strings.Contains(out, secret) ||
			strings.Contains(out, strings.TrimPrefix(secret, pircan.TokenPrefix)) {
			t.Fatalf("pircan %v: %d\n%s\n%s", args, code, out, errOut)
		}
		if !strings.Contains(out, "ci runner") || !strings.Contains(out, "active") {
			t.Fatalf("pircan %v: the token's line:\n%s", args, out)
		}
	}
	if _, out, _ := cli(t, "token", "list", "alice"); strings.Contains(out, "bob") || strings.Count(out, "\n") != 2 {
		t.Fatalf("alice's tokens show others:\n%s", out)
	}
	if _, out, _ := cli(t, "token", "list", "nobody"); out != "no tokens\n" {
		t.Fatalf("no tokens: %q", out)
	}

	if code, out, errOut := cli(t, "token", "revoke", id); code != 0 || !strings.Contains(out, "ok: token "+id+" of Alice revoked") {
		t.Fatalf("revoke: %d\n%s\n%s", code, out, errOut)
	}
	if _, err := svc.Authenticate(ctx, pircan.FaceMCP, secret); err != pircan.ErrUnauthorized {
		t.Fatalf("revoked token authenticates: %v", err)
	}
	if _, out, _ := cli(t, "token", "list", "alice"); !strings.Contains(out, "revoked ") {
		t.Fatalf("list after revoke:\n%s", out)
	}
	if code, _, errOut := cli(t, "token", "revoke", "0b5e4f3a-9c1d-4e2f-8a7b-6c5d4e3f2a1b"); code != 1 ||
		!strings.Contains(errOut, "pircan token: No token 0b5e4f3a-9c1d-4e2f-8a7b-6c5d4e3f2a1b.") {
		t.Fatalf("revoke unknown: %d %s", code, errOut)
	}
	entries, err := st.AuditLatest(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, e := range entries {
		if strings.HasPrefix(e.Action, "token.") {
			seen = append(seen, e.Action)
			if e.Action != "token.first_use" && e.ActorAccount != "operator:dana" {
				t.Errorf("%s by %q, want operator:dana", e.Action, e.ActorAccount)
			}
			if strings.Contains(string(e.Details), secret) {
				t.Errorf("%s carries the secret", e.Action)
			}
		}
	}
	if strings.Join(seen, " ") != "token.issued token.first_use token.issued token.revoked" {
		t.Errorf("token audit rows: %v", seen)
	}

	// Mistakes in the command line are usage errors (exit 2), refused
	// before the database.
	t.Setenv("PIRCAN_DATABASE_URL", "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=1")
	for _, e := range []struct {
		args []string
		want string
	}{
		{[]string{"token"}, "pircan token: name a subcommand: issue, list, revoke"},
		{[]string{"token", "issue"}, "pircan token issue: missing argument <account>"},
		{[]string{"token", "issue", "alice", "--expires", "0d"}, `--expires "0d": a lifetime is positive`},
		{[]string{"token", "issue", "alice", "--expires", "soon"}, `--expires "soon": want Nd`},
		{[]string{"token", "issue", "alice", "--expires", "-2h"}, `a lifetime is positive`},
		{[]string{"token", "issue", "alice", "--rights", ""}, `pircan token issue: --rights names no right`},
		{[]string{"token", "issue", "alice", "--rights", " , "}, `pircan token issue: --rights names no right`},
		{[]string{"token", "issue", "al ice"}, `pircan token issue: <account> is a NickServ account name`},
		{[]string{"token", "list", "a", "b"}, `pircan token list: unexpected argument "b"`},
		{[]string{"token", "revoke"}, "pircan token revoke: missing argument <token_id>"},
		{[]string{"token", "revoke", "x"}, `pircan token revoke: <token_id> must be an id (a UUID)`},
	} {
		code, out, errOut := cli(t, e.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, e.want) {
			t.Errorf("pircan %v: exit %d; stderr:\n%s\nstdout:\n%s", e.args, code, errOut, out)
		}
	}
	if code, out, _ := cli(t, "token", "issue", "--help"); code != 0 || !strings.Contains(out, "--expires") || !strings.Contains(out, "--label") {
		t.Errorf("token issue --help: %d\n%s", code, out)
	}
}

func TestTokenLifetimeFlag(t *testing.T) {
	for in, want := range map[string]string{"": "0s", "90d": "2160h0m0s", "12h": "12h0m0s", "1h30m": "1h30m0s", "1d": "24h0m0s"} {
		d, err := parseLifetime(in)
		if err != nil || d.String() != want {
			t.Errorf("parseLifetime(%q) = %v, %v; want %s", in, d, err, want)
		}
	}
	for _, in := range []string{"0", "0d", "-1d", "1.5d", "d", "90", "forever", "36501d"} {
		if d, err := parseLifetime(in); err == nil {
			t.Errorf("parseLifetime(%q) = %v, want an error", in, d)
		}
	}
}
