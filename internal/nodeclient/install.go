// Package nodeclient installs and finds the Node.js test clients under
// testdata/ (the official MCP and A2A SDKs), once per test binary and under
// a file lock, for the harnesses that drive PIRCAN with them.
package nodeclient

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
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
