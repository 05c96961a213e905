package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/nodeclient"
	"github.com/creatimus/pircan/internal/tokenauth"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/mcp"
)

// inspector runs the MCP Inspector's CLI (testdata/inspector: the pinned
// Inspector on the pinned Node 22 it needs, both from npm) with args, as
// the README tells a user to, and returns its exit code and output.
func inspector(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed (dev/test installs it): the Inspector cannot be installed")
	}
	dir := nodeclient.Dir(t, "testdata/inspector")
	bin := filepath.Join(dir, "node_modules", ".bin")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "mcp-inspector"), append([]string{"--cli"}, args...)...)
	// Node 22 first on PATH: the launcher and what it starts run on it.
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"MCP_CATALOG_PATH="+filepath.Join(t.TempDir(), "mcp.json"), "NO_COLOR=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the Inspector did not finish: %s %s", out.String(), errOut.String())
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errOut.String()
	} else if err != nil {
		t.Fatalf("the Inspector: %v", err)
	}
	return 0, out.String(), errOut.String()
}

// The MCP Inspector connects with what the README says (URL, transport,
// the bearer header), lists every tool with schemas its strict mode finds
// portable, calls one, and reports a bad token as one.
func TestInspectorCLI(t *testing.T) {
	e := newEnv(t, limits())
	account, tok := e.token(t)
	url := e.srv.URL + mcp.Path
	header := "Authorization: Bearer " + tok

	code, out, errOut := inspector(t, url, "--transport", "http", "--header", header, "--method", "tools/list", "--strict")
	if code != 0 {
		t.Fatalf("tools/list --strict: exit %d\n%s\n%s", code, out, errOut)
	}
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("tools/list: %v\n%s", err, out)
	}
	if len(list.Tools) != len(tools) {
		t.Errorf("tools/list: %d tools, want %d", len(list.Tools), len(tools))
	}
	if strings.TrimSpace(errOut) != "" {
		t.Errorf("tools/list --strict reports: %s", errOut)
	}

	code, out, errOut = inspector(t, url, "--transport", "http", "--header", header,
		"--method", "tools/call", "--tool-name", "register", "--tool-arg", "name=Inspected")
	if code != 0 || !strings.Contains(out, `"name": "Inspected"`) {
		t.Fatalf("tools/call register: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = inspector(t, url, "--transport", "http", "--header", header,
		"--method", "tools/call", "--tool-name", "whoami")
	if code != 0 || !strings.Contains(out, `"name": "Inspected"`) {
		t.Fatalf("tools/call whoami of %s: exit %d\n%s\n%s", account, code, out, errOut)
	}

	code, out, errOut = inspector(t, url, "--transport", "http",
		"--header", "Authorization: Bearer "+pircan.TokenPrefix+"nosuchtoken", "--method", "tools/list", "--stored-auth-only")
	// Without --stored-auth-only and with a terminal, the Inspector would
	// start OAuth on any 401, whatever the metadata says; with it, it says
	// why (the 401's body).
	if code == 0 || !strings.Contains(out+errOut, tokenauth.InvalidTokenDescription) {
		t.Fatalf("a bad token: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("a bad token, as the Inspector reports it: %s", strings.TrimSpace(out+errOut))
}

// The Inspector the README and dev/up tell a user to run is the one the
// test runs (testdata/inspector's pin).
func TestInspectorVersionAsDocumented(t *testing.T) {
	root := filepath.Join("..", "..")
	raw, err := os.ReadFile(filepath.Join(root, "testdata", "inspector", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	pin := pkg.Dependencies["@modelcontextprotocol/inspector"]
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	devnet, err := os.ReadFile(filepath.Join(root, "dev", "devnet", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if pin == "" || !strings.Contains(string(readme), "@modelcontextprotocol/inspector@"+pin) ||
		!strings.Contains(string(devnet), `InspectorVersion = "`+pin+`"`) {
		t.Fatalf("the pinned Inspector %q is not the one README.md and dev/devnet name", pin)
	}
}
