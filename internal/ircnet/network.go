// Package ircnet drives the throw-away loopback IRC networks of dev/ircnet
// (InspIRCd 3 + Anope NickServ) and dev/ergonet (Ergo, NickServ built in)
// for integration tests, benchmarks and the dev/devnet runner, and provides
// a real IRC client to talk to them.
package ircnet

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Kind is the IRC server software of a network.
type Kind string

const (
	InspIRCd Kind = "inspircd" // InspIRCd 3 + Anope 2.0 (dev/ircnet), the default
	Ergo     Kind = "ergo"     // Ergo (dev/ergonet); needs the ergo binary, see ErgoBinary
)

// scripts is the directory under dev/ of the kind's start.sh and stop.sh.
func (k Kind) scripts() string {
	if k == Ergo {
		return "ergonet"
	}
	return "ircnet"
}

// Network is a running loopback network started from dev/ircnet/start.sh
// or dev/ergonet/start.sh.
type Network struct {
	Kind                         Kind
	Dir                          string // state dir (absolute, symlinks resolved)
	Host                         string // "127.0.0.1"
	TLSPort, PlainPort, LinkPort int
	CertFile                     string // self-signed server certificate (PEM)
	ServerName                   string // "irc.test"
	BotOperName, BotOperPass     string // OPER without fake-lag ("servicebot")
	IRCdPID                      int    // inspircd or ergo
	InspircdPID, AnopePID        int    // InspIRCd networks only
	// Env holds every KEY=VALUE line start.sh printed (see dev/ircnet/README.md).
	Env map[string]string

	scripts      string // dev/ircnet or dev/ergonet
	servicesName string
	ircdArgv     []string // command line, environment and cwd of the running
	ircdEnv      []string // ircd, reused verbatim by RestartIRCd
	ircdCwd      string
	tlsConf      *tls.Config

	mu       sync.Mutex // serialises Stop/KillIRCd/RestartIRCd
	stopped  bool
	ircdDone chan struct{} // closed when an inspircd we started ourselves is reaped
}

// Options tune StartWith. The zero value picks free random ports and has no
// watchdog.
type Options struct {
	// Client and link ports; 0 lets start.sh pick a free port.
	PlainPort, TLSPort, LinkPort int
	// If non-zero, start.sh's watchdog stops the network once this process
	// exits, so a killed test binary leaves nothing behind.
	WatchPID int
	// Stderr receives start.sh's progress lines; nil keeps them for errors only.
	Stderr io.Writer
	// Kind is the server software; zero means InspIRCd.
	Kind Kind
	// Env is added to start.sh's environment (the daemons inherit it), e.g.
	// Ergo's ERGO__SECTION__KEY overrides or ERGO_TEMPLATE.
	Env []string
	// Casemapping is how the network compares nicks: "ascii" (when empty)
	// or "rfc1459".
	Casemapping string
}

// Start starts a fresh network in dir (created if needed) on random free
// ports, watched by the current process.
func Start(dir string) (*Network, error) {
	return StartWith(dir, Options{WatchPID: os.Getpid()})
}

