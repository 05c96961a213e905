package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/creatimus/pircan/internal/loadgen"
)

// benchHelp follows bench's usage line (synopsis).
const benchHelp = `
Connects --agents NickServ-identified agents to the IRC network where PIRCAN
runs, registers them with PIRCAN (HELLO) and gives each two message
agreements (a ring of CONTACT/ACCEPT), then sends --mix at --rate requests/s
in total for --duration, every agent in turn, and times every reply (matched
by "id"/"re"; a list is timed to its -END line). In the same run it measures
two floors on the same network: an echo bot (--echo-nick; no work) and Anope
NickServ's "INFO <account>" (to its first line).

Reports sent/ok/errors/lost, requests/s and p50/p99 per verb, and the WHOAMI
round trip as a ratio to each floor: a plain table, or --json. Exits 1 if a
reply was lost (none within --timeout), an agent was disconnected by the
server (flood control: ERROR or closed), or PIRCAN answered with an ERROR.

Rates: PIRCAN allows 20 requests per account per minute (PIRCAN_RATE_PER_CALLER)
and paces its output per recipient (a burst of 5 lines, then 2 per second).
A realistic ceiling at 500 agents is 500 x 20/60 = ~166 req/s. The default
--rate is 15 per agent per minute (0.25/s: 125 req/s at 500 agents), which
leaves room in the first minute for the setup's 3 requests per agent. Go
higher only if the operator raised the limit on the bot. PIRCAN's global output
cap (PIRCAN_OUTPUT_RATE, 200 lines/s by default) also bounds what it can answer:
a FIND is limit+1 lines, and every CONTACT, ACCEPT and SEND also sends a NOTIFY.
New agents: PIRCAN registers at most PIRCAN_REGISTRATIONS_PER_HOUR (30 by
default) per hour. Either raise that limit for the first run, or run again with
the same --nick-prefix and --agent-password, since those agents are registered
already.

--flood runs the flood benchmark instead (issue 8): --flood-conns unidentified
connections rotate through --flood-nicks nicks in all over --duration (each
nick: NICK, JOIN --lobby, one ECHO, PART), while one identified agent
(--probe-nick, its NickServ account; password --agent-password) sends WHOAMI
every --whoami-every, first alone for --baseline (0: none), then throughout the flood.
It prints the WHOAMI latency p50/p99/max, late (over --target) and lost, per
phase, the replies the guests got, and with --metrics-url (the bot's
/metrics) the bot's RSS peak and its refusal counters. Exits 1 if a WHOAMI
was late or lost during the flood.

--knee runs issue 24's knee instead of the mix (needs --echo-nick): each
rate, rising, for --knee-step, first WHOAMI from the agents in turn to
PIRCAN, then the same lines to the echo bot; it prints the curve (rate ->
p50/p99 of both, lost) and both knees: PIRCAN's is the highest rate whose
WHOAMI p99 stayed within 3x the echo bot's at that rate, the echo bot's the
highest whose p99 stayed within 3x its own at the first rate, and the ratio
of the two (judged >= 0.8). Raise PIRCAN_RATE_PER_CALLER and
PIRCAN_OUTPUT_RATE on the bot to let the rates through.

mix verbs: hello (HELLO repeating the agent's profile), whoami, find, channels, echo, contact (CONTACT to an agent not
asked yet in this run, with a task scope of the run's own; that agent
ACCEPTs in its next turn, timed as "accept"), send (SEND to an agreed
partner), inbox (INBOX {"limit":5}).

flags:
`

