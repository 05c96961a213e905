// Command devnet runs PIRCAN against a local loopback IRC network: it starts
// dev/ircnet (or, with -ergo, dev/ergonet) in a state dir, makes sure the bot's NickServ account exists,
// prints how to connect, and runs `go run ./cmd/pircan serve` until Ctrl-C,
// then stops the bot and the network. dev/up prepares the machine (packages,
// PostgreSQL) and then runs this.
//
//	go run ./dev/devnet [-state .devnet] [-no-bot] [-ergo]
//
// Environment: IRC_TLS_PORT, IRC_PLAIN_PORT, IRC_LINK_PORT (6697, 6667,
// 7000), PIRCAN_DATABASE_URL (default: the local pircan database).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/creatimus/pircan/internal/ircnet"
)

const (
	botNick       = "PIRCAN"
	defaultDBURL  = "postgres://postgres@127.0.0.1:5432/pircan?sslmode=disable"
	stopBotWithin = 15 * time.Second
)

func main() {
	state := flag.String("state", ".devnet", "state dir (network, logs, NickServ database, bot password)")
	noBot := flag.Bool("no-bot", false, "only run the network (e.g. to start the bot from a debugger)")
	ergo := flag.Bool("ergo", false, "run an Ergo server (dev/ergonet; needs the ergo binary) instead of InspIRCd + Anope")
	flag.Parse()
	kind := ircnet.InspIRCd
	if *ergo {
		kind = ircnet.Ergo
	}
	os.Exit(run(*state, *noBot, kind))
}

func run(stateArg string, noBot bool, kind ircnet.Kind) int {
	state, err := filepath.Abs(stateArg)
	if err == nil {
		err = os.MkdirAll(state, 0o700)
	}
	if err != nil {
		return fail(err)
	}
	o := ircnet.Options{Kind: kind}
	for _, p := range []struct {
		env  string
		def  int
		port *int
	}{{"IRC_TLS_PORT", 6697, &o.TLSPort}, {"IRC_PLAIN_PORT", 6667, &o.PlainPort}, {"IRC_LINK_PORT", 7000, &o.LinkPort}} {
		*p.port = p.def
		if v := os.Getenv(p.env); v != "" {
			if *p.port, err = strconv.Atoi(v); err != nil {
				return fail(fmt.Errorf("%s=%q: %v", p.env, v, err))
			}
		}
	}
	// If devnet dies without cleaning up, start.sh's watchdog stops the network.
	o.WatchPID = os.Getpid()
	o.Stderr = os.Stderr

	// Catch Ctrl-C from here on, so that it never leaves a half-started network.
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)

	netDir := "ircnet"
	if kind == ircnet.Ergo {
		netDir = "ergonet"
	}
	n, err := ircnet.StartWith(filepath.Join(state, netDir), o)
	if err != nil {
		return fail(err)
	}
	defer func() {
		fmt.Fprintln(os.Stderr, "devnet: stopping the network")
		if err := n.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "devnet:", err)
		}
	}()

	password, err := botPassword(filepath.Join(state, "sasl-password"))
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = ircnet.RegisterAccount(ctx, n, botNick, password)
	cancel()
	if err != nil {
		db := filepath.Join(n.Dir, "anope", "db")
		if kind == ircnet.Ergo {
			db = filepath.Join(n.Dir, "data", "ircd.db")
		}
		return fail(fmt.Errorf("NickServ account %s: %v\n(an old NickServ database with another password? remove %s)",
			botNick, err, db))
	}
	printHowTo(n, state)

	select {
	case sig := <-sigc: // Ctrl-C while the network was starting
		fmt.Fprintf(os.Stderr, "devnet: %v\n", sig)
		return 1
	default:
	}
	if noBot {
		fmt.Fprintln(os.Stderr, "devnet: network only (-no-bot); Ctrl-C stops it")
		<-sigc
		return 0
	}
	return runBot(n, password, sigc)
}