// StartWith starts a network in dir as described by o.
func StartWith(dir string, o Options) (*Network, error) {
	if o.Kind == "" {
		o.Kind = InspIRCd
	}
	scripts, err := scriptsDir(o.Kind)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("bash", filepath.Join(scripts, "start.sh"), dir)
	cmd.Env = append(os.Environ(),
		"IRC_PLAIN_PORT="+strconv.Itoa(o.PlainPort),
		"IRC_TLS_PORT="+strconv.Itoa(o.TLSPort),
		"IRC_LINK_PORT="+strconv.Itoa(o.LinkPort),
		"IRC_WATCH_PID=", // cleared unless requested below
		"IRC_CASEMAPPING="+o.Casemapping,
	)
	if o.Kind == Ergo {
		bin, err := ErgoBinary()
		if err != nil {
			return nil, err
		}
		cmd.Env = append(cmd.Env, "ERGO_BIN="+bin)
	}
	if o.WatchPID != 0 {
		cmd.Env = append(cmd.Env, "IRC_WATCH_PID="+strconv.Itoa(o.WatchPID))
	}
	cmd.Env = append(cmd.Env, o.Env...)
	// Own process group: a Ctrl-C in the terminal reaches the test binary or
	// the bot, not the daemons, which are then stopped in order by Stop (or
	// by the watchdog) instead of dying under a still-connected bot.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if o.Stderr != nil {
		cmd.Stderr = io.MultiWriter(&stderr, o.Stderr)
	}
	out, err := cmd.Output() // returns once ready: the daemons do not hold the pipe
	if err != nil {
		return nil, fmt.Errorf("ircnet: start.sh %s: %v\n%s", dir, err, stderr.String())
	}

	n := &Network{Kind: o.Kind, Env: map[string]string{}, scripts: scripts}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			n.Env[k] = v
		}
	}
	// atoi keeps the first bad value in err, checked once below.
	atoi := func(k string) int {
		v, e := strconv.Atoi(n.Env[k])
		if e != nil && err == nil {
			err = fmt.Errorf("ircnet: start.sh printed no valid %s (%q)", k, n.Env[k])
		}
		return v
	}
	n.Dir = n.Env["IRC_STATE_DIR"]
	n.Host = n.Env["IRC_HOST"]
	n.TLSPort, n.PlainPort, n.LinkPort = atoi("IRC_TLS_PORT"), atoi("IRC_PLAIN_PORT"), atoi("IRC_LINK_PORT")
	n.CertFile = n.Env["IRC_TLS_CERT"]
	n.ServerName = n.Env["IRC_SERVER_NAME"]
	n.servicesName = n.Env["IRC_SERVICES_NAME"]
	n.BotOperName, n.BotOperPass = n.Env["IRC_BOT_OPER_NAME"], n.Env["IRC_BOT_OPER_PASS"]
	if o.Kind == Ergo {
		n.IRCdPID = atoi("ERGO_PID")
	} else {
		n.InspircdPID, n.AnopePID = atoi("INSPIRCD_PID"), atoi("ANOPE_PID")
		n.IRCdPID = n.InspircdPID
	}
	if err == nil {
		err = n.init()
	}
	if err != nil {
		if n.Dir != "" {
			_ = n.Stop()
		}
		return nil, err
	}
	return n, nil
}

