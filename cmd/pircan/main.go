// Command pircan is the PIRCAN service bot and its operator commands.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/ircconn"
	"github.com/creatimus/pircan/server"
	"github.com/creatimus/pircan/store"
)

const usage = `usage: pircan [command] [flags]

commands:
  serve                          run the bot (default); migrates first unless --no-migrate
  migrate                        bring the database schema up to date
  channel add <#name> [--private] [--topic text]
  channel list
  channel invite <#name> <agent_id>
  channel remove <#name>
  audit [--follow] [--limit n]   print the audit log (newest last)
  reports list [--status open|resolved|all] [--limit n]
  reports show <report_id>
  reports resolve <report_id> --resolution text [--action none|warned|removed]
  owner verify <account> --name text   mark the owner of an account as verified, under that name
  bench [--agents n] [--rate r]  load test a running PIRCAN over IRC; see pircan bench -h

Every command takes the configuration flags; see pircan serve -h.
`

func main() {
	args := os.Args[1:]
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch cmd {
	case "serve":
		err = runServe(ctx, args)
	case "migrate":
		err = runMigrate(ctx, args)
	case "channel":
		err = runChannel(ctx, args, os.Stdout)
	case "audit":
		err = runAudit(ctx, args, os.Stdout, os.Stderr)
	case "reports":
		err = runReports(ctx, args, os.Stdout)
	case "owner":
		err = runOwner(ctx, args, os.Stdout)
	case "bench":
		err = runBench(ctx, args, os.Stdout)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "pircan: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pircan %s: %v\n", cmd, err)
		os.Exit(1)
	}
}

// common parses the configuration flags plus a command's own.
type common struct {
	fs   *flag.FlagSet
	cfg  config
	file *string
}

func newCommon(name string) *common {
	fs := flag.NewFlagSet("pircan "+name, flag.ContinueOnError)
	cfg, file := bindFlags(fs)
	return &common{fs: fs, cfg: cfg, file: file}
}

func (c *common) parse(args []string) error {
	if err := c.fs.Parse(args); err != nil {
		return err
	}
	return c.cfg.resolve(c.fs, *c.file)
}

// parsePositional parses flags and returns the positional arguments, which
// operators may write before the flags (`channel add '#x' --private`).
func (c *common) parsePositional(args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		pos, args = append(pos, args[0]), args[1:]
	}
	if err := c.parse(args); err != nil {
		return nil, err
	}
	return append(pos, c.fs.Args()...), nil
}

func (c *common) logger() zerolog.Logger {
	var w io.Writer = os.Stderr
	if c.cfg.str("log-format") == "console" {
		w = zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: time.RFC3339}
	}
	level, err := zerolog.ParseLevel(c.cfg.str("log-level"))
	if err != nil || level == zerolog.NoLevel {
		level = zerolog.InfoLevel
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger()
}

func (c *common) openStore(ctx context.Context) (*store.Store, error) {
	return store.Open(ctx, c.cfg.str("database-url"))
}

func runServe(ctx context.Context, args []string) error {
	c := newCommon("serve")
	noMigrate := c.fs.Bool("no-migrate", false, "do not migrate at start; refuse an out-of-date schema")
	if err := c.parse(args); err != nil {
		return err
	}
	cfg, err := serverConfig(c.cfg)
	if err != nil {
		return err
	}
	cfg.NoMigrate = *noMigrate
	log := c.logger()
	log.Info().Str("irc_server", cfg.IRC.Server).Str("nick", cfg.IRC.Nick).Str("lobby", cfg.IRC.Lobby).
		Bool("tls", cfg.IRC.TLS).Bool("sasl", cfg.IRC.SASLAccount != "").Msg("starting PIRCAN")
	bot, err := server.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	// Health, readiness and metrics: a process that cannot serve them is
	// not one an operator can run, so failing to listen ends it.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	httpErr := make(chan error, 1)
	go func() { httpErr <- bot.ServeHTTP(ctx, c.cfg.str("http-addr")) }()
	runErr := make(chan error, 1)
	go func() { runErr <- bot.Run(ctx) }()
	select {
	case err := <-runErr:
		stop()
		<-httpErr
		return err
	case err := <-httpErr:
		stop()
		<-runErr
		if err != nil {
			return fmt.Errorf("http: %w", err)
		}
		return nil
	}
}

