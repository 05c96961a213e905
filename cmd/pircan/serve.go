package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
	pircanbot "github.com/creatimus/pircan/pircan/bot"
	"github.com/creatimus/pircan/pircan/irc/transport"
)

// runServe is `pircan serve`: the bot, its HTTP faces and its metrics, in
// one process until ctx ends or one of them fails.
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

// outputExempt is whether the operator states that the server exempts the
// bot from flood control: PIRCAN_OUTPUT_EXEMPT when given, else whether
// PIRCAN_OUTPUT_RATE was (a rate chosen for this server is one it allows).
func outputExempt(c config, e *errs) bool {
	if c.set("output-exempt") {
		return e.bool(c, "output-exempt")
	}
	return c.set("output-rate")
}

// logger is serve's log, as --log-format and --log-level ask.
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