func (n *Network) init() error {
	pem, err := os.ReadFile(n.CertFile)
	if err != nil {
		return fmt.Errorf("ircnet: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("ircnet: no certificate in %s", n.CertFile)
	}
	n.tlsConf = &tls.Config{RootCAs: pool, ServerName: n.ServerName, MinVersion: tls.VersionTLS12}

	// Remember exactly how start.sh ran the ircd (binary copy or not, config
	// path, Ergo's environment overrides) so that RestartIRCd needs no
	// knowledge of its own.
	split := func(b []byte) []string { return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00") }
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", n.IRCdPID))
	if err != nil {
		return fmt.Errorf("ircnet: %s: %w", n.Kind, err)
	}
	n.ircdArgv = split(raw)
	if raw, err = os.ReadFile(fmt.Sprintf("/proc/%d/environ", n.IRCdPID)); err != nil {
		return fmt.Errorf("ircnet: %s: %w", n.Kind, err)
	}
	n.ircdEnv = split(raw)
	if n.ircdCwd, err = os.Readlink(fmt.Sprintf("/proc/%d/cwd", n.IRCdPID)); err != nil {
		return fmt.Errorf("ircnet: %s: %w", n.Kind, err)
	}
	return nil
}

// ErgoBinary finds the ergo binary the Ergo network runs, by the same rule
// as dev/ergonet/start.sh: $PIRCAN_TEST_ERGO, else ../shared/ergonet/ergo
// beside the repository root (the project ships no binary). The error says
// where it looked, for a test's skip message.
func ErgoBinary() (string, error) {
	if p := os.Getenv("PIRCAN_TEST_ERGO"); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("PIRCAN_TEST_ERGO=%s is not an executable file", p)
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(filepath.Dir(root), "shared", "ergonet", "ergo")
	if !isExecutable(p) {
		return "", fmt.Errorf("no Ergo binary at %s and PIRCAN_TEST_ERGO unset", p)
	}
	return p, nil
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// ScriptsDir finds dev/ircnet (see RepoRoot).
func ScriptsDir() (string, error) { return scriptsDir(InspIRCd) }

func scriptsDir(k Kind) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	s := filepath.Join(root, "dev", k.scripts())
	if _, err := os.Stat(filepath.Join(s, "start.sh")); err != nil {
		return "", fmt.Errorf("ircnet: %w", err)
	}
	return s, nil
}

// RepoRoot finds the repository root (the directory holding go.mod and
// dev/ircnet): walking up from this source file (works for tests of any
// package, wherever the clone is) and, failing that (-trimpath builds),
// from the working directory.
func RepoRoot() (string, error) {
	var starts []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, d := range starts {
		for {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				if _, err := os.Stat(filepath.Join(d, "dev", "ircnet", "start.sh")); err == nil {
					return d, nil
				}
				break
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	return "", errors.New("ircnet: the repository (go.mod beside dev/ircnet) not found above the package or working directory")
}

// Stop stops the daemons (stop.sh); logs, configs and the Anope database
// stay in Dir. Calling it again is a no-op.
func (n *Network) Stop() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return nil
	}
	n.stopped = true
	out, err := exec.Command("bash", filepath.Join(n.scripts, "stop.sh"), n.Dir).CombinedOutput()
	if n.ircdDone != nil {
		select { // stop.sh has waited already; this only reaps our child
		case <-n.ircdDone:
		case <-time.After(5 * time.Second):
		}
	}
	if err != nil {
		return fmt.Errorf("ircnet: stop.sh %s: %v\n%s", n.Dir, err, out)
	}
	return nil
}

// TLSAddr is the host:port of the TLS client listener.
func (n *Network) TLSAddr() string { return net.JoinHostPort(n.Host, strconv.Itoa(n.TLSPort)) }

// PlainAddr is the host:port of the plaintext client listener.
func (n *Network) PlainAddr() string { return net.JoinHostPort(n.Host, strconv.Itoa(n.PlainPort)) }

// TLSConfig trusts only the network's self-signed certificate.
func (n *Network) TLSConfig() *tls.Config { return n.tlsConf.Clone() }

// KillIRCd SIGKILLs the ircd (no goodbye to anyone: clients see their
// connection drop, Anope loses its uplink) and waits until it is gone.
func (n *Network) KillIRCd() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.killIRCd()
}

func (n *Network) killIRCd() error {
	if n.stopped {
		return errors.New("ircnet: network stopped")
	}
	pid := n.IRCdPID
	if !n.ours(pid) {
		return nil // already dead
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("ircnet: kill %s %d: %w", n.Kind, pid, err)
	}
	if n.ircdDone != nil {
		<-n.ircdDone
		return nil
	}
	// start.sh's ircd is not our child: nobody may reap it, so a zombie
	// counts as gone.
	for deadline := time.Now().Add(5 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			return fmt.Errorf("ircnet: %s %d survived SIGKILL", n.Kind, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// RestartIRCd SIGKILLs the ircd (if it runs) and starts it again with the
// same command line, so on the same ports and with the same config. It
// returns once NickServ and SASL are back: on InspIRCd once Anope has
// re-linked, typically 1-2 s later; Ergo has them built in (its accounts
// survive in its datastore). Clients connected before are gone and must
// dial again.
func (n *Network) RestartIRCd() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.killIRCd(); err != nil {
		return err
	}
	anopeLog := filepath.Join(n.Dir, "logs", "anope.out")
	ircdLog := filepath.Join(n.Dir, "logs", string(n.Kind)+".out")
	links := n.countLinks(anopeLog)

	var lastErr error
	// Binding the same ports right after SIGKILL normally works (InspIRCd
	// sets SO_REUSEADDR); retry a few times in case the kernel disagrees.
	for attempt := 0; attempt < 5; attempt++ {
		if attempt > 0 {
			time.Sleep(300 * time.Millisecond)
		}
		if lastErr = n.startIRCd(ircdLog); lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		return lastErr
	}
	if n.Kind == Ergo {
		return nil
	}
	for deadline := time.Now().Add(30 * time.Second); n.countLinks(anopeLog) <= links; {
		if time.Now().After(deadline) {
			return fmt.Errorf("ircnet: Anope did not re-link within 30 s (see %s)", anopeLog)
		}
		if !alive(n.AnopePID) {
			return fmt.Errorf("ircnet: anope (pid %d) is gone (see %s)", n.AnopePID, anopeLog)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// startIRCd runs the ircd as our own child and waits until it listens.
func (n *Network) startIRCd(logPath string) error {
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("ircnet: %w", err)
	}
	defer logf.Close()
	offset, err := logf.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("ircnet: %w", err)
	}
	// ulimit -c 0 as in start.sh: inspircd segfaults on SIGTERM while
	// unloading its TLS module, which must not leave core files behind.
	cmd := exec.Command("sh", append([]string{"-c", `ulimit -c 0 2>/dev/null; exec "$@"`, "sh"}, n.ircdArgv...)...)
	cmd.Dir, cmd.Env = n.ircdCwd, n.ircdEnv
	cmd.Stdout, cmd.Stderr = logf, logf // *os.File: no copying goroutine, Wait never blocks on it
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("ircnet: start %s: %w", n.Kind, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	pid := cmd.Process.Pid

	running, bindFailed := []string{"InspIRCd is now running"}, []string{"failed to bind"}
	if n.Kind == Ergo {
		running, bindFailed = []string{"Server running"}, []string{"couldn't listen on", "address already in use"}
	}
	containsAny := func(s string, subs []string) bool {
		return slices.ContainsFunc(subs, func(sub string) bool { return strings.Contains(s, sub) })
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		out := readFrom(logPath, offset)
		switch {
		case containsAny(out, running):
			n.IRCdPID, n.ircdDone = pid, done
			if n.Kind == InspIRCd {
				n.InspircdPID = pid
			}
			// stop.sh and the watchdog find the daemon through this file.
			return os.WriteFile(filepath.Join(n.Dir, string(n.Kind)+".pid"), []byte(strconv.Itoa(pid)+"\n"), 0o600)
		case containsAny(out, bindFailed):
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("ircnet: restarted %s could not bind its ports:\n%s", n.Kind, out)
		}
		select {
		case <-done:
			return fmt.Errorf("ircnet: restarted %s exited:\n%s", n.Kind, out)
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("ircnet: restarted %s not running after 30 s:\n%s", n.Kind, out)
		}
	}
}

// countLinks counts Anope's "<services> ... is done syncing" lines, the
// same signal start.sh waits for.
func (n *Network) countLinks(path string) int {
	b, _ := os.ReadFile(path)
	c := 0
	for _, l := range strings.Split(string(b), "\n") {
		if i := strings.Index(l, n.servicesName); i >= 0 && strings.Contains(l[i:], " is done syncing") {
			c++
		}
	}
	return c
}

func readFrom(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.NewSectionReader(f, offset, 1<<30))
	return string(b)
}

// alive reports whether pid is a live, non-zombie process.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	st := b[i+2]
	return st != 'Z' && st != 'X'
}

// ours guards against PID reuse like stop.sh: the live process must carry
// the state dir on its command line.
func (n *Network) ours(pid int) bool {
	if pid <= 0 || !alive(pid) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && bytes.Contains(b, []byte(n.Dir))
}
