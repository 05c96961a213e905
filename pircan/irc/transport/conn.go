// Package transport is PIRCAN's IRC transport: one irc-go connection at a
// time, with capability negotiation, SASL, bot mode, reconnects with
// backoff, and paced output. It turns what the server sends into Events and
// knows nothing of the protocol core.
package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ergochat/irc-go/ircevent"
	"github.com/ergochat/irc-go/ircmsg"
	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/backoff"
	"github.com/creatimus/pircan/pircan/irc"
)

// Config is the transport's part of PIRCAN's configuration.
type Config struct {
	Server       string // host:port
	TLS          bool
	CAFile       string
	Insecure     bool
	Nick         string
	SASLAccount  string
	SASLPassword string
	OperName     string
	OperPassword string
	Lobby        string
	Pacing       PacerConfig
	// OutputExempt states that the server exempts this connection from
	// flood control (an oper class, a connect class, an exemption by host
	// or account that PIRCAN cannot see): Pacing's global cap is in force
	// from the start, OPER or not. A flood disconnect still halves it.
	OutputExempt bool
	BackoffMin   time.Duration
	BackoffMax   time.Duration
	// NickReclaim is how PIRCAN takes its nick back from another client
	// (a NickServ command: ReclaimRecover, ReclaimRegain, ReclaimGhost; or
	// ReclaimNone; "" is recover).
	NickReclaim string
	// Bounds (zero: the defaults in register.go): each registration stage
	// (dial+TLS, CAP LS, CAP REQ, SASL, welcome, MOTD); the whole
	// registration; reclaiming the nick; silence before PIRCAN's own PING;
	// the wait for an answer to it.
	StageTimeout, RegisterTimeout, ReclaimTimeout, PingIdle, PingTimeout time.Duration
	// QueueSize bounds events waiting for the bot (per lane; see Lane).
	QueueSize int
}

// Caps PIRCAN asks for. account-tag is required; the rest are used where
// granted. batch is left out on purpose: irc-go would hold batched lines.
// extended-monitor brings ACCOUNT for nicks on the MONITOR list too, shared
// channel or not (address.go).
var wantedCaps = []string{"account-tag", "message-tags", "server-time", "extended-join", "account-notify", "cap-notify",
	"extended-monitor"}

// EventKind says what an Event reports.
type EventKind int

const (
	// Request: a PRIVMSG to the bot itself.
	Request EventKind = iota
	// Joined: someone (not the bot) joined Channel.
	Joined
	// Spoke: someone spoke in a channel the bot is in.
	Spoke
	// NickChanged: Sender.Nick is now Text.
	NickChanged
	// Quit: Sender left the network.
	Quit
	// AccountChanged: Sender logged in to Sender.Account, or out ("").
	AccountChanged
	// Connected: the bot is registered, identified and in bot mode.
	Connected
	// Present: a WHO of a channel found Sender there, logged in.
	Present
)

// Event is one thing the server told the bot.
type Event struct {
	Kind    EventKind
	Sender  irc.Sender
	Channel string
	Text    string
	At      time.Time
	// Fresh: the event showed an account on a nick PIRCAN did not know it
	// on (the moment to deliver what waits for it).
	Fresh bool
	// Received is when the transport read the line, on the local clock
	// (At may be the server's); zero for events built elsewhere.
	Received time.Time
	// Origin is user@host of a JOIN's source, as the server shows it.
	Origin string
	seq    uint64 // membership lane order (intake.go)
}

// Conn keeps PIRCAN on the network.
type Conn struct {
	cfg    Config
	log    zerolog.Logger
	events *lanes
	pacer  *Pacer
	// presence and casemap: who holds which nick, compared how (address.go)
	presence *Presence
	casemap  atomic.Int32

	output *outputPolicy

	mu          sync.Mutex
	irc         *ircevent.Connection // nil while disconnected
	registered  bool                 // serving: own nick, own account, account-tag
	reconnects  int
	lastFailure string
	channels    map[string]bool // folded names of channels the bot is in
	joinSent    map[string]bool // folded channels JOINed on this connection

	whoMu    sync.Mutex
	whoSeq   int
	whoWaits map[string]*whoWait // by WHOX token
	whoAhead map[string]int      // WHOs sent per folded nick whose end has not come
	sendWho  func(nick, token string) error
}

