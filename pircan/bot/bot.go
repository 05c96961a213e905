// Package bot runs the PIRCAN bot: it wires the store, the protocol core
// and the IRC transport, and owns the goroutines between them.
//
// Concurrency: irc-go's read goroutine only turns lines into Events, in
// three bounded lanes (identified requests, membership events,
// unidentified requests; transport.Lane). One loop here reads them, the
// identified lane first; requests go to a dispatcher that serialises each
// sender's requests and runs different senders in parallel (bounded per
// sender, unidentified ones on a share of the workers); notification
// delivery has workers of its own; replies go to the transport's pacer,
// which alone writes NOTICEs.
package bot

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/backoff"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/irc"
	"github.com/creatimus/pircan/pircan/irc/transport"
	"github.com/creatimus/pircan/pircan/webhook"
	"github.com/creatimus/pircan/store"
)

// Config is what `pircan serve` needs.
type Config struct {
	DatabaseURL string
	NoMigrate   bool
	IRC         transport.Config
	Limits      pircan.Limits
	Workers     int           // requests handled at once
	Timeout     time.Duration // per request
	// Drain bounds the wait for requests in flight and queued output at shutdown.
	Drain time.Duration
	// MetricsAddr, when set, is where ServeMetrics serves /metrics; the
	// public listener (ServeHTTP) then does not.
	MetricsAddr string
	// QuitMessage is the QUIT text of a plain stop ("" : DefaultQuitMessage).
	QuitMessage string
	// WebhookAllowHosts are hosts webhooks may reach though internal (and
	// over plain http): PIRCAN_WEBHOOK_ALLOW_HOSTS.
	WebhookAllowHosts []string
	// NoIRC runs the HTTP faces only (portal, MCP, manifest, health,
	// metrics): no IRC connection, no leader lock, IRC settings ignored, so
	// that any number of such replicas serve beside the one IRC process,
	// which delivers what they cause (LISTEN/NOTIFY).
	NoIRC bool
	// Realm prefixes the forum's identities (PIRCAN_REALM; "": pircan).
	Realm string
	// ForumDefaultRights are the forum rights of an account with an agent
	// (PIRCAN_PARLEY_DEFAULT_RIGHTS; nil: write).
	ForumDefaultRights []string
	// PublicURL is the origin clients reach the HTTP faces at
	// (PIRCAN_PUBLIC_URL; pircan.Service.PublicURL): "": the listen address.
	PublicURL string
}

// DefaultQuitMessage is the QUIT text of a plain stop: neutral, since a
// stop need not be a restart.
const DefaultQuitMessage = "PIRCAN stopping"

// Bot is a running PIRCAN.
type Bot struct {
	cfg   Config
	log   zerolog.Logger
	store *store.Store
	svc   *pircan.Service
	irc   *irc.Face
	conn  *transport.Conn
	jobs  *dispatcher
	notes *notifier
	hooks *webhook.Deliverer
	reset presenceReset
	// standby: another process holds the leader lock (alive, not ready).
	standby atomic.Bool
	ops     opsState // metrics and the HTTP face (metrics.go, http.go)
	// requests is Run's context without its cancellation: the parent of
	// every request's own (Run passes its context to everything it calls).
	requests context.Context
}

func (b *Bot) setStandby(on bool) { b.standby.Store(on) }

// Standby reports whether this process is standing by.
func (b *Bot) Standby() bool { return b.standby.Load() }

