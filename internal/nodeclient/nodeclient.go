// Package nodeclient installs and runs the Node.js test clients under
// testdata/ (the official MCP and A2A SDKs), once per test binary and under
// a file lock, for the harnesses that drive PIRCAN with them.
package nodeclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

type install struct {
	once sync.Once
	dir  string
	err  error
}

var (
	mu       sync.Mutex
	installs = map[string]*install{}
)

// Dir returns the client folder clientPath (from the repository's root,
// e.g. testdata/mcpclient) with its node_modules installed: its install.sh,
// once per test binary, under a file lock so that test binaries of several
// packages running at once do not install over each other.
func Dir(t testing.TB, clientPath string) string {
	t.Helper()
	mu.Lock()
	in := installs[clientPath]
	if in == nil {
		in = &install{}
		installs[clientPath] = in
	}
	mu.Unlock()
	in.once.Do(func() { in.dir, in.err = ensureInstalled(clientPath) })
	if in.err != nil {
		t.Fatalf("%s: %v", clientPath, in.err)
	}
	return in.dir
}

func ensureInstalled(clientPath string) (string, error) {
	root, err := repoRoot(clientPath)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, clientPath)
	unlock, err := lockFile(filepath.Join(dir, ".install.lock"))
	if err != nil {
		return "", fmt.Errorf("locking %s: %w", dir, err)
	}
	defer unlock()
	cmd := exec.Command("sh", "install.sh")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s/install.sh (npm ci): %v\n%s", clientPath, err, out)
	}
	return dir, nil
}

// repoRoot is the nearest folder above the working directory (a test's is
// its package's folder) that holds go.mod.
func repoRoot(clientPath string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory: cannot find " + clientPath)
		}
		dir = parent
	}
}

// runTimeout bounds one run of a client: its whole plan.
const runTimeout = 2 * time.Minute

// Run has node run clientPath's client.mjs with env added, feeds it the
// plan (JSON) on stdin and returns its stdout lines, one per step: exactly
// steps of them, else the test fails with the plan, stdout and stderr. It
// skips the test when node is not installed.
func Run(t testing.TB, clientPath string, env []string, plan any, steps int) [][]byte {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("%s: node is not installed (dev/test installs it): the SDK client cannot run", clientPath)
	}
	dir := Dir(t, clientPath)
	in, err := json.Marshal(plan)
	if err != nil {
		t.Fatalf("%s: plan: %v", clientPath, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = bytes.NewReader(in)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: node client.mjs: %v\nplan: %s\nstdout:\n%s\nstderr:\n%s", clientPath, err, in, stdout.String(), stderr.String())
	}
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(stdout.Bytes()))
	sc.Buffer(nil, 64<<20) // 60,000-byte texts, JSON-escaped, several times over
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: reading outcomes: %v\nstderr:\n%s", clientPath, err, stderr.String())
	}
	if len(lines) != steps {
		t.Fatalf("%s: %d steps but %d outcomes\nplan: %s\nstdout:\n%s\nstderr:\n%s", clientPath, steps, len(lines), in, stdout.String(), stderr.String())
	}
	return lines
}