func runBench(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("pircan bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // run prints errors with this command's usage

	server := fs.String("irc-server", envOr("PIRCAN_IRC_SERVER", "127.0.0.1:6697"), "host:port of the IRC server, TLS (env PIRCAN_IRC_SERVER)")
	caFile := fs.String("irc-ca-file", os.Getenv("PIRCAN_IRC_CA_FILE"), "PEM bundle to trust besides the system roots (env PIRCAN_IRC_CA_FILE)")
	botNick := fs.String("bot-nick", envOr("PIRCAN_NICK", "PIRCAN"), "PIRCAN's nick (env PIRCAN_NICK)")
	agents := fs.Int("agents", 50, "concurrent agents")
	rate := fs.Float64("rate", 0, "requests/s to PIRCAN, all agents together (0: 15 per agent per minute)")
	duration := fs.Duration("duration", 30*time.Second, "length of the measured phase")
	mixFlag := fs.String("mix", loadgen.DefaultMix, "verbs and weights")
	findLimit := fs.Int("find-limit", 5, "FIND's limit (1-10; PIRCAN's default is 5)")
	register := fs.Bool("register", false, "REGISTER the agents' NickServ accounts first (REGISTER logs in at once; existing accounts are IDENTIFIed)")
	prefix := fs.String("nick-prefix", "bench", "agents are <prefix>-1 ... <prefix>-N; each nick is its NickServ account")
	password := fs.String("agent-password", os.Getenv("PIRCAN_BENCH_AGENT_PASSWORD"), "the agents' NickServ password (env PIRCAN_BENCH_AGENT_PASSWORD)")
	email := fs.String("register-email", "", "e-mail address for NickServ REGISTER, if the network requires one")
	parallel := fs.Int("connect-parallel", 50, "connections at once (InspIRCd registers clients on a 1-second tick)")
	timeout := fs.Duration("timeout", 15*time.Second, "a reply not here by then counts as lost")
	settle := fs.Duration("settle", 3*time.Second, "pause after the setup, so per-recipient pacing refills")
	floorRate := fs.Float64("floor-rate", 5, "probes/s to each floor (echo bot, NickServ INFO)")
	echoNick := fs.String("echo-nick", "", "an echo bot on the same network (none: no echo floor)")
	echoAccount := fs.String("echo-sasl-account", "", "start the echo bot here with this services account (else it must be running)")
	echoPassword := fs.String("echo-sasl-password", os.Getenv("PIRCAN_BENCH_ECHO_PASSWORD"), "its password (env PIRCAN_BENCH_ECHO_PASSWORD)")
	echoOper := fs.String("echo-oper-name", "", "optional OPER for the echo bot (fake-lag exemption, as PIRCAN's)")
	echoOperPassword := fs.String("echo-oper-password", os.Getenv("PIRCAN_BENCH_ECHO_OPER_PASSWORD"), "its password (env PIRCAN_BENCH_ECHO_OPER_PASSWORD)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	traceFile := fs.String("trace", "", "write a CSV line per timed request to this file (start_ms,row,agent,ms,first_line_ms,outcome)")
	flood := fs.Bool("flood", false, "run the flood benchmark (see above) instead of the load")
	kneeRates := fs.String("knee", "", "run the knee instead of the mix (see above): rising rates in requests/s, comma-separated")
	kneeStep := fs.Duration("knee-step", 20*time.Second, "--knee: how long each rate runs, against PIRCAN and then against the echo bot")
	lobby := fs.String("lobby", envOr("PIRCAN_LOBBY", "#agents"), "--flood: the lobby the guests join (env PIRCAN_LOBBY)")
	floodConns := fs.Int("flood-conns", 10, "--flood: unidentified connections")
	floodNicks := fs.Int("flood-nicks", 2000, "--flood: distinct nicks they rotate through, in all")
	probeNick := fs.String("probe-nick", "", "--flood: the identified agent's nick and account (default <nick-prefix>-probe)")
	whoamiEvery := fs.Duration("whoami-every", 4*time.Second, "--flood: the agent's WHOAMI interval (4 s: 15 a minute, under the default limit of 20)")
	baseline := fs.Duration("baseline", 10*time.Second, "--flood: WHOAMI alone before the flood")
	target := fs.Duration("target", 5*time.Second, "--flood: a WHOAMI answered later is late")
	metricsURL := fs.String("metrics-url", "", "--flood: the bot's /metrics URL, for its RSS and refusal counters")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(out, synopsis("bench")+benchHelp)
			fs.VisitAll(func(f *flag.Flag) { fmt.Fprintln(out, flagLine(f)) })
			return helpShown
		}
		return usagef("bench", "%v", err)
	}
	if fs.NArg() > 0 {
		return usagef("bench", "unexpected argument %q", fs.Arg(0))
	}
	for _, n := range []struct {
		name      string
		v, lo, hi int
	}{{"agents", *agents, 1, 100000}, {"find-limit", *findLimit, 1, 10}, {"connect-parallel", *parallel, 1, 100000},
		{"flood-conns", *floodConns, 1, 100000}, {"flood-nicks", *floodNicks, 1, 10000000}} {
		if n.v < n.lo || n.v > n.hi {
			return usagef("bench", "--%s %d: want %d to %d", n.name, n.v, n.lo, n.hi)
		}
	}
	if *rate < 0 || *floorRate <= 0 {
		return usagef("bench", "--rate must be 0 or more, --floor-rate more than 0")
	}
	if *duration <= 0 || *timeout <= 0 || *settle < 0 {
		return usagef("bench", "--duration and --timeout must be positive, --settle not negative")
	}
	if *whoamiEvery <= 0 || *target <= 0 || *baseline < 0 {
		return usagef("bench", "--whoami-every and --target must be positive, --baseline not negative")
	}
	if *password == "" {
		return usagef("bench", "--agent-password (or PIRCAN_BENCH_AGENT_PASSWORD) is required")
	}
	if *flood {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["duration"] {
			*duration = 60 * time.Second
		}
		if *probeNick == "" {
			*probeNick = *prefix + "-probe"
		}
		if !set["timeout"] {
			*timeout = 30 * time.Second
		}
		if *baseline == 0 {
			*baseline = -1 // loadgen: 0 is its default, <0 none
		}
		return runFlood(ctx, out, *asJSON, loadgen.FloodConfig{
			Server: *server, CAFile: *caFile, BotNick: *botNick, Lobby: *lobby,
			Conns: *floodConns, Nicks: *floodNicks, Duration: *duration, Baseline: *baseline,
			Agent: *probeNick, Password: *password, Register: *register, Email: *email,
			WhoamiEvery: *whoamiEvery, Target: *target, Timeout: *timeout, MetricsURL: *metricsURL,
			Progress: os.Stderr,
		})
	}
	if *echoAccount != "" && (*echoNick == "" || *echoPassword == "") {
		return errors.New("--echo-sasl-account needs --echo-nick and --echo-sasl-password")
	}
	mix, err := loadgen.ParseMix(*mixFlag)
	if err != nil {
		return err
	}
	var knee []float64
	for _, f := range strings.FieldsFunc(*kneeRates, func(r rune) bool { return r == ',' }) {
		rate, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || rate <= 0 || (len(knee) > 0 && rate <= knee[len(knee)-1]) {
			return usagef("bench", "--knee %q: want rising rates in requests/s, e.g. 100,200,400", *kneeRates)
		}
		knee = append(knee, rate)
	}
	if len(knee) > 0 && *echoNick == "" {
		return usagef("bench", "--knee needs the echo bot (--echo-nick)")
	}
	if *agents > 0 && *rate > float64(*agents)*20/60 {
		fmt.Fprintf(os.Stderr, "pircan bench: warning: %.1f req/s is %.1f per agent per minute, over PIRCAN's default limit of 20: "+
			"unless PIRCAN_RATE_PER_CALLER was raised on the bot, expect rate_limited and lost replies\n",
			*rate, *rate/float64(*agents)*60)
	}
	var trace io.Writer
	if *traceFile != "" {
		f, err := os.Create(*traceFile)
		if err != nil {
			return err
		}
		defer f.Close()
		bw := bufio.NewWriter(f)
		defer bw.Flush()
		trace = bw
	}
	if *settle == 0 {
		*settle = -1 // loadgen: 0 is its default, <0 none
	}
	res, err := loadgen.Run(ctx, loadgen.Config{
		Server: *server, CAFile: *caFile, BotNick: *botNick,
		Agents: *agents, NickPrefix: *prefix, Password: *password, Email: *email, Register: *register,
		Rate: *rate, Duration: *duration, Mix: mix, FindLimit: *findLimit,
		ConnectParallel: *parallel, Timeout: *timeout, Settle: *settle, FloorRate: *floorRate,
		Echo: loadgen.EchoConfig{Nick: *echoNick, SASLAccount: *echoAccount, SASLPassword: *echoPassword,
			OperName: *echoOper, OperPassword: *echoOperPassword},
		Knee: knee, KneeStep: *kneeStep,
		Progress: os.Stderr, Trace: trace,
	})
	if res == nil {
		return err
	}
	table := res.WriteTable
	if res.Knee != nil {
		table = res.Knee.WriteKnee
	}
	return report(out, *asJSON, res, table, res.Failures, err)
}

// report prints a run's result (JSON, or its table) even when the run was
// interrupted (err), then says what failed.
func report(out io.Writer, asJSON bool, res any, table func(io.Writer) error, failures func() []string, err error) error {
	var werr error
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		werr = enc.Encode(res)
	} else {
		werr = table(out)
	}
	if err != nil { // interrupted: the result so far was printed
		return err
	}
	if werr != nil {
		return werr
	}
	if f := failures(); len(f) > 0 {
		return errors.New(strings.Join(f, "; "))
	}
	return nil
}

func runFlood(ctx context.Context, out io.Writer, asJSON bool, cfg loadgen.FloodConfig) error {
	res, err := loadgen.RunFlood(ctx, cfg)
	if res == nil {
		return err
	}
	return report(out, asJSON, res, res.WriteTable, res.Failures, err)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