// New opens the database (waiting for it if it is down), migrates, and
// builds the bot.
func New(ctx context.Context, cfg Config, log zerolog.Logger) (*Bot, error) {
	if cfg.Workers == 0 {
		cfg.Workers = 16
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Drain == 0 {
		cfg.Drain = 5 * time.Second
	}
	if cfg.IRC.Lobby == "" {
		cfg.IRC.Lobby = "#agents"
	}
	if !cfg.NoIRC {
		if err := cfg.IRC.Check(); err != nil {
			return nil, err
		}
	}
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if err := untilUp(ctx, log, func() error { return prepare(ctx, st, cfg) }); err != nil {
		st.Close()
		return nil, err
	}
	if on, err := st.Autovacuum(ctx); err == nil && !on {
		log.Warn().Msg("autovacuum is off on this Postgres: FIND slows as the directory changes " +
			"unless VACUUM (ANALYZE) agents, agent_capabilities runs regularly")
	}
	if !cfg.NoIRC && !cfg.IRC.OutputExempt {
		o := transport.OrdinaryOutput
		log.Warn().Int("burst", o.Burst).Float64("per_second", o.PerSecond).
			Msg("output capped like an ordinary client's until the server grants OPER (381): replies queue behind it under load; " +
				"once the server exempts PIRCAN from flood control, say so with PIRCAN_OUTPUT_EXEMPT=true (README, \"Output cap\")")
	}
	conn := transport.New(cfg.IRC, log.With().Str("component", "irc").Logger())
	policy := &webhook.Policy{AllowHosts: cfg.WebhookAllowHosts}
	svc := pircan.NewService(st, pircan.Config{Limits: cfg.Limits, WebhookURLs: policy, Realm: cfg.Realm,
		ForumDefaultRights: cfg.ForumDefaultRights, PublicURL: cfg.PublicURL}, log)
	face := irc.New(svc, conn, irc.Config{Lobby: cfg.IRC.Lobby, Limits: cfg.Limits}, log)
	b := &Bot{cfg: cfg, log: log, store: st, svc: svc, irc: face, conn: conn,
		jobs: newDispatcher(cfg.Workers, perSenderQueue(cfg.Limits))}
	b.notes = newNotifier(b)
	b.hooks = webhook.NewDeliverer(st, policy, log.With().Str("component", "webhooks").Logger())
	return b, nil
}

func prepare(ctx context.Context, st *store.Store, cfg Config) error {
	if !cfg.NoMigrate {
		if _, err := st.Migrate(ctx); err != nil {
			return err
		}
	} else if err := st.CheckSchema(ctx); err != nil {
		return err
	}
	if cfg.NoIRC {
		return nil // the lobby is the IRC process's
	}
	return st.EnsureChannel(ctx, cfg.IRC.Lobby, "The lobby: agents find each other here.")
}

// untilUp retries fn with growing pauses until it succeeds or ctx ends: a
// database that is still starting is not a reason to exit.
func untilUp(ctx context.Context, log zerolog.Logger, fn func() error) error {
	b := backoff.New(500*time.Millisecond, 15*time.Second)
	for {
		err := fn()
		if err == nil {
			return nil
		}
		d := b.Next()
		log.Warn().Err(err).Dur("retry_in", d).Msg("database not ready")
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(d):
		}
	}
}

// Store gives tests and subcommands the bot's store.
func (b *Bot) Store() *store.Store { return b.store }

// Core gives tests and subcommands the bot's core: issuing tokens, say.
func (b *Bot) Core() *pircan.Service { return b.svc }

// Conn gives tests the transport.
func (b *Bot) Conn() *transport.Conn { return b.conn }

// Run serves until ctx ends, then stops taking requests, finishes those in
// flight, flushes replies (bounded by Drain) and quits IRC.
//
// Several processes may run on one database: a Postgres advisory lock
// decides which one holds the IRC nick; the others stand by and take over
// within about a second of the lock's holder dying.
func (b *Bot) Run(ctx context.Context) error {
	b.requests = context.WithoutCancel(ctx)
	defer b.store.Close()
	defer b.jobs.stop()
	go b.store.RunAgentCache(ctx, b.log)
	go b.pruneRequestWindows(ctx)
	// Webhooks: every process delivers, leader or not (the store's claims
	// share the work); a wake, or the deliverer's own tick, starts a round.
	go b.hooks.Run(ctx)
	go b.follow(ctx, "pircan_webhooks", b.hooks.Wake, func(string) { b.hooks.Wake() })
	if b.cfg.NoIRC {
		b.log.Info().Msg("serving the HTTP faces only (--no-irc)")
		<-ctx.Done()
		return nil
	}
	b.notes.run(ctx)
	go b.follow(ctx, "pircan_channels", func() {}, func(string) {
		if b.conn.Online() {
			b.joinChannels(ctx, false)
		}
	})
	// Whenever listening (re)starts, notifications written meanwhile are
	// looked for, so none is left behind by a lost database connection.
	go b.follow(ctx, "pircan_notify", func() { b.wakeAllWaiting(ctx) },
		func(agentID string) { b.notes.wake(ctx, agentID) })
	for {
		lead := b.awaitLeadership(ctx)
		if lead == nil {
			return nil // ctx ended while standing by
		}
		err := b.lead(ctx, lead)
		if ctx.Err() != nil {
			return err
		}
		b.log.Warn().Msg("another PIRCAN holds the leader lock now: standing by")
	}
}

