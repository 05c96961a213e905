package a2aclient

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// clientPath is client.mjs's folder, from the repository's root.
const clientPath = "testdata/a2aclient"

var install struct {
	once sync.Once
	dir  string
	err  error
}

// clientDir returns the client's folder with its node_modules installed:
// install.sh, once per test binary, under a file lock so that test binaries
// of several packages running at once do not install over each other.
func clientDir(t testing.TB) string {
	t.Helper()
	install.once.Do(func() { install.dir, install.err = ensureInstalled() })
	if install.err != nil {
		t.Fatalf("a2aclient: %v", install.err)
	}
	return install.dir
}

func ensureInstalled() (string, error) {
	root, err := repoRoot()
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
func repoRoot() (string, error) {
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