// defaults are what New gives the Config fields left unset: the stage
// bounds (docs/protocol-notes.md lists the worst case of each), the
// reconnect backoff, the queue and the nick reclaim method.
var defaults = Config{StageTimeout: 10 * time.Second, RegisterTimeout: 30 * time.Second,
	ReclaimTimeout: 15 * time.Second, PingIdle: 15 * time.Second, PingTimeout: 10 * time.Second,
	BackoffMin: time.Second, BackoffMax: 2 * time.Minute, QueueSize: 4096, NickReclaim: ReclaimRecover}

// New builds a connection; Run starts it.
func New(cfg Config, logger zerolog.Logger) *Conn {
	if cfg.QueueSize == 0 {
		cfg.QueueSize = defaults.QueueSize
	}
	if cfg.Pacing.Burst == 0 {
		cfg.Pacing = DefaultPacing
	}
	cfg.Pacing = cfg.Pacing.withDefaults()
	if cfg.NickReclaim == "" {
		cfg.NickReclaim = defaults.NickReclaim
	}
	for _, d := range []struct{ v, def *time.Duration }{{&cfg.StageTimeout, &defaults.StageTimeout},
		{&cfg.RegisterTimeout, &defaults.RegisterTimeout}, {&cfg.ReclaimTimeout, &defaults.ReclaimTimeout},
		{&cfg.PingIdle, &defaults.PingIdle}, {&cfg.PingTimeout, &defaults.PingTimeout},
		{&cfg.BackoffMin, &defaults.BackoffMin}, {&cfg.BackoffMax, &defaults.BackoffMax}} {
		if *d.v <= 0 {
			*d.v = *d.def
		}
	}
	c := &Conn{cfg: cfg, log: logger, events: newLanes(cfg.QueueSize), channels: map[string]bool{},
		joinSent: map[string]bool{}, whoWaits: map[string]*whoWait{}, whoAhead: map[string]int{}, output: newOutputPolicy(cfg.Pacing, cfg.OutputExempt),
		presence: NewPresence(nil)}
	c.pacer = NewPacer(cfg.Pacing, nil, connOutput{c})
	c.sendWho = c.sendWhoNow
	c.applyOutput(c.output.set(false))
	return c
}

// Events is the priority lane: identified requests and Connected (see
// Lane; Membership and Unidentified are the others). Its consumer must not
// block for long: the IRC reader waits when it is full.
func (c *Conn) Events() <-chan Event { return c.events.q[LanePriority] }

// Pacer exposes output statistics.
func (c *Conn) Pacer() *Pacer { return c.pacer }

// Invite sends an IRC INVITE now (it is not a reply, so it is not paced).
func (c *Conn) Invite(nick, channel string) { c.sendRaw("INVITE", nick, channel) }

// Join joins channels, each once per connection (until it is left).
func (c *Conn) Join(channels ...string) {
	for _, ch := range channels {
		c.mu.Lock()
		again := c.joinSent[c.fold(ch)]
		if c.registered {
			c.joinSent[c.fold(ch)] = true
		}
		c.mu.Unlock()
		if !again {
			c.sendRaw("JOIN", ch)
		}
	}
}

// Part leaves a channel.
func (c *Conn) Part(channel string) {
	c.forgetJoin(channel)
	c.sendRaw("PART", channel)
}

func (c *Conn) forgetJoin(channel string) {
	c.mu.Lock()
	delete(c.joinSent, c.fold(channel))
	c.mu.Unlock()
}