// runBot runs the bot until it exits or a signal arrives.
func runBot(n *ircnet.Network, password string, sigc chan os.Signal) int {
	scripts, err := ircnet.ScriptsDir()
	if err != nil {
		return fail(err)
	}
	dbURL := os.Getenv("PIRCAN_DATABASE_URL")
	if dbURL == "" {
		dbURL = defaultDBURL
	}
	cmd := exec.Command("go", "run", "./cmd/pircan", "serve")
	cmd.Dir = filepath.Dir(filepath.Dir(scripts)) // the repository root
	cmd.Env = append(os.Environ(),
		"PIRCAN_DATABASE_URL="+dbURL,
		"PIRCAN_IRC_SERVER="+n.TLSAddr(),
		"PIRCAN_IRC_TLS=true",
		"PIRCAN_IRC_CA_FILE="+n.CertFile,
		"PIRCAN_NICK="+botNick,
		"PIRCAN_SASL_ACCOUNT="+botNick,
		"PIRCAN_SASL_PASSWORD="+password,
		"PIRCAN_OPER_NAME="+n.BotOperName,
		"PIRCAN_OPER_PASSWORD="+n.BotOperPass,
		"PIRCAN_LOG_FORMAT=console",
	)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	// Own process group, signalled as a whole: `go run` ignores SIGINT and
	// would not pass on a SIGTERM, so signalling it alone could orphan the
	// bot; and a terminal's Ctrl-C must not race our own orderly shutdown.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	fmt.Fprintln(os.Stderr, "devnet: go run ./cmd/pircan serve")
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	select {
	case err := <-exited:
		if err != nil {
			fmt.Fprintln(os.Stderr, "devnet: bot exited:", err)
			return 1
		}
		fmt.Fprintln(os.Stderr, "devnet: bot exited")
		return 0
	case sig := <-sigc:
		fmt.Fprintf(os.Stderr, "devnet: %v: stopping the bot\n", sig)
		pgid := cmd.Process.Pid
		fwd := syscall.SIGTERM
		if sig == syscall.SIGINT {
			fwd = syscall.SIGINT
		}
		_ = syscall.Kill(-pgid, fwd)
		select {
		case <-exited:
		case <-sigc: // impatient second Ctrl-C
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-exited
		case <-time.After(stopBotWithin):
			fmt.Fprintf(os.Stderr, "devnet: bot still running after %v, killing it\n", stopBotWithin)
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-exited
		}
		return 0
	}
}

// botPassword returns the bot's NickServ password, created on first use and
// kept in the state dir, next to the NickServ database that knows it.
func botPassword(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	pw := hex.EncodeToString(raw)
	return pw, os.WriteFile(path, []byte(pw+"\n"), 0o600)
}

func printHowTo(n *ircnet.Network, state string) {
	ca := n.CertFile
	fmt.Printf(`
PIRCAN dev network is up (state: %[1]s)

  IRC server %[2]s at %[3]s, TLS port %[4]d, plaintext port %[5]d
  CA file    %[6]s  (self-signed; valid for %[2]s, localhost, %[3]s)

  Connect with an IRC client:
    irssi:    /connect -tls -tls_cafile %[6]s %[3]s %[4]d
    weechat:  /set weechat.network.gnutls_ca_user "%[6]s"
              /server add devnet %[3]s/%[4]d -tls     (WeeChat < 4: -ssl)
              /connect devnet
    no TLS:   any client on %[3]s port %[5]d, e.g. irssi -c %[3]s -p %[5]d

  Talk to the bot:
    /msg NickServ REGISTER <password>   (logs you in at once; the account is your nick)
    /msg %[7]s %[7]s/1 HELP

  Bot: nick and NickServ account %[7]s (password in %[8]s), OPER %[9]s %[11]s
  Logs: %[10]s

`, state, n.ServerName, n.Host, n.TLSPort, n.PlainPort, ca, botNick,
		filepath.Join(state, "sasl-password"), n.BotOperName, filepath.Join(n.Dir, "logs"), n.BotOperPass)
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "devnet:", err)
	return 1
}
