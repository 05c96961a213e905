package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	pircanbot "github.com/creatimus/pircan/pircan/bot"
)

// setting is one configuration value: a flag with an environment twin.
type setting struct {
	flag, env, def, help string
	secret               bool
}

// settings is the configuration contract (DESIGN.md); README's table is
// this list.
var settings = []setting{
	{"database-url", "PIRCAN_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/pircan?sslmode=disable", "Postgres DSN", true},
	{"irc-server", "PIRCAN_IRC_SERVER", "127.0.0.1:6697", "host:port of the IRC server", false},
	{"irc-tls", "PIRCAN_IRC_TLS", "true", "use TLS", false},
	{"irc-ca-file", "PIRCAN_IRC_CA_FILE", "", "PEM bundle to trust besides the system roots", false},
	{"irc-insecure", "PIRCAN_IRC_INSECURE", "false", "skip TLS certificate verification (warns at every connect)", false},
	{"nick", "PIRCAN_NICK", "PIRCAN", "the bot's nick", false},
	{"sasl-account", "PIRCAN_SASL_ACCOUNT", "", "the bot's services account (SASL PLAIN)", false},
	{"sasl-password", "PIRCAN_SASL_PASSWORD", "", "its password", true},
	{"nick-reclaim", "PIRCAN_NICK_RECLAIM", "recover", "how to take the nick back from another client: recover (Anope NickServ RECOVER), regain (Atheme REGAIN), ghost (Ergo GHOST) or none", false},
	{"oper-name", "PIRCAN_OPER_NAME", "", "optional OPER name (fake-lag exemption)", false},
	{"oper-password", "PIRCAN_OPER_PASSWORD", "", "its password", true},
	{"lobby", "PIRCAN_LOBBY", "#agents", "lobby channel", false},
	{"quit-message", "PIRCAN_QUIT_MESSAGE", pircanbot.DefaultQuitMessage, "the QUIT text of a plain stop (Ctrl-C, SIGTERM)", false},
	{"http-addr", "PIRCAN_HTTP_ADDR", "127.0.0.1:8080", "listen address of the HTTP faces: the owner portal /owner, MCP /mcp, A2A /a2a/, the forum /parley/, the manifest /api/v1/manifest, /.well-known/oauth-protected-resource, /healthz, /readyz and /metrics", false},
	{"metrics-addr", "PIRCAN_METRICS_ADDR", "", "listen address of /metrics alone; when set, the http-addr listener does not serve it", false},
	{"log-level", "PIRCAN_LOG_LEVEL", "info", "debug, info, warn or error", false},
	{"log-format", "PIRCAN_LOG_FORMAT", "json", "json or console", false},
	{"rate-per-caller", "PIRCAN_RATE_PER_CALLER", "20", "requests per minute per account (or nick)", false},
	{"rate-unidentified", "PIRCAN_RATE_UNIDENTIFIED", "60", "requests per minute from all unidentified callers", false},
	{"registrations-per-hour", "PIRCAN_REGISTRATIONS_PER_HOUR", "30", "new registrations per hour, network-wide", false},
	{"contacts-per-hour", "PIRCAN_CONTACTS_PER_HOUR", "10", "contact requests per hour per agent", false},
	{"pending-max", "PIRCAN_PENDING_MAX", "20", "pending outgoing contact requests per agent", false},
	{"messages-per-hour", "PIRCAN_MESSAGES_PER_HOUR", "120", "direct messages per hour per sender per agreement", false},
	{"max-hops", "PIRCAN_MAX_HOPS", "8", "deepest reply chain", false},
	{"conversation-per-hour", "PIRCAN_CONVERSATION_PER_HOUR", "40", "messages per conversation per hour", false},
	{"reports-per-hour", "PIRCAN_REPORTS_PER_HOUR", "5", "reports per hour per agent", false},
	{"logins-per-hour", "PIRCAN_LOGINS_PER_HOUR", "10", "owner LOGIN attempts per hour per account", false},
	{"sign-in-starts-per-hour", "PIRCAN_SIGN_IN_STARTS_PER_HOUR", "10", "owner portal sign-in codes asked for and not used, per hour per address", false},
	{"portal-per-minute", "PIRCAN_PORTAL_PER_MINUTE", "60", "owner portal actions per minute per account, across replicas", false},
	{"mcp-per-minute", "PIRCAN_MCP_PER_MINUTE", "120", "MCP and A2A requests per minute per account, together (one window), across replicas", false},
	{"resources-per-hour", "PIRCAN_RESOURCES_PER_HOUR", "20", "resource publications per hour per agent", false},
	{"resource-bytes", "PIRCAN_RESOURCE_BYTES", "2000000", "content bytes of one agent's resources in all", false},
	{"tasks-per-hour", "PIRCAN_TASKS_PER_HOUR", "60", "tasks sent per hour per requester (MCP, A2A)", false},
	{"forum-per-minute", "PIRCAN_FORUM_PER_MINUTE", "600", "Parley forum requests per minute per account, across replicas", false},
	{"forum-threads-per-hour", "PIRCAN_FORUM_THREADS_PER_HOUR", "30", "forum threads opened per hour per account", false},
	{"forum-messages-per-hour", "PIRCAN_FORUM_MESSAGES_PER_HOUR", "300", "forum messages written per hour per account", false},
	{"forum-boards-per-day", "PIRCAN_FORUM_BOARDS_PER_DAY", "5", "forum boards added per day per account", false},
	{"public-url", "PIRCAN_PUBLIC_URL", "", "the origin clients reach the HTTP faces at (https://pircan.example), printed in agent cards, the manifest and llms.txt; empty: http://<http-addr>, never a request's Host", false},
	{"forum-applications-per-hour", "PIRCAN_FORUM_APPLICATIONS_PER_HOUR", "30", "forum token applications per hour, network-wide", false},
	{"forum-applications-per-address-hour", "PIRCAN_FORUM_APPLICATIONS_PER_ADDRESS_HOUR", "3", "forum token applications per hour per address (IPv6: per /64)", false},
	{"forum-features-per-day", "PIRCAN_FORUM_FEATURES_PER_DAY", "10", "forum feature requests per day per account", false},
	{"realm", "PIRCAN_REALM", "pircan", "the forum's identity namespace (<realm>:<account>)", false},
	{"parley-default-rights", "PIRCAN_PARLEY_DEFAULT_RIGHTS", "write", "forum rights of an account with a registered agent, comma-separated (none: no rights)", false},
	{"reply-burst", "PIRCAN_REPLY_BURST", "5", "lines to one recipient before pacing", false},
	{"reply-rate", "PIRCAN_REPLY_RATE", "2", "lines per second to one recipient after the burst", false},
	{"output-burst", "PIRCAN_OUTPUT_BURST", "200", "global output burst (lines)", false},
	{"output-rate", "PIRCAN_OUTPUT_RATE", "200", "global output cap (lines per second); set explicitly, it states the connection is exempt from flood control (as output-exempt)", false},
	{"output-exempt", "PIRCAN_OUTPUT_EXEMPT", "false", "the server exempts the bot's connection from flood control: the output cap is in force without OPER (default: only once OPER is granted; true when output-rate is set)", false},
	{"webhook-allow-hosts", "PIRCAN_WEBHOOK_ALLOW_HOSTS", "", "comma-separated hosts webhooks may reach though they resolve to internal addresses (plain http allowed too)", false},
	{"workers", "PIRCAN_WORKERS", "16", "requests handled at once", false},
}

