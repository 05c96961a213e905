package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
)

// Cluster is a private PostgreSQL server for a test that must stop or
// restart the database; the shared server is never touched.
type Cluster struct {
	Dir  string
	Port int
	bin  string
	t    testing.TB
}

// StartCluster runs initdb in a temporary directory and starts a server on
// a free loopback port; it is stopped when the test ends. As root, the
// server runs as the postgres user (PostgreSQL refuses root).
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		t.Fatal("initdb not found under /usr/lib/postgresql/*/bin")
	}
	sort.Strings(bins)
	dir, err := os.MkdirTemp("", "pircan-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Dir: dir, Port: freePort(t), bin: filepath.Dir(bins[len(bins)-1]), t: t}
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chown", "-R", "postgres:postgres", dir).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
	}
	c.run("initdb", "-D", c.data(), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8")
	t.Cleanup(func() {
		_ = c.command("pg_ctl", "-D", c.data(), "-m", "immediate", "stop").Run()
		_ = os.RemoveAll(dir)
	})
	c.Start()
	return c
}

func (c *Cluster) data() string { return filepath.Join(c.Dir, "data") }

// URL is the DSN of the cluster's postgres database.
func (c *Cluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.Port)
}

// Start starts (or restarts after Stop) the server and waits until it accepts connections.
func (c *Cluster) Start() {
	c.t.Helper()
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -c unix_socket_directories=%s -c fsync=off", c.Port, c.Dir)
	c.run("pg_ctl", "-D", c.data(), "-o", opts, "-l", filepath.Join(c.Dir, "log"), "-w", "start")
}

// Stop stops the server at once (connections are cut, as in a crash).
func (c *Cluster) Stop() {
	c.t.Helper()
	c.run("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop")
}

// Shutdown stops the server as an operator's restart does (fast mode):
// every session is told 57P01 admin_shutdown before it is cut.
func (c *Cluster) Shutdown() {
	c.t.Helper()
	c.run("pg_ctl", "-D", c.data(), "-m", "fast", "-w", "stop")
}

func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, name)
	if os.Geteuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

func (c *Cluster) run(name string, args ...string) {
	c.t.Helper()
	if out, err := c.command(name, args...).CombinedOutput(); err != nil {
		c.t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