// SetModes sets channel modes (the bot has op in channels it created).
func (c *Conn) SetModes(channel, modes string) { c.sendRaw("MODE", channel, modes) }

// InChannel reports whether the server has confirmed the bot in channel.
func (c *Conn) InChannel(channel string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.channels[c.fold(channel)]
}

// Channels lists the (folded) channels the bot is in.
func (c *Conn) Channels() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.channels))
	for ch := range c.channels {
		out = append(out, ch)
	}
	return out
}

func (c *Conn) setInChannel(channel string, in bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if in {
		c.channels[c.fold(channel)] = true
	} else {
		delete(c.channels, c.fold(channel))
	}
}

// Online reports whether the bot is on the network and serving: under
// its own nick, logged in to its own account, with account-tag.
func (c *Conn) Online() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.registered
}

// NotServing says why the bot is not serving ("" while it serves).
func (c *Conn) NotServing() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.registered:
		return ""
	case c.lastFailure != "":
		return c.lastFailure
	}
	return "connecting"
}

// OutputCap is the global output cap in force.
func (c *Conn) OutputCap() OutputCap {
	r, b := c.pacer.GlobalRate()
	return OutputCap{Burst: b, PerSecond: r}
}

// OutputExempt says whether the configured output cap is in force (the
// server granted OPER, or the operator stated an exemption) rather than
// the ordinary-client one.
func (c *Conn) OutputExempt() bool { return c.output.Exempt() }

func (c *Conn) applyOutput(o OutputCap) { c.pacer.SetGlobalRate(o.PerSecond, o.Burst) }

// Reconnects counts connections after the first.
func (c *Conn) Reconnects() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reconnects
}

func (c *Conn) current() *ircevent.Connection {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.registered {
		return nil
	}
	return c.irc
}

func (c *Conn) sendRaw(command string, params ...string) {
	if irc := c.current(); irc != nil {
		if err := irc.Send(command, params...); err != nil {
			c.log.Warn().Err(err).Str("command", command).Msg("send failed")
		}
	}
}

var errOffline = errors.New("not connected")

