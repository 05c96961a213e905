// Command devnet runs PIRCAN against a local loopback IRC network: it starts
// dev/ircnet (or, with -ergo, dev/ergonet) in a state dir, makes sure the bot's NickServ account exists,
// builds ./cmd/pircan into <state>/bin, prints how to connect, and runs
// `<state>/bin/pircan serve` until Ctrl-C, then stops the bot (which QUITs)
// and the network. dev/up prepares the machine (packages, PostgreSQL) and
// then runs this. Its output may go to a pipe (dev/up | tee log): a Ctrl-C
// that ends the pipe's reader must not end the bot before its QUIT, so the
// bot writes to devnet, which copies to stdout and ignores a broken pipe.
//
//	go run ./dev/devnet [-state .devnet] [-no-bot] [-ergo]
//
// Environment: IRC_TLS_PORT, IRC_PLAIN_PORT, IRC_LINK_PORT (6697, 6667,
// 7000), PIRCAN_DATABASE_URL (default: the local pircan database),
// PIRCAN_HTTP_ADDR (127.0.0.1:8080) and the bot's other PIRCAN_* settings.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
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
	// Under `dev/up | tee log` a Ctrl-C ends tee too: a write to the broken
	// pipe must fail, not kill devnet before it has stopped the bot.
	signal.Ignore(syscall.SIGPIPE)

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
	bin := filepath.Join(state, "bin", "pircan")
	envFile := filepath.Join(state, "pircan.env")
	if err := buildBot(bin); err != nil {
		return fail(err)
	}
	if err := os.WriteFile(envFile, []byte("# pircan --config "+envFile+": the dev database\nPIRCAN_DATABASE_URL="+dbURL()+"\n"), 0o600); err != nil {
		return fail(err)
	}
	printHowTo(n, state, bin, envFile)

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
	return runBot(n, bin, password, sigc)
}

func dbURL() string {
	if u := os.Getenv("PIRCAN_DATABASE_URL"); u != "" {
		return u
	}
	return defaultDBURL
}

func httpAddr() string {
	if a := os.Getenv("PIRCAN_HTTP_ADDR"); a != "" {
		return a
	}
	return "127.0.0.1:8080"
}

// buildBot builds ./cmd/pircan, so that the bot gets signals itself (not
// through `go run`) and operators have a binary to run.
func buildBot(bin string) error {
	scripts, err := ircnet.ScriptsDir()
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/pircan")
	cmd.Dir = filepath.Dir(filepath.Dir(scripts)) // the repository root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	fmt.Fprintln(os.Stderr, "devnet: go build -o", bin, "./cmd/pircan")
	return cmd.Run()
}

// copyOut copies the bot's output to w until the bot closes it, and keeps
// reading after w breaks (a closed pipe), so the bot never blocks on it.
func copyOut(w io.Writer, r io.Reader, done chan<- struct{}) {
	defer close(done)
	buf := make([]byte, 32<<10)
	broken := false
	for {
		n, err := r.Read(buf)
		if n > 0 && !broken {
			if _, werr := w.Write(buf[:n]); werr != nil {
				broken = true
			}
		}
		if err != nil {
			return
		}
	}
}

// runBot runs the bot until it exits or a signal arrives, and waits for it.
func runBot(n *ircnet.Network, bin, password string, sigc chan os.Signal) int {
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(),
		"PIRCAN_DATABASE_URL="+dbURL(),
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
	// The bot writes into our pipe: it colours its log only when told that
	// our own output is a terminal (never into dev/up | tee log).
	if st, err := os.Stderr.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		cmd.Env = append(cmd.Env, "CLICOLOR_FORCE=1")
	} else {
		cmd.Env = append(cmd.Env, "CLICOLOR_FORCE=0")
	}
	// The bot writes to a pipe of ours, not to our stdout and stderr: those
	// may be a pipe that a Ctrl-C breaks, and a write to it would end the
	// bot before its QUIT.
	outR, outW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	cmd.Stdout, cmd.Stderr = outW, outW
	// Own process group, signalled by us: a terminal's Ctrl-C must not race
	// our own orderly shutdown.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	fmt.Fprintln(os.Stderr, "devnet:", bin, "serve")
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	outW.Close()
	copied := make(chan struct{})
	go copyOut(os.Stderr, outR, copied)
	exited := make(chan error, 1)
	go func() { err := cmd.Wait(); <-copied; exited <- err }()

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

func printHowTo(n *ircnet.Network, state, bin, envFile string) {
	fmt.Printf(`
PIRCAN dev network is up (state: %[1]s)

  IRC server %[2]s at %[3]s, TLS port %[4]d, plaintext port %[5]d
  CA file    %[6]s  (self-signed; valid for %[2]s, localhost, %[3]s)

  Connect with an IRC client (these lines are tested by dev/smoke-clients):
    irssi:    /connect -tls -tls_cafile %[6]s localhost %[4]d
    weechat:  /set weechat.network.gnutls_ca_user "%[6]s"
              /server add devnet localhost/%[4]d -ssl      (WeeChat 3.8; -tls from 4.0 on)
              /connect devnet
    no TLS:   any client on %[3]s port %[5]d, e.g. irssi -c %[3]s -p %[5]d

  Talk to the bot (the README's quick start has two agents meet and talk):
    /msg NickServ REGISTER <password>   (logs you in at once; the account is your nick)
    /msg %[7]s %[7]s/1 HELP

  Owner portal: http://%[12]s/owner
  Parley forum: http://%[12]s/parley/parley.html  (its MCP: http://%[12]s/parley/api/v1/mcp)
  MCP (agents not on IRC): http://%[12]s/mcp  with header  Authorization: Bearer <token>
    a token for an account (your nick once registered), the secret alone:
      %[13]s token issue <account> --label dev --config %[14]s | tail -1
    MCP Inspector (brings its Node 22): npx -y -p node@22 -p @modelcontextprotocol/inspector@%[15]s -- mcp-inspector --cli http://%[12]s/mcp --transport http --header "Authorization: Bearer <token>" --method tools/list
  A2A: an agent's URL http://%[12]s/a2a/<agent_id>/  (agent_id from HELLO or WHOAMI)
       and its card   http://%[12]s/a2a/<agent_id>/.well-known/agent-card.json
  Operator commands against the dev database:
    %[13]s channel list --config %[14]s
    (or: go run ./cmd/pircan <command> --config %[14]s; pircan help lists the commands)

  Bot: nick and NickServ account %[7]s (password in %[8]s), OPER %[9]s %[11]s
  Logs: %[10]s; Ctrl-C stops the bot (it QUITs) and the network.

`, state, n.ServerName, n.Host, n.TLSPort, n.PlainPort, n.CertFile, botNick,
		filepath.Join(state, "sasl-password"), n.BotOperName, filepath.Join(n.Dir, "logs"), n.BotOperPass,
		httpAddr(), bin, envFile, InspectorVersion)
}

// InspectorVersion is the MCP Inspector the README and the printed line
// name: the one testdata/inspector pins and pircan/bot's test runs.
const InspectorVersion = "2.12.0"

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "devnet:", err)
	return 1
}
