package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

func TestOperatorCommands(t *testing.T) {
	dsn := pgtest.Database(t)
	t.Setenv("PIRCAN_DATABASE_URL", dsn)
	t.Setenv("USER", "carol")
	ctx := t.Context()
	if err := runMigrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	agent, _, err := st.Hello(ctx, "alice", "alice", pircan.Profile{}, 30)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	run := func(args ...string) error { out.Reset(); return channelGroup.run(ctx, args, &out) }
	if err := run("add", "#chem", "--topic", "Chemistry"); err != nil {
		t.Fatal(err)
	}
	if err := run("add", "#vault", "--private"); err != nil {
		t.Fatal(err)
	}
	if err := run("add", "#CHEM"); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("duplicate add: %v", err)
	}
	if err := run("add", "nohash"); err == nil {
		t.Fatal("a bad channel name was accepted")
	}
	if err := run("invite", "#vault", agent.ID); err != nil {
		t.Fatal(err)
	}
	if err := run("invite", "#vault", "not-a-uuid"); err == nil {
		t.Fatal("invite of a non-agent succeeded")
	}
	if err := run("list"); err != nil {
		t.Fatal(err)
	}
	list := out.String()
	if !strings.Contains(list, "#chem") || !strings.Contains(list, "Chemistry") || !hasRow(list, "#vault", "true", "0", "1") {
		t.Fatalf("channel list:\n%s", list)
	}
	if err := run("remove", "#chem"); err != nil {
		t.Fatal(err)
	}
	if err := run("remove", "#chem"); err == nil {
		t.Fatal("removing a missing channel succeeded")
	}

	// The audit log shows every operator action, with who did it.
	out.Reset()
	if err := runAudit(ctx, []string{"--limit", "10"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var e store.AuditEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if strings.HasPrefix(e.Action, "channel.") && e.ActorAccount != "operator:carol" {
			t.Errorf("operator not recorded: %+v", e)
		}
		actions = append(actions, e.Action)
	}
	if got := strings.Join(actions, " "); got != "agent.register channel.add channel.add channel.invite channel.remove" {
		t.Fatalf("audit actions: %s", got)
	}
}

// audit --follow prints entries appended after it started.
func TestAuditFollow(t *testing.T) {
	dsn := pgtest.Database(t)
	t.Setenv("PIRCAN_DATABASE_URL", dsn)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := runMigrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// An entry from before the follow: it prints it once it has read the
	// log, which it does only after it LISTENs, so the next one can only
	// come through a notification.
	if err := st.AddChannel(ctx, pircan.Actor{Account: "op"}, "#early", false, ""); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = runAudit(ctx, []string{"--follow"}, pw, io.Discard)
		pw.Close()
	}()
	dec := json.NewDecoder(pr)
	var e store.AuditEntry
	if err := dec.Decode(&e); err != nil || e.Action != "channel.add" || e.Subject != "#early" {
		t.Fatalf("the entry from before: %+v %v", e, err)
	}
	if err := st.AddChannel(ctx, pircan.Actor{Account: "op"}, "#late", false, ""); err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(&e); err != nil || e.Action != "channel.add" || e.Subject != "#late" {
		t.Fatalf("followed entry: %+v %v", e, err)
	}
	cancel()
	go io.Copy(io.Discard, pr)
	wg.Wait()
}

// hasRow reports whether a table line starts with these columns.
func hasRow(table string, cols ...string) bool {
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) >= len(cols) && strings.Join(f[:len(cols)], " ") == strings.Join(cols, " ") {
			return true
		}
	}
	return false
}