// sendNotices writes NOTICE lines to one target in a single write (see
// Pacer.Run). Each line is built and checked as irc-go's LineBytesStrict
// would (noticeLine), without building an ircmsg.Message for it.
func (c *Conn) sendNotices(target string, lines []string) error {
	irc := c.current()
	if irc == nil {
		return errOffline
	}
	size := 0
	for _, l := range lines {
		size += noticeLen(target, l) + len("\r\n")
	}
	var b strings.Builder
	b.Grow(size)
	for _, l := range lines {
		if err := noticeRefused(target, l); err != nil {
			c.log.Error().Err(err).Str("target", target).Msg("reply line refused; dropped")
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("NOTICE ")
		b.WriteString(target)
		b.WriteByte(' ')
		if trailing(l) {
			b.WriteByte(':')
		}
		b.WriteString(l)
	}
	if b.Len() == 0 {
		return nil
	}
	return irc.SendRaw(b.String()) // irc-go adds the last CR LF
}

// trailing is irc-go's rule for a parameter that must be written as the
// trailing one (after ':').
func trailing(param string) bool {
	return param == "" || strings.IndexByte(param, ' ') >= 0 || param[0] == ':'
}

// noticeLen is the length of `NOTICE <target> [:]<text>` without CR LF.
func noticeLen(target, text string) int {
	n := len("NOTICE ") + len(target) + 1 + len(text)
	if trailing(text) {
		n++
	}
	return n
}

// noticeRefused is what ircmsg's LineBytesStrict(true, 512) refuses in a
// NOTICE from a client: a target that cannot be a middle parameter, a line
// over 510 bytes before CR LF, or NUL, CR or LF anywhere in it.
func noticeRefused(target, text string) error {
	switch {
	case trailing(target):
		return ircmsg.ErrorBadParam
	case strings.ContainsAny(target, "\x00\r\n") || strings.ContainsAny(text, "\x00\r\n"):
		return ircmsg.ErrorLineContainsBadChar
	case noticeLen(target, text) > 510:
		return ircmsg.ErrorBodyTooLong
	}
	return nil
}

// QuitMessage, as the cause of the context given to Run, is the QUIT
// message PIRCAN leaves with instead of Run's default.
type QuitMessage string

func (q QuitMessage) Error() string { return string(q) }

// Run keeps the bot connected until ctx ends, then quits with quitMessage
// (or the QuitMessage that is ctx's cause).
func (c *Conn) Run(ctx context.Context, quitMessage string) error {
	if err := c.cfg.Check(); err != nil {
		return err // not a reason to retry: nothing is sent to the server
	}
	go c.pacer.Run(ctx)
	retry := backoff.New(c.cfg.BackoffMin, c.cfg.BackoffMax)
	for first := true; ; first = false {
		if !first {
			c.mu.Lock()
			c.reconnects++
			c.mu.Unlock()
		}
		started := time.Now()
		served, err := c.session(ctx, quitMessage)
		if ctx.Err() != nil {
			return nil
		}
		if served && time.Since(started) > time.Minute {
			retry.Reset() // it worked for a while: start over
		}
		delay := retry.Next()
		c.mu.Lock()
		c.lastFailure = fmt.Sprint(err)
		c.mu.Unlock()
		var r *refusal
		if errors.As(err, &r) {
			c.log.Error().Str("reason", r.msg).Dur("retry_in", delay).Msg("PIRCAN does not serve on this connection")
		} else {
			c.log.Warn().Err(err).Dur("retry_in", delay).Msg("IRC connection lost")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
	}
}

func quitText(ctx context.Context, def string) string {
	var q QuitMessage
	if errors.As(context.Cause(ctx), &q) {
		return string(q)
	}
	return def
}

// session runs one connection from dial to loss; served says whether it
// got as far as serving.
func (c *Conn) session(ctx context.Context, quitMessage string) (served bool, err error) {
	if _, err := c.tlsConfig(); err != nil {
		return false, err
	}
	l := newLink(c)
	lctx, endLink := context.WithCancel(context.WithoutCancel(ctx))
	l.ctx = lctx
	irc := &ircevent.Connection{
		Server: c.cfg.Server, Nick: c.cfg.Nick, User: "pircan", RealName: "PIRCAN agent directory",
		// TLS, CAP and SASL are PIRCAN's (register.go); irc-go's timers
		// bound only what PIRCAN's own do not reach.
		DialContext: l.dial, Timeout: c.cfg.RegisterTimeout, KeepAlive: time.Hour,
		QuitMessage: quitMessage,
		// never Debug: it would log the SASL password
		Log: log.New(logWriter{c.log, l}, "", 0),
	}
	l.irc = irc
	c.addCallbacks(guardedIRC{irc, l}, l)
	l.addRegistration(guardedIRC{irc, l})
	defer func() {
		c.setOnline(nil)
		l.closeSocket()
		l.end()   // no callback of this connection runs after the session
		endLink() // a dial still under way is abandoned
	}()
	c.applyOutput(c.output.set(false))

	if c.cfg.Insecure && c.cfg.TLS {
		c.log.Warn().Msg("TLS certificate verification is OFF (PIRCAN_IRC_INSECURE): anyone on the path can impersonate the IRC server")
	}
	started := time.Now()
	l.enter("connect")
	connectErr := make(chan error, 1)
	go func() { connectErr <- irc.Connect() }()
	// leave QUITs and waits (bounded) for the server to close the link; a
	// stalled socket cannot hold it up.
	leave := func(reason string) {
		l.quitting.Store(true)
		sent := make(chan error, 1)
		go func() { sent <- irc.SendRaw("QUIT :" + quitLine(reason)) }()
		bound := time.NewTimer(QuitWait)
		defer bound.Stop()
		select {
		case err := <-sent:
			// irc-go not running yet (PIRCAN's dial has written CAP LS, and
			// irc-go's writer is not up): say it on the socket itself.
			if err != nil && !l.writeSocket("QUIT :"+quitLine(reason)) {
				return // no socket yet: nothing to say it on
			}
		case <-bound.C:
			return
		}
		select {
		case <-l.lost:
		case <-bound.C:
		}
	}
	ended := func(err error) (bool, error) {
		if ctx.Err() != nil {
			leave(quitText(ctx, quitMessage))
			return false, nil
		}
		var r *refusal
		if errors.As(err, &r) {
			leave("PIRCAN cannot serve: " + r.msg)
		}
		return false, err
	}
	if err := l.awaitRegistration(ctx, connectErr, started); err != nil {
		return ended(err)
	}
	if err := l.checkNick(ctx); err != nil {
		return ended(err)
	}
	c.prepare(irc)
	l.enter("serving")
	c.setOnline(irc)
	c.log.Info().Str("server", c.cfg.Server).Str("nick", irc.CurrentNick()).Str("account", c.cfg.SASLAccount).
		Msg("connected to IRC: serving")
	c.emit(Event{Kind: Connected})
	go l.watchLiveness(ctx)
	// Wait for loss; poll too, since irc-go reports a write failure only
	// by stopping.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-l.failed:
			_, err := ended(l.failure)
			return true, err
		case <-l.lost:
			if err := l.drained(); err != nil {
				return true, err // the server said why (ERROR)
			}
			return true, errors.New("disconnected")
		case <-tick.C:
			if !irc.Connected() {
				return true, errors.New("disconnected")
			}
		case <-ctx.Done():
			c.stopServing(irc)
			leave(quitText(ctx, quitMessage))
			return true, nil
		}
	}
}