// config holds resolved values by flag name, and which of them were set
// (by a flag, the environment or the file) rather than defaulted.
type config struct {
	vals     map[string]*string
	explicit map[string]bool
}

// bindFlags registers every setting on fs. A value's precedence: flag, then
// environment, then the --config file, then the default.
func bindFlags(fs *flag.FlagSet) (config, *string) {
	c := config{vals: map[string]*string{}, explicit: map[string]bool{}}
	for _, s := range settings {
		v := s.def
		c.vals[s.flag] = &v
		fs.StringVar(c.vals[s.flag], s.flag, s.def, fmt.Sprintf("%s (env %s)", s.help, s.env))
	}
	file := fs.String("config", os.Getenv("PIRCAN_CONFIG"), "optional file of PIRCAN_*=value lines (env PIRCAN_CONFIG)")
	return c, file
}

// resolve fills in what flags did not set: environment first, then file.
func (c config) resolve(fs *flag.FlagSet, file string) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	fromFile := map[string]string{}
	if file != "" {
		var err error
		if fromFile, err = readEnvFile(file); err != nil {
			return err
		}
	}
	for _, s := range settings {
		if set[s.flag] {
			c.explicit[s.flag] = true
			continue
		}
		if v, ok := os.LookupEnv(s.env); ok {
			*c.vals[s.flag] = v
			c.explicit[s.flag] = true
		} else if v, ok := fromFile[s.env]; ok {
			*c.vals[s.flag] = v
			c.explicit[s.flag] = true
		}
	}
	return nil
}

func readEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want KEY=value", path, n)
		}
		out[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
	}
	return out, sc.Err()
}

func (c config) str(name string) string { return *c.vals[name] }

// set says whether the setting was given rather than defaulted.
func (c config) set(name string) bool { return c.explicit[name] }

// list is a comma-separated setting, blanks dropped.
func (c config) list(name string) []string {
	var out []string
	for _, v := range strings.Split(c.str(name), ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func (c config) bool(name string) (bool, error) {
	v, err := strconv.ParseBool(c.str(name))
	if err != nil {
		return false, fmt.Errorf("--%s: %q is not true or false", name, c.str(name))
	}
	return v, nil
}

func (c config) int(name string) (int, error) {
	v, err := strconv.Atoi(c.str(name))
	if err != nil || v < 0 {
		return 0, fmt.Errorf("--%s: %q: want a whole number, 0 or more", name, c.str(name))
	}
	return v, nil
}

func (c config) float(name string) (float64, error) {
	v, err := strconv.ParseFloat(c.str(name), 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("--%s: %q is not a positive number", name, c.str(name))
	}
	return v, nil
}

// errs collects the first parse error of a series of lookups.
type errs struct{ err error }

func (e *errs) int(c config, name string) int {
	v, err := c.int(name)
	if e.err == nil {
		e.err = err
	}
	return v
}

func (e *errs) float(c config, name string) float64 {
	v, err := c.float(name)
	if e.err == nil {
		e.err = err
	}
	return v
}

func (e *errs) bool(c config, name string) bool {
	v, err := c.bool(name)
	if e.err == nil {
		e.err = err
	}
	return v
}
