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
	"time"
	"unicode"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
	pircanbot "github.com/creatimus/pircan/pircan/bot"
	"github.com/creatimus/pircan/pircan/irc/transport"
	"github.com/creatimus/pircan/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// common parses the configuration flags plus a command's own.
type common struct {
	name string
	fs   *flag.FlagSet
	cfg  config
	file *string
	out  io.Writer // where --help goes
}

func newCommon(name string) *common {
	fs := flag.NewFlagSet("pircan "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors and --help are printed by run, with this command's usage only
	cfg, file := bindFlags(fs)
	return &common{name: name, fs: fs, cfg: cfg, file: file, out: os.Stdout}
}

func (c *common) parse(args []string) error {
	if err := c.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printFlags(c.out, c.name, c.fs, c.name == "serve")
			return helpShown
		}
		return usagef(c.name, "%v", err)
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
		w = zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: time.RFC3339, NoColor: !colour(os.Stderr)}
	}
	level, err := zerolog.ParseLevel(c.cfg.str("log-level"))
	if err != nil || level == zerolog.NoLevel {
		level = zerolog.InfoLevel
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger()
}

// colour says whether console logs may carry ANSI colours: on a terminal,
// unless NO_COLOR is set (no-color.org); anywhere when CLICOLOR_FORCE is
// (dev/up sets it when its own output is a terminal: the bot writes
// through dev/up's pipe). A file or a pipe (dev/up | tee log) gets none.
func colour(f *os.File) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	if v := os.Getenv("CLICOLOR_FORCE"); v != "" && v != "0" {
		return true
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// openStore opens the database of an operator command, refusing a schema
// that is not this binary's (unmigrated, older or newer).
func (c *common) openStore(ctx context.Context) (*store.Store, error) {
	st, err := store.Open(ctx, c.cfg.str("database-url"))
	if err != nil {
		return nil, err
	}
	if err := st.CheckSchema(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

func runServe(ctx context.Context, args []string, out io.Writer) error {
	c := newCommon("serve")
	c.out = out
	noMigrate := c.fs.Bool("no-migrate", false, "do not migrate at start; refuse an out-of-date schema")
	noIRC := c.fs.Bool("no-irc", false, "serve the HTTP faces only: no IRC connection, no leader lock (replicas)")
	if err := c.parse(args); err != nil {
		return err
	}
	if c.fs.NArg() > 0 {
		return usagef("serve", "unexpected argument %q", c.fs.Arg(0))
	}
	cfg, err := serverConfig(c.cfg)
	if err != nil {
		return err
	}
	cfg.NoMigrate, cfg.NoIRC = *noMigrate, *noIRC
	log := c.logger()
	log.Info().Str("irc_server", cfg.IRC.Server).Str("nick", cfg.IRC.Nick).Str("lobby", cfg.IRC.Lobby).
		Bool("tls", cfg.IRC.TLS).Str("sasl_account", cfg.IRC.SASLAccount).Str("nick_reclaim", cfg.IRC.NickReclaim).
		Bool("oper", cfg.IRC.OperName != "").Msg("starting PIRCAN")
	bot, err := pircanbot.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	// Health, readiness and metrics: a process that cannot serve them is
	// not one an operator can run, so failing to listen ends it.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	httpErr := make(chan error, 2)
	go func() { httpErr <- bot.ServeHTTP(ctx, c.cfg.str("http-addr")) }()
	if cfg.MetricsAddr != "" {
		go func() {
			if err := bot.ServeMetrics(ctx, cfg.MetricsAddr); err != nil {
				httpErr <- fmt.Errorf("metrics: %w", err)
			}
		}()
	}
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
func serverConfig(c config) (pircanbot.Config, error) {
	var e errs
	cfg := pircanbot.Config{
		DatabaseURL:       c.str("database-url"),
		MetricsAddr:       c.str("metrics-addr"),
		Workers:           e.int(c, "workers"),
		QuitMessage:       c.str("quit-message"),
		WebhookAllowHosts: c.list("webhook-allow-hosts"),
		Limits: pircan.Limits{
			PerCaller:                    e.int(c, "rate-per-caller"),
			Unidentified:                 e.int(c, "rate-unidentified"),
			RegistrationsHour:            e.int(c, "registrations-per-hour"),
			ContactsHour:                 e.int(c, "contacts-per-hour"),
			PendingMax:                   e.int(c, "pending-max"),
			MessagesHour:                 e.int(c, "messages-per-hour"),
			MaxHops:                      e.int(c, "max-hops"),
			ConversationHour:             e.int(c, "conversation-per-hour"),
			ReportsHour:                  e.int(c, "reports-per-hour"),
			LoginsHour:                   e.int(c, "logins-per-hour"),
			SignInStartsHour:             e.int(c, "sign-in-starts-per-hour"),
			PortalPerMinute:              e.int(c, "portal-per-minute"),
			HTTPPerMinute:                e.int(c, "mcp-per-minute"),
			ResourcesHour:                e.int(c, "resources-per-hour"),
			ResourceBytes:                e.int(c, "resource-bytes"),
			TasksHour:                    e.int(c, "tasks-per-hour"),
			ForumPerMinute:               e.int(c, "forum-per-minute"),
			ForumThreadsHour:             e.int(c, "forum-threads-per-hour"),
			ForumMessagesHour:            e.int(c, "forum-messages-per-hour"),
			ForumBoardsDay:               e.int(c, "forum-boards-per-day"),
			ForumApplicationsHour:        e.int(c, "forum-applications-per-hour"),
			ForumApplicationsAddressHour: e.int(c, "forum-applications-per-address-hour"),
			ForumFeaturesDay:             e.int(c, "forum-features-per-day"),
			Window:                       time.Minute,
		},
		IRC: transport.Config{
			Server: c.str("irc-server"), TLS: e.bool(c, "irc-tls"), CAFile: c.str("irc-ca-file"),
			Insecure: e.bool(c, "irc-insecure"), Nick: c.str("nick"),
			SASLAccount: c.str("sasl-account"), SASLPassword: c.str("sasl-password"),
			OperName: c.str("oper-name"), OperPassword: c.str("oper-password"), Lobby: c.str("lobby"),
			NickReclaim: c.str("nick-reclaim"), OutputExempt: outputExempt(c, &e),
			Pacing: transport.PacerConfig{
				Burst: e.int(c, "reply-burst"), PerSecond: e.float(c, "reply-rate"),
				GlobalBurst: e.int(c, "output-burst"), GlobalRate: e.float(c, "output-rate"),
				MaxQueued: transport.DefaultPacing.MaxQueued,
			},
		},
	}
	cfg.Realm = c.str("realm")
	if e.err == nil {
		e.err = pircan.CheckRealm(cfg.Realm)
	}
	cfg.PublicURL = c.str("public-url")
	if e.err == nil {
		e.err = pircan.CheckPublicURL(cfg.PublicURL)
	}
	if e.err == nil {
		cfg.ForumDefaultRights, e.err = pircan.ParseRights(c.str("parley-default-rights"))
	}
	if e.err == nil {
		e.err = cfg.IRC.Check() // before anything is sent to the server
	}
	if e.err == nil && pircan.CheckChannelName(cfg.IRC.Lobby) != nil {
		e.err = fmt.Errorf("--lobby: %q is not a channel name", cfg.IRC.Lobby)
	}
	if q := cfg.QuitMessage; e.err == nil && (strings.IndexFunc(q, unicode.IsControl) >= 0 || len(q) > 200) {
		e.err = errors.New("--quit-message: at most 200 bytes, no control characters")
	}
	if e.err == nil && (cfg.IRC.Pacing.Burst < 1 || cfg.IRC.Pacing.GlobalBurst < 1 || cfg.Workers < 1) {
		e.err = errors.New("bursts and workers must be at least 1")
	}
	return cfg, e.err
}

func runMigrate(ctx context.Context, args []string) error { return migrateTo(ctx, args, os.Stdout) }

func migrateTo(ctx context.Context, args []string, out io.Writer) error {
	c := newCommon("migrate")
	c.out = out
	if err := c.parse(args); err != nil {
		return err
	}
	if c.fs.NArg() > 0 {
		return usagef("migrate", "unexpected argument %q", c.fs.Arg(0))
	}
	st, err := store.Open(ctx, c.cfg.str("database-url"))
	if err != nil {
		return err
	}
	defer st.Close()
	v, err := st.Migrate(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "schema at version %d\n", v)
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
	sub, c, args, err := groupCommand("channel", args, out, "add", "list", "invite", "remove")
	if err != nil {
		return err
	}
	name := c.name
	var private *bool
	var topic *string
	if sub == "add" {
		private = c.fs.Bool("private", false, "members only, by invitation")
		topic = c.fs.String("topic", "", "the channel's topic")
	}
	pos, err := c.parsePositional(args)
	if err != nil {
		return err
	}
	names := map[string][]string{"add": {"<#name>"}, "list": nil, "invite": {"<#name>", "<agent_id>"}, "remove": {"<#name>"}}
	if err := wantArgs(name, pos, names[sub]...); err != nil {
		return err
	}
	if sub == "remove" && pircan.RFC1459.Fold(pos[0]) == pircan.RFC1459.Fold(c.cfg.str("lobby")) {
		return fmt.Errorf("%s is the lobby (--lobby): PIRCAN always keeps it", pos[0])
	}
	switch sub {
	case "add":
		a := pircan.AddChannelArgs{Channel: &pos[0], Private: private, Topic: topic}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			_, err := core.AddChannel(ctx, op, a)
			return done(out, err, "ok: channel add %s\n", pos[0])
		})
	case "invite":
		a := pircan.InviteArgs{Channel: &pos[0], AgentID: &pos[1]}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			_, err := core.InviteToChannel(ctx, op, a)
			return done(out, err, "ok: channel invite %s %s\n", pos[0], pos[1])
		})
	case "remove":
		a := pircan.ChannelArgs{Channel: &pos[0]}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			_, err := core.RemoveChannel(ctx, op, a)
			return done(out, err, "ok: channel remove %s\n", pos[0])
		})
	}
	return c.operate(ctx, &pircan.AllChannelsArgs{}, func(core *pircan.Service, op pircan.Caller) error {
		list, err := core.AllChannels(ctx, op, pircan.AllChannelsArgs{})
		if err != nil {
			return err
		}
		tw := table(out)
		fmt.Fprintln(tw, "NAME\tPRIVATE\tMEMBERS\tINVITED\tTOPIC")
		for _, ch := range list {
			fmt.Fprintf(tw, "%s\t%v\t%d\t%d\t%s\n", ch.Name, ch.Private, ch.Members, ch.Invited, clean(ch.Topic))
		}
		return tw.Flush()
	})
}