// quitLine keeps a QUIT reason to one short line.
func quitLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' {
			return ' '
		}
		return r
	}, s)
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// Flush waits until the output queue is empty or d has passed.
func (c *Conn) Flush(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if c.pacer.Pending() == 0 { // not Stats: a line being written may come back
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *Conn) setOnline(irc *ircevent.Connection) {
	c.mu.Lock()
	c.irc = irc
	c.registered = irc != nil
	if irc != nil {
		c.lastFailure = ""
	} else {
		c.channels = map[string]bool{}
	}
	c.joinSent = map[string]bool{}
	c.mu.Unlock()
	if irc == nil {
		c.presence.Clear() // no one seen on the lost connection is known to hold a nick now
	}
	c.pacer.SetOnline(irc != nil)
}

// stopServing ends serving on irc's connection at once (the link stays up
// until the session quits it).
func (c *Conn) stopServing(irc *ircevent.Connection) {
	c.mu.Lock()
	mine := c.irc == irc && c.registered
	if mine {
		c.registered = false
	}
	c.mu.Unlock()
	if mine {
		c.pacer.SetOnline(false)
	}
}

// prepare runs once PIRCAN holds its nick, account and account-tag: bot
// mode, and OPER for a fake-lag exemption. Channels (the lobby too) are
// joined by the bot on the Connected event.
func (c *Conn) prepare(irc *ircevent.Connection) {
	irc.Send("MODE", irc.CurrentNick(), "+B")
	o := c.OutputCap()
	switch {
	case c.cfg.OperName != "" && c.cfg.OutputExempt:
		irc.Send("OPER", c.cfg.OperName, c.cfg.OperPassword)
		c.log.Info().Int("burst", o.Burst).Float64("per_second", o.PerSecond).
			Msg("OPER sent; the output exemption is stated (PIRCAN_OUTPUT_EXEMPT or PIRCAN_OUTPUT_RATE): configured output cap in force")
	case c.cfg.OperName != "":
		irc.Send("OPER", c.cfg.OperName, c.cfg.OperPassword)
		c.log.Info().Int("burst", o.Burst).Float64("per_second", o.PerSecond).
			Msg("OPER sent: ordinary-client output cap until the server grants it (381)")
	case c.cfg.OutputExempt:
		c.log.Info().Int("burst", o.Burst).Float64("per_second", o.PerSecond).
			Msg("the output exemption is stated (PIRCAN_OUTPUT_EXEMPT or PIRCAN_OUTPUT_RATE): configured output cap in force")
	default:
		c.log.Info().Int("burst", o.Burst).Float64("per_second", o.PerSecond).
			Msg("no PIRCAN_OPER_NAME: no fake-lag exemption, ordinary-client output cap in force")
	}
}

func (c *Conn) emit(e Event) {
	c.track(&e)
	e.Received = time.Now()
	if e.At.IsZero() {
		e.At = e.Received
	}
	c.events.put(e, c.log)
}

// addCallbacks turns server lines into Events. They run on irc-go's read
// goroutine, so they only parse and enqueue.
func (c *Conn) addCallbacks(gc guardedIRC, l *link) {
	self := func(nick string) bool { return c.Casemap().Equal(nick, gc.CurrentNick()) }
	gc.AddCallback("PRIVMSG", func(m ircmsg.Message) {
		if len(m.Params) < 2 || self(m.Nick()) {
			return
		}
		sender := irc.Sender{Account: accountTag(m), Nick: m.Nick()}
		text := m.Params[1]
		// Only a line to our own nick is a request: never a channel, nor a
		// STATUSMSG target such as @#agents.
		if !self(m.Params[0]) {
			if ch := channelTarget(m.Params[0], gc.ISupport()); ch != "" {
				c.emit(Event{Kind: Spoke, Sender: sender, Channel: ch, At: serverTime(m)})
			}
			return
		}
		if strings.HasPrefix(text, "\x01") {
			return // CTCP: ignored, never answered
		}
		c.emit(Event{Kind: Request, Sender: sender, Text: text, At: serverTime(m)})
	})
	gc.AddCallback("JOIN", func(m ircmsg.Message) {
		if len(m.Params) < 1 {
			return
		}
		if self(m.Nick()) {
			c.setInChannel(m.Params[0], true)
			return
		}
		account := accountTag(m)
		if len(m.Params) >= 2 && m.Params[1] != "*" { // extended-join
			account = m.Params[1]
		}
		c.emit(Event{Kind: Joined, Sender: irc.Sender{Account: account, Nick: m.Nick()}, Channel: m.Params[0],
			Origin: origin(m.Source)})
	})
	gc.AddCallback("NICK", func(m ircmsg.Message) {
		if len(m.Params) < 1 {
			return
		}
		if self(m.Params[0]) { // irc-go has already moved CurrentNick
			l.ownNick(m.Params[0])
			return
		}
		c.emit(Event{Kind: NickChanged, Sender: irc.Sender{Account: accountTag(m), Nick: m.Nick()}, Text: m.Params[0]})
	})
	gc.AddCallback("PART", func(m ircmsg.Message) {
		if len(m.Params) >= 1 && self(m.Nick()) {
			c.setInChannel(m.Params[0], false)
			c.forgetJoin(m.Params[0])
		}
	})
	gc.AddCallback("KICK", func(m ircmsg.Message) {
		if len(m.Params) >= 2 && self(m.Params[1]) {
			c.setInChannel(m.Params[0], false)
			c.forgetJoin(m.Params[0])
			c.log.Warn().Str("channel", m.Params[0]).Str("by", m.Nick()).Msg("kicked")
		}
	})
	gc.AddCallback("QUIT", func(m ircmsg.Message) {
		c.emit(Event{Kind: Quit, Sender: irc.Sender{Nick: m.Nick()}})
	})
	gc.AddCallback("ACCOUNT", func(m ircmsg.Message) {
		if len(m.Params) < 1 {
			return
		}
		account := m.Params[0]
		if self(m.Nick()) {
			l.ownAccountChanged(account)
			return
		}
		if account == "*" {
			account = ""
		}
		c.emit(Event{Kind: AccountChanged, Sender: irc.Sender{Account: account, Nick: m.Nick()}})
	})
	gc.AddCallback("ERROR", func(m ircmsg.Message) {
		if l.quitting.Load() {
			c.log.Info().Strs("params", m.Params).Msg("left IRC")
			return
		}
		text := strings.Join(m.Params, " ")
		l.fail(fmt.Errorf("the server closed the link: %s", text))
		if floodKill(text) {
			o := c.output.flooded()
			c.applyOutput(o)
			c.log.Error().Str("error", text).Int("burst", o.Burst).Float64("per_second", o.PerSecond).
				Msg("the server disconnected PIRCAN for sending too much: global output cap lowered (give PIRCAN a fake-lag exemption, see README)")
			return
		}
		c.log.Warn().Strs("params", m.Params).Msg("server ERROR")
	})
	c.monitorCallbacks(func(code string, f func(ircmsg.Message)) { gc.AddCallback(code, f) })
	gc.AddCallback("354", c.whoReply)
	gc.AddCallback("315", c.whoEnd)
	operRefused := func(m ircmsg.Message) {
		o := c.OutputCap()
		msg := "OPER refused: no fake-lag exemption, ordinary-client output cap stays in force"
		if c.cfg.OutputExempt {
			msg = "OPER refused; the output exemption is stated, so the configured output cap stays in force"
		}
		c.log.Warn().Str("reply", m.Command+" "+lastParam(m)).Int("burst", o.Burst).Float64("per_second", o.PerSecond).Msg(msg)
	}
	gc.AddCallback("491", operRefused) // ERR_NOOPERHOST
	gc.AddCallback("464", operRefused) // ERR_PASSWDMISMATCH
	gc.AddCallback("381", func(m ircmsg.Message) {
		o := c.output.set(true)
		c.applyOutput(o)
		c.log.Info().Int("burst", o.Burst).Float64("per_second", o.PerSecond).
			Msg("OPER granted (fake-lag exemption): configured output cap in force")
	})
	// A JOIN the server refused may be tried again later.
	for _, code := range []string{"403", "405", "471", "473", "474", "475", "477"} {
		gc.AddCallback(code, func(m ircmsg.Message) {
			if len(m.Params) >= 2 {
				c.forgetJoin(m.Params[1])
			}
		})
	}
}

// accountTag reads the server-attested account ("" when absent or "*").
func accountTag(m ircmsg.Message) string {
	if ok, v := m.GetTag("account"); ok && v != "*" {
		return v
	}
	return ""
}

func serverTime(m ircmsg.Message) time.Time {
	if ok, v := m.GetTag("time"); ok {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return t
		}
	}
	return time.Now()
}

func (c *Conn) tlsConfig() (*tls.Config, error) {
	if !c.cfg.TLS {
		return nil, nil
	}
	return TLSConfig(c.cfg.Server, c.cfg.CAFile, c.cfg.Insecure)
}

// TLSConfig is the client TLS set-up for an IRC server at host:port: the
// system roots plus the PEM certificates in caFile (a local network's
// self-signed one), or no verification at all when insecure.
func TLSConfig(server, caFile string, insecure bool) (*tls.Config, error) {
	host, _, err := net.SplitHostPort(server)
	if err != nil {
		return nil, fmt.Errorf("IRC server %q: %w", server, err)
	}
	cfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s holds no certificate", caFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// logWriter routes irc-go's own log lines into zerolog, while the
// connection's session lasts.
type logWriter struct {
	l    zerolog.Logger
	link *link
}

func (w logWriter) Write(p []byte) (int, error) {
	w.link.guard(func(ircmsg.Message) {
		w.l.Debug().Str("component", "irc-go").Msg(strings.TrimSpace(string(p)))
	})(ircmsg.Message{})
	return len(p), nil
}