func TestConfigPrecedence(t *testing.T) {
	c := newCommon("serve")
	t.Setenv("PIRCAN_NICK", "FromEnv")
	t.Setenv("PIRCAN_SASL_ACCOUNT", "bot")
	t.Setenv("PIRCAN_SASL_PASSWORD", "pw")
	t.Setenv("PIRCAN_LOBBY", "#envlobby")
	if err := c.parse([]string{"--nick", "FromFlag"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := serverConfig(c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.IRC.Nick != "FromFlag" || cfg.IRC.Lobby != "#envlobby" || cfg.IRC.Server != "127.0.0.1:6697" {
		t.Fatalf("precedence: %+v", cfg.IRC)
	}
	// Unset, every limit is the spec's figure.
	if cfg.Limits != pircan.DefaultLimits {
		t.Fatalf("default limits %+v, want %+v", cfg.Limits, pircan.DefaultLimits)
	}
	if cfg.QuitMessage != "PIRCAN stopping" {
		t.Fatalf("default QUIT message %q", cfg.QuitMessage)
	}
	t.Setenv("PIRCAN_QUIT_MESSAGE", "back after the upgrade")
	c = newCommon("serve")
	if err := c.parse(nil); err != nil {
		t.Fatal(err)
	}
	if cfg, err := serverConfig(c.cfg); err != nil || cfg.QuitMessage != "back after the upgrade" {
		t.Fatalf("QUIT message from the environment: %q %v", cfg.QuitMessage, err)
	}
	c = newCommon("serve")
	if err := c.parse([]string{"--quit-message", "bye\r\nPRIVMSG x :hi"}); err != nil {
		t.Fatal(err)
	}
	if _, err := serverConfig(c.cfg); err == nil {
		t.Fatal("a QUIT message with CR LF was accepted")
	}
	t.Setenv("PIRCAN_IRC_TLS", "maybe")
	c = newCommon("serve")
	if err := c.parse(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := serverConfig(c.cfg); err == nil {
		t.Fatal("a bad boolean was accepted")
	}
}

// gate is audit's error output in a test: it passes each line on to lines,
// and holds the first one until release is closed, so the test decides how
// long the follow stays disconnected.
type gate struct {
	lines   chan string
	release chan struct{}
	once    sync.Once
}

func (g *gate) Write(p []byte) (int, error) {
	g.lines <- string(p)
	g.once.Do(func() { <-g.release })
	return len(p), nil
}

// audit --follow lives through a database restart (57P01): entries written
// before, while it is disconnected, and after it reconnected are each
// printed once, in order.
func TestAuditFollowSurvivesDatabaseRestart(t *testing.T) {
	pg := pgtest.StartCluster(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dsn, cleanup, err := pgtest.NewDatabase(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	t.Setenv("PIRCAN_DATABASE_URL", dsn)
	if err := runMigrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// A store per phase: the restart cuts the first one's connections.
	add := func(st *store.Store, names ...string) {
		t.Helper()
		for _, n := range names {
			if err := st.AddChannel(ctx, pircan.Actor{Account: "op"}, n, false, ""); err != nil {
				t.Fatalf("add %s: %v", n, err)
			}
		}
	}
	open := func() *store.Store {
		t.Helper()
		st, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		return st
	}
	add(open(), "#before1", "#before2")

	pr, pw := io.Pipe()
	g := &gate{lines: make(chan string, 100), release: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		err := runAudit(ctx, []string{"--follow"}, pw, g)
		pw.Close()
		done <- err
	}()
	dec := json.NewDecoder(pr)
	var got []string
	read := func(n int) {
		t.Helper()
		for range n {
			var e store.AuditEntry
			if err := dec.Decode(&e); err != nil {
				t.Fatalf("after %v: %v", got, err)
			}
			got = append(got, e.Subject)
		}
	}
	read(2)
	add(open(), "#live1", "#live2")
	read(2)

	pg.Shutdown()
	select {
	case l := <-g.lines:
		if !strings.Contains(l, "57P01") {
			t.Errorf("reported loss: %q, want the server's 57P01", l)
		}
	case err := <-done:
		t.Fatalf("audit --follow ended on the restart: %v", err)
	case <-ctx.Done():
		t.Fatal("audit --follow never noticed the restart")
	}
	pg.Start()
	after := open()
	add(after, "#during1", "#during2") // the follow is held disconnected meanwhile
	close(g.release)
	read(2)
	add(after, "#after1", "#after2", "#end")
	read(3)

	want := []string{"#before1", "#before2", "#live1", "#live2", "#during1", "#during2", "#after1", "#after2", "#end"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("printed %v, want %v", got, want)
	}
	cancel()
	go io.Copy(io.Discard, pr)
	if err := <-done; err != nil {
		t.Fatalf("audit --follow: %v", err)
	}
}

// The output exemption: stated by PIRCAN_OUTPUT_EXEMPT (flag, environment
// or file), or by a PIRCAN_OUTPUT_RATE given at all; an explicit
// PIRCAN_OUTPUT_EXEMPT=false keeps a given rate for after OPER.
func TestOutputExemptConfig(t *testing.T) {
	t.Setenv("PIRCAN_SASL_ACCOUNT", "bot")
	t.Setenv("PIRCAN_SASL_PASSWORD", "pw")
	file := filepath.Join(t.TempDir(), "pircan.env")
	for _, tc := range []struct {
		name   string
		env    map[string]string
		file   string
		args   []string
		exempt bool
		rate   float64
	}{
		{name: "defaults", rate: 200},
		{name: "exempt from the environment", env: map[string]string{"PIRCAN_OUTPUT_EXEMPT": "true"}, exempt: true, rate: 200},
		{name: "exempt by flag", args: []string{"--output-exempt=true"}, exempt: true, rate: 200},
		{name: "exempt from the file", file: "PIRCAN_OUTPUT_EXEMPT=true\n", exempt: true, rate: 200},
		{name: "a rate from the environment", env: map[string]string{"PIRCAN_OUTPUT_RATE": "50"}, exempt: true, rate: 50},
		{name: "the default rate given explicitly", file: "PIRCAN_OUTPUT_RATE=200\n", exempt: true, rate: 200},
		{name: "a rate by flag", args: []string{"--output-rate", "30"}, exempt: true, rate: 30},
		{name: "a rate, not exempt", env: map[string]string{"PIRCAN_OUTPUT_RATE": "50", "PIRCAN_OUTPUT_EXEMPT": "false"}, rate: 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			args := tc.args
			if tc.file != "" {
				if err := os.WriteFile(file, []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", file)
			}
			c := newCommon("serve")
			if err := c.parse(args); err != nil {
				t.Fatal(err)
			}
			cfg, err := serverConfig(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.IRC.OutputExempt != tc.exempt || cfg.IRC.Pacing.GlobalRate != tc.rate {
				t.Fatalf("exempt %v at %v/s, want %v at %v/s", cfg.IRC.OutputExempt, cfg.IRC.Pacing.GlobalRate, tc.exempt, tc.rate)
			}
		})
	}
	t.Setenv("PIRCAN_OUTPUT_EXEMPT", "maybe")
	c := newCommon("serve")
	if err := c.parse(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := serverConfig(c.cfg); err == nil || !strings.Contains(err.Error(), "output-exempt") {
		t.Fatalf("a bad PIRCAN_OUTPUT_EXEMPT: %v", err)
	}
}