// serverConfig turns the settings into the bot's configuration.
func serverConfig(c config) (server.Config, error) {
	var e errs
	cfg := server.Config{
		DatabaseURL: c.str("database-url"),
		Workers:     e.int(c, "workers"),
		Limits: pircan.Limits{
			PerCaller:         e.int(c, "rate-per-caller"),
			Unidentified:      e.int(c, "rate-unidentified"),
			RegistrationsHour: e.int(c, "registrations-per-hour"),
			ContactsHour:      e.int(c, "contacts-per-hour"),
			PendingMax:        e.int(c, "pending-max"),
			MessagesHour:      e.int(c, "messages-per-hour"),
			MaxHops:           e.int(c, "max-hops"),
			ConversationHour:  e.int(c, "conversation-per-hour"),
			ReportsHour:       e.int(c, "reports-per-hour"),
			LoginsHour:        e.int(c, "logins-per-hour"),
			SignInStartsHour:  e.int(c, "sign-in-starts-per-hour"),
			Window:            time.Minute,
		},
		IRC: ircconn.Config{
			Server: c.str("irc-server"), TLS: e.bool(c, "irc-tls"), CAFile: c.str("irc-ca-file"),
			Insecure: e.bool(c, "irc-insecure"), Nick: c.str("nick"),
			SASLAccount: c.str("sasl-account"), SASLPassword: c.str("sasl-password"),
			OperName: c.str("oper-name"), OperPassword: c.str("oper-password"), Lobby: c.str("lobby"),
			Pacing: ircconn.PacerConfig{
				Burst: e.int(c, "reply-burst"), PerSecond: e.float(c, "reply-rate"),
				GlobalBurst: e.int(c, "output-burst"), GlobalRate: e.float(c, "output-rate"),
				MaxQueued: ircconn.DefaultPacing.MaxQueued,
			},
		},
	}
	if e.err == nil && pircan.CheckChannelName(cfg.IRC.Lobby) != nil {
		e.err = fmt.Errorf("--lobby: %q is not a channel name", cfg.IRC.Lobby)
	}
	if e.err == nil && (cfg.IRC.Pacing.Burst < 1 || cfg.IRC.Pacing.GlobalBurst < 1 || cfg.Workers < 1) {
		e.err = errors.New("bursts and workers must be at least 1")
	}
	return cfg, e.err
}

func runMigrate(ctx context.Context, args []string) error {
	c := newCommon("migrate")
	if err := c.parse(args); err != nil {
		return err
	}
	st, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	v, err := st.Migrate(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("schema at version %d\n", v)
	return nil
}

// operator is the name operator commands are audited under.
func operator() string {
	if u := os.Getenv("SUDO_USER"); u != "" {
		return "operator:" + u
	}
	if u := os.Getenv("USER"); u != "" {
		return "operator:" + u
	}
	return "operator"
}

func runChannel(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("channel: want add, list, invite or remove")
	}
	sub, args := args[0], args[1:]
	c := newCommon("channel " + sub)
	private := c.fs.Bool("private", false, "add: members only, by invitation")
	topic := c.fs.String("topic", "", "add: the channel's topic")
	pos, err := c.parsePositional(args)
	if err != nil {
		return err
	}
	st, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	want := map[string]int{"add": 1, "list": 0, "invite": 2, "remove": 1}
	n, ok := want[sub]
	if !ok {
		return fmt.Errorf("channel: unknown subcommand %q", sub)
	}
	if len(pos) != n {
		return fmt.Errorf("channel %s takes %d argument(s)", sub, n)
	}
	switch sub {
	case "add":
		err = st.AddChannel(ctx, operator(), pos[0], *private, *topic)
		if errors.Is(err, pircan.ErrConflict) {
			return fmt.Errorf("%s exists already", pos[0])
		}
	case "invite":
		err = st.InviteToChannel(ctx, operator(), pos[0], pos[1])
		if errors.Is(err, pircan.ErrNotFound) {
			return fmt.Errorf("no channel %s or no agent %s", pos[0], pos[1])
		}
	case "remove":
		err = st.RemoveChannel(ctx, operator(), pos[0])
		if errors.Is(err, pircan.ErrNotFound) {
			return fmt.Errorf("no channel %s", pos[0])
		}
	case "list":
		list, err := st.ListAllChannels(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tPRIVATE\tMEMBERS\tINVITED\tTOPIC")
		for _, ch := range list {
			fmt.Fprintf(tw, "%s\t%v\t%d\t%d\t%s\n", ch.Name, ch.Private, ch.Members, ch.Invited, ch.Topic)
		}
		return tw.Flush()
	}
	if err == nil {
		fmt.Fprintf(out, "ok: channel %s %s\n", sub, strings.Join(pos, " "))
	}
	return err
}

func runAudit(ctx context.Context, args []string, out, errOut io.Writer) error {
	c := newCommon("audit")
	follow := c.fs.Bool("follow", false, "keep printing new entries as they are appended")
	limit := c.fs.Int("limit", 50, "how many of the latest entries to print first")
	if err := c.parse(args); err != nil {
		return err
	}
	st, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	enc := json.NewEncoder(out)
	entries, err := st.AuditLatest(ctx, *limit)
	if err != nil {
		return err
	}
	if !*follow {
		for _, e := range entries {
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		return nil
	}
	// The follow prints the latest entries too: it waits for transactions
	// that may still commit a lower id, which a plain print of the latest
	// would leave behind. With none to show, it starts after the newest.
	var after int64
	if len(entries) > 0 {
		after = entries[0].ID - 1
	} else if newest, err := st.AuditLatest(ctx, 1); err != nil {
		return err
	} else if len(newest) > 0 {
		after = newest[0].ID
	}
	// A database restart costs a reconnect, not the follow: it resumes after
	// the last entry printed.
	return st.AuditFollow(ctx, after, func(e store.AuditEntry) error { return enc.Encode(e) },
		func(err error, in time.Duration) {
			fmt.Fprintf(errOut, "pircan audit: database connection lost (%v); reconnecting in %s\n", err, in.Round(time.Millisecond))
		})
}