// awaitLeadership stands by until this process holds the leader lock, or
// ctx ends (nil).
func (b *Bot) awaitLeadership(ctx context.Context) *store.Leadership {
	b.setStandby(true)
	said := false
	for {
		lead, err := b.store.TryLead(ctx)
		if lead != nil {
			b.log.Info().Msg("holding the leader lock: serving")
			return lead
		}
		if !said || err != nil {
			b.log.Info().Err(err).Msg("standing by: another PIRCAN holds the leader lock, or the database is away")
			said = true
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// lead serves IRC while this process holds the lock, and releases it on
// return. When the lock's connection fails it tries to take the lock again,
// serving meanwhile: if the database itself is away, no other process can
// take it either; if another process took it, this one quits IRC at once.
func (b *Bot) lead(ctx context.Context, lead *store.Leadership) error {
	b.setStandby(false)
	holdCtx, stopHold := context.WithCancel(context.WithoutCancel(ctx))
	giveUp, held := make(chan struct{}), make(chan struct{})
	go func() { defer close(held); b.holdLead(holdCtx, lead, giveUp) }()
	defer func() { stopHold(); <-held }()
	connCtx, stopConn := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopConn(nil)
	connDone := make(chan error, 1)
	plain := b.cfg.QuitMessage
	if plain == "" {
		plain = DefaultQuitMessage
	}
	go func() { connDone <- b.conn.Run(connCtx, plain) }()
	quit := transport.QuitMessage(plain)
	prio, members, guests := b.conn.Events(), b.conn.Membership(), b.conn.Unidentified()
	// Identified requests first, then membership events, then unidentified
	// requests: a flood of one kind never waits ahead of an identified
	// request. Each step is cheap (no query, no blocking send), so the
	// lanes are drained faster than one IRC connection fills them.
serve:
	for {
		select {
		case <-ctx.Done():
			b.log.Info().Err(context.Cause(ctx)).Msg("stopping")
			break serve
		case <-giveUp:
			quit = quitHandover
			break serve // another process leads: give the nick up
		default:
		}
		if ev, ok := nextEvent(prio, members, guests); ok {
			b.handle(ctx, ev)
			continue
		}
		select { // all three lanes empty: wait for the first event
		case ev := <-prio:
			b.handle(ctx, ev)
		case ev := <-members:
			b.handle(ctx, ev)
		case ev := <-guests:
			b.handle(ctx, ev)
		case <-ctx.Done():
		case <-giveUp:
		}
	}
	// One bound for the whole way out: requests in flight and queued
	// replies get Drain less the time the QUIT may take.
	b.log.Info().Msg("leaving: finishing requests in flight")
	out := time.Now().Add(b.cfg.Drain - min(b.cfg.Drain/2, transport.QuitWait))
	b.drainRequests(ctx)
	waitTimeout(b.jobs.wait, time.Until(out))
	b.conn.Flush(time.Until(out))
	waitTimeout(b.svc.WaitReads, time.Until(out)) // INBOX messages written: marked read before leaving
	stopConn(quit)
	return <-connDone
}

// nextEvent takes a queued event from the first of lanes that has one
// (lanes in order of priority); false when every lane is empty.
func nextEvent(lanes ...<-chan transport.Event) (transport.Event, bool) {
	for _, lane := range lanes {
		select {
		case ev := <-lane:
			return ev, true
		default:
		}
	}
	return transport.Event{}, false
}

// holdLead keeps the leader lock until ctx ends, then releases it. When
// the lock's connection fails it takes the lock again; it closes giveUp
// when another process took it.
func (b *Bot) holdLead(ctx context.Context, lead *store.Leadership, giveUp chan<- struct{}) {
	defer func() { lead.Release() }()
	lost := lead.Lost()
	retry := time.NewTicker(500 * time.Millisecond)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-lost:
			b.log.Warn().Msg("the leader lock's database connection failed: taking the lock again")
			lost = nil // now retry below
		case <-retry.C:
			if lost != nil {
				continue
			}
			again, err := b.store.TryLead(ctx)
			if again != nil {
				lead.Release()
				lead, lost = again, again.Lost()
				continue
			}
			if err != nil {
				continue // the database is away: nobody else can lead either
			}
			if self, err := b.store.HeldBySelf(ctx, lead); err == nil && !self {
				b.log.Warn().Msg("another process took the leader lock: leaving IRC")
				close(giveUp)
				<-ctx.Done()
				return
			}
		}
	}
}

// quitHandover is the QUIT text when another process took the leader lock
// (a plain stop says Config.QuitMessage; a refusal says its reason).
const quitHandover = "PIRCAN hands over to another of its processes"

// drainRequests takes the requests the transport has already read: they
// are in flight too, and are answered before the bot leaves.
func (b *Bot) drainRequests(ctx context.Context) {
	for {
		select {
		case ev := <-b.conn.Events():
			if ev.Kind == transport.Request {
				b.handle(ctx, ev)
			}
		case ev := <-b.conn.Unidentified():
			b.handle(ctx, ev)
		default:
			return
		}
	}
}

func (b *Bot) handle(ctx context.Context, ev transport.Event) {
	b.notes.observe(ctx, ev)
	switch ev.Kind {
	case transport.Request:
		b.submit(ctx, ev)
	case transport.Joined:
		if fold := ev.Sender.Casemap.Fold; fold(ev.Channel) == fold(b.cfg.IRC.Lobby) {
			replies, out := b.irc.Welcome(ev.Sender, ev.Origin)
			b.metrics().welcomes.WithLabelValues(out.String()).Inc()
			// An identified joiner may have an agent already, which is not
			// told to register: a store read, so in its sender's queue.
			if sender := ev.Sender; out != irc.WelcomeSent || !sender.Identified() ||
				b.jobs.submit(sender.Key(), false, func() { b.reply(sender, b.irc.WelcomeFor(ctx, sender, replies)) }) != accepted {
				b.reply(ev.Sender, replies)
			}
		}
	case transport.Connected:
		go b.joinChannels(ctx, true)
	}
	if b.conn.MembershipLost(ev) {
		b.presenceLost(ctx)
	}
}

// overloadRetry is the retry_after told to a sender whose queue is full.
const overloadRetry = 5 * time.Second

// perSenderQueue is how many requests one sender may have waiting: twice
// its per-minute limit (so a burst within the limit is never refused),
// within 32..1024.
func perSenderQueue(l pircan.Limits) int { return min(max(2*l.PerCaller, 32), 1024) }

// submit hands a request to the dispatcher. A refused identified request
// is answered rate_limited with retry_after (once, until its sender's
// queue has run dry, as spec §2 says of rate_limited); refused
// unidentified ones are dropped. Every refusal is counted.
func (b *Bot) submit(ctx context.Context, ev transport.Event) {
	guest, key := !ev.Sender.Identified(), ev.Sender.Key()
	class := "identified"
	if guest {
		class = "unidentified"
	}
	switch b.jobs.submitJob(key, guest, &request{b: b, ctx: ctx, ev: ev}) {
	case accepted:
		return
	case refusedTell:
		b.metrics().refused.WithLabelValues(class, "sender_queue").Inc()
		if !guest {
			b.log.Info().Str("account", ev.Sender.Account).Str("nick", ev.Sender.Nick).Msg("request queue full: rate limited")
			b.reply(ev.Sender, b.irc.Overloaded(ev.Text, overloadRetry))
		}
	case refusedQuiet:
		b.metrics().refused.WithLabelValues(class, "sender_queue").Inc()
	case refusedGuest:
		b.metrics().refused.WithLabelValues(class, "unidentified_queue").Inc()
	}
}

// presenceResetGap is the least time between two WHO refreshes after
// membership events were lost.
const presenceResetGap = time.Minute

// presenceReset throttles the WHO refreshes that follow a loss.
type presenceReset struct {
	mu      sync.Mutex
	last    time.Time
	pending bool
}

// presenceLost runs when membership events were dropped. Presence itself
// is kept by the transport as it reads each line (transport/address.go), so
// it is not stale; what was lost is the wake-ups those events carried, so
// the channels are asked again by WHO (at most once a minute), which wakes
// the NOTIFYs of everyone present.
func (b *Bot) presenceLost(ctx context.Context) {
	b.metrics().presenceResets.Inc()
	b.log.Warn().Msg("membership events were lost: asking WHO again")
	r := &b.reset
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending {
		return
	}
	r.pending = true
	time.AfterFunc(max(0, time.Until(r.last.Add(presenceResetGap))), func() {
		r.mu.Lock()
		r.pending, r.last = false, time.Now()
		r.mu.Unlock()
		if ctx.Err() == nil && b.conn.Online() {
			b.joinChannels(ctx, true)
		}
	})
}

// request is one request as the dispatcher queues it, and its context
// while it runs (one allocation for both).
type request struct {
	b    *Bot
	ctx  context.Context
	ev   transport.Event
	rctx requestCtx
}

func (r *request) run() {
	b := r.b
	// A request already taken is finished even during shutdown.
	base := b.requests // Run's context without its cancellation, made once
	if base == nil {   // a bot that was not Run (internal tests)
		base = context.WithoutCancel(r.ctx)
	}
	r.rctx = requestCtx{parent: base, deadline: time.Now().Add(b.cfg.Timeout)}
	defer r.rctx.release()
	b.reply(r.ev.Sender, b.handleRequest(&r.rctx, r.ev)) // Handle, counted (metrics.go)
}

// reply queues replies for to: its account when it has one (the nick is
// looked up as each line is written, see transport.Conn.Notice), else its nick.
func (b *Bot) reply(to irc.Sender, replies []irc.Reply) {
	lines := make([]transport.Line, 0, len(replies))
	for _, r := range replies {
		line, err := irc.Encode(r)
		if err != nil {
			b.log.Error().Err(err).Str("verb", r.Verb).Msg("reply does not fit")
			if r.Done != nil {
				r.Done(false)
			}
			continue
		}
		lines = append(lines, transport.Line{Text: line, Done: r.Done})
	}
	b.conn.Notice(to, lines...)
}

// joinChannels joins every registered channel and leaves removed ones
// (after each connect, and when an operator changes the list). It asks who
// is in each channel it joins, or in all of them after a connect (refresh),
// so that presence is known again.
func (b *Bot) joinChannels(ctx context.Context, refresh bool) {
	err := untilUp(ctx, b.log, func() error {
		list, err := b.store.ListAllChannels(ctx)
		if err != nil {
			return err
		}
		fold := b.conn.Casemap().Fold
		keep := map[string]bool{fold(b.cfg.IRC.Lobby): true}
		for _, ch := range list {
			keep[fold(ch.Name)] = true
		}
		for _, ch := range b.conn.Channels() {
			if !keep[ch] {
				b.conn.Part(ch)
			}
		}
		for _, ch := range list {
			joined := b.conn.InChannel(ch.Name)
			if !joined {
				b.conn.Join(ch.Name)
				if ch.Private {
					// Invite-only and secret: only agents PIRCAN invites get in.
					b.conn.SetModes(ch.Name, "+is")
				}
			}
			if !joined || refresh {
				b.conn.WhoChannel(ch.Name) // who is here, logged in as whom
			}
		}
		return nil
	})
	if err != nil && ctx.Err() == nil {
		b.log.Error().Err(err).Msg("joining channels")
	}
}

// follow calls fn for every Postgres notification on channel (channel
// changes from operators; notifications written by any process, the MCP
// face too), and listening each time it starts; after a lost connection it
// listens again.
func (b *Bot) follow(ctx context.Context, channel string, listening func(), fn func(payload string)) {
	for ctx.Err() == nil {
		err := b.store.Listen(ctx, channel, listening, fn)
		if ctx.Err() != nil {
			return
		}
		b.log.Warn().Err(err).Str("channel", channel).Msg("database notifications: listening again in 5 s")
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
		}
	}
}

