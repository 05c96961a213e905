package bot_test

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/ircnet"
)

// composeTemplate turns docker-compose's Ergo configuration into a
// dev/ergonet/start.sh template: only the listeners move (to loopback and
// start.sh's free ports) and the certificate paths (to the one start.sh
// makes). Every other line is the shipped file's. A change there that these
// edits no longer match fails the test instead of testing something else.
func composeTemplate(t *testing.T) string {
	t.Helper()
	root, err := ircnet.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "dev", "ergo", "ircd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, r := range [][2]string{
		{`":6667":`, `"127.0.0.1:@PLAIN_PORT@":`},
		{`":6697":`, `"127.0.0.1:@TLS_PORT@":`},
		{`cert: /ircd/tls/fullchain.pem`, `cert: "@STATEDIR@/tls/cert.pem"`},
		{`key: /ircd/tls/privkey.pem`, `key: "@STATEDIR@/tls/key.pem"`},
	} {
		if n := strings.Count(s, r[0]); n != 1 {
			t.Fatalf("dev/ergo/ircd.yaml: %q occurs %d times, want once", r[0], n)
		}
		s = strings.Replace(s, r[0], r[1], 1)
	}
	p := filepath.Join(t.TempDir(), "compose-ircd.yaml.in")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// registerBeforeConnect is the compose file's pircan-account service: the
// IRCv3 REGISTER command before the IRC handshake completes, on the
// plaintext port, and the same check of the answer.
func registerBeforeConnect(t *testing.T, n *ircnet.Network, account, password string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", n.PlainAddr(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(15 * time.Second))
	if _, err := io.WriteString(c, "NICK "+account+"\r\nREGISTER "+account+" * :"+password+"\r\nQUIT\r\n"); err != nil {
		t.Fatal(err)
	}
	var said []string
	for sc := bufio.NewScanner(c); sc.Scan(); {
		said = append(said, sc.Text())
		if strings.Contains(sc.Text(), " REGISTER SUCCESS "+account+" ") {
			return
		}
	}
	t.Fatalf("REGISTER before connect: no REGISTER SUCCESS; the server said:\n%s", strings.Join(said, "\n"))
}

// The Ergo configuration docker-compose ships (dev/ergo/ircd.yaml) works
// with PIRCAN, short of Docker itself: the Ergo binary runs it (listeners
// on free loopback ports, certificate made as the test network makes it),
// the compose file's account set-up succeeds, the bot gets its nofakelag
// OPER, agents registered with NickServ are answered and notified, all under the
// Ergo defaults that file keeps (force-nick-equals-account, +i, fake lag,
// login throttling).
func TestComposeErgoConfig(t *testing.T) {
	t.Parallel()
	bottest.RequireKind(t, ircnet.Ergo)
	bin, err := ircnet.ErgoBinary()
	if err != nil {
		t.Fatal(err)
	}
	// The compose file hashes the oper password with `ergo genpasswd` and
	// hands it over as ERGO__OPERS__PIRCAN__PASSWORD; so does this test.
	operPass := "oper-" + bottest.Unique("pw")
	gen := exec.Command(bin, "genpasswd", "--quiet")
	gen.Stdin = strings.NewReader(operPass + "\n")
	out, err := gen.Output()
	if err != nil {
		t.Fatalf("ergo genpasswd: %v", err)
	}
	lines := strings.Fields(string(out))
	if len(lines) == 0 {
		t.Fatal("ergo genpasswd printed nothing")
	}
	hash := lines[len(lines)-1]

	n, err := ircnet.StartWith(t.TempDir(), ircnet.Options{Kind: ircnet.Ergo, WatchPID: os.Getpid(), Env: []string{
		"ERGO_TEMPLATE=" + composeTemplate(t),
		"IRC_SERVER_NAME=ergo.test", // the file's server.name, which the certificate must name
		"IRC_BOT_OPER_NAME=pircan", "IRC_BOT_OPER_PASS=" + operPass,
		"ERGO__OPERS__PIRCAN__PASSWORD=" + hash,
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop() })

	account, password := bottest.Unique("PIRCAN"), "pw-"+bottest.Unique("sasl")
	registerBeforeConnect(t, n, account, password)
	var logs syncBuffer
	bot := bottest.StartAccount(t, bottest.Options{Net: n, Log: &logs}, account, password)
	// Replies are matched as NOTICEs from the nick account: the bot kept it.
	a, b, aID, bID := pair(t, bot, "compose")
	if r := a.Ask(`PIRCAN/1 WHOAMI {"id":"w"}`); r.Verb != "WHOAMI" || r.Str("agent_id") != aID || r.Str("re") != "w" {
		t.Fatalf("WHOAMI: %s", r.Raw)
	}
	// NOTIFY reaches b, whom PIRCAN shares no channel with and who is +i.
	a.Ask(`PIRCAN/1 CONTACT {"to":"` + bID + `","purpose":"compose"}`)
	if n := b.NextNotify(); n.Str("type") != "contact_request" {
		t.Fatalf("NOTIFY: %s", n.Raw)
	}
	if !strings.Contains(logs.String(), "OPER granted") {
		t.Fatalf("the bot got no OPER with the compose file's pircan oper:\n%s", logs.String())
	}
}