// done prints what an operation did, unless it was refused.
func done(out io.Writer, err error, format string, args ...any) error {
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, format, args...)
	return err
}

func runAudit(ctx context.Context, args []string, out, errOut io.Writer) error {
	c := newCommon("audit")
	c.out = out
	follow := c.fs.Bool("follow", false, "keep printing new entries as they are appended")
	limit := c.fs.Int("limit", 50, "how many of the latest entries to print first")
	if err := c.parse(args); err != nil {
		return err
	}
	if c.fs.NArg() > 0 {
		return usagef("audit", "unexpected argument %q", c.fs.Arg(0))
	}
	enc := json.NewEncoder(out)
	a := pircan.AuditArgs{Limit: limit, Follow: follow}
	return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
		// A database restart costs a reconnect, not the follow: it resumes
		// after the last entry printed.
		return core.Audit(ctx, op, a, func(e pircan.AuditEntry) error { return enc.Encode(e) },
			func(err error, in time.Duration) {
				fmt.Fprintf(errOut, "pircan audit: database connection lost (%v); reconnecting in %s\n", err, in.Round(time.Millisecond))
			})
	})
}

// outputExempt is whether the operator states that the server exempts the
// bot from flood control: PIRCAN_OUTPUT_EXEMPT when given, else whether
// PIRCAN_OUTPUT_RATE was (a rate chosen for this server is one it allows).
func outputExempt(c config, e *errs) bool {
	if c.set("output-exempt") {
		return e.bool(c, "output-exempt")
	}
	return c.set("output-rate")
}