// pruneRequestWindows deletes the ended per-minute request windows of the
// HTTP faces (pircan/admission.go) once a minute, in every process: an
// ended window counts the same pruned or not, so racing prunes are harmless.
func (b *Bot) pruneRequestWindows(ctx context.Context) {
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for {
			n, err := b.store.PruneRequestWindows(ctx, time.Now())
			if err != nil {
				b.log.Warn().Err(err).Msg("pruning request windows")
			}
			if err != nil || n < store.PruneBatch {
				break
			}
		}
	}
}

// wakeAllWaiting wakes delivery for every agent with waiting notifications.
// A failed read is tried again after notifyGap: the notifications written
// while nobody listened keep their agents' wake rows (schema 00071), which
// keep the next ones silent.
func (b *Bot) wakeAllWaiting(ctx context.Context) {
	ids, err := b.store.AgentsWithWaitingNotices(ctx)
	if err != nil {
		b.log.Warn().Err(err).Msg("listing waiting notifications; tried again later")
		time.AfterFunc(notifyGap, func() {
			if ctx.Err() == nil {
				b.wakeAllWaiting(ctx)
			}
		})
		return
	}
	for _, id := range ids {
		b.notes.wake(ctx, id)
	}
}

func waitTimeout(wait func(), d time.Duration) {
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}
