// Package ircconn is PIRCAN's IRC transport: one irc-go connection at a
// time, with capability negotiation, SASL, bot mode, reconnects with
// backoff, and paced output. It turns what the server sends into Events and
// knows nothing of the protocol core.
package ircconn

import (
	"bytes"
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

	"github.com/creatimus/pircan/pircan"
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
	BackoffMin   time.Duration
	BackoffMax   time.Duration
	// QueueSize bounds events waiting for the workers.
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
	Sender  pircan.Sender
	Channel string
	Text    string
	At      time.Time
	// Fresh: the event showed an account on a nick PIRCAN did not know it
	// on (the moment to deliver what waits for it).
	Fresh bool
	// Received is when the transport read the line, on the local clock
	// (At may be the server's); zero for events built elsewhere.
	Received time.Time
}

// Conn keeps PIRCAN on the network.
type Conn struct {
	cfg    Config
	log    zerolog.Logger
	events chan Event
	pacer  *Pacer
	// presence and casemap: who holds which nick, compared how (address.go)
	presence *Presence
	casemap  atomic.Int32

	mu          sync.Mutex
	irc         *ircevent.Connection // nil while disconnected
	registered  bool
	reconnects  int
	lastFailure string
	channels    map[string]bool // folded names of channels the bot is in
	quitting    atomic.Bool     // we sent QUIT: the server's ERROR is expected
	dropped     atomic.Uint64   // events dropped for a full queue

	whoMu    sync.Mutex
	whoSeq   int
	whoWaits map[string]*whoWait // by WHOX token
}

// New builds a connection; Run starts it.
func New(cfg Config, logger zerolog.Logger) *Conn {
	if cfg.QueueSize == 0 {
		cfg.QueueSize = 4096
	}
	if cfg.BackoffMin == 0 {
		cfg.BackoffMin = time.Second
	}
	if cfg.BackoffMax == 0 {
		cfg.BackoffMax = 2 * time.Minute
	}
	if cfg.Pacing.Burst == 0 {
		cfg.Pacing = DefaultPacing
	}
	c := &Conn{cfg: cfg, log: logger, events: make(chan Event, cfg.QueueSize), channels: map[string]bool{},
		whoWaits: map[string]*whoWait{}, presence: NewPresence(nil)}
	c.pacer = NewPacer(cfg.Pacing, nil, connOutput{c})
	return c
}

// Events is where the transport delivers what it heard. Its consumer must
// not block for long: when the buffer is full, events are dropped (and
// logged) rather than stall the IRC read loop.
func (c *Conn) Events() <-chan Event { return c.events }

// Pacer exposes output statistics.
func (c *Conn) Pacer() *Pacer { return c.pacer }

// Invite sends an IRC INVITE now (it is not a reply, so it is not paced).
func (c *Conn) Invite(nick, channel string) { c.sendRaw("INVITE", nick, channel) }

// Join joins channels.
func (c *Conn) Join(channels ...string) {
	for _, ch := range channels {
		c.sendRaw("JOIN", ch)
	}
}

// Part leaves a channel.
func (c *Conn) Part(channel string) { c.sendRaw("PART", channel) }

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

// Registered reports whether the bot is on the network and serving.
func (c *Conn) Registered() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.registered
}

// Reconnects counts connections after the first.
func (c *Conn) Reconnects() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reconnects
}

// QueuedEvents is the number of events waiting for the consumer.
func (c *Conn) QueuedEvents() int { return len(c.events) }

// DroppedEvents counts events dropped because the queue was full.
func (c *Conn) DroppedEvents() uint64 { return c.dropped.Load() }

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
// Pacer.Run). Each line is built and checked as irc-go would.
func (c *Conn) sendNotices(target string, lines []string) error {
	irc := c.current()
	if irc == nil {
		return errOffline
	}
	var buf []byte
	for _, l := range lines {
		m := ircmsg.MakeMessage(nil, "", "NOTICE", target, l)
		b, err := m.LineBytesStrict(true, 512)
		if err != nil {
			c.log.Error().Err(err).Str("target", target).Msg("reply line refused; dropped")
			continue
		}
		buf = append(buf, b...)
	}
	if len(buf) == 0 {
		return nil
	}
	return irc.SendRaw(string(bytes.TrimSuffix(buf, []byte("\r\n"))))
}

// Run keeps the bot connected until ctx ends, then quits with message.
func (c *Conn) Run(ctx context.Context, quitMessage string) error {
	go c.pacer.Run(ctx)
	backoff := Backoff{Min: c.cfg.BackoffMin, Max: c.cfg.BackoffMax}
	for first := true; ; first = false {
		if !first {
			c.mu.Lock()
			c.reconnects++
			c.mu.Unlock()
		}
		started := time.Now()
		err := c.session(ctx, quitMessage)
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(started) > time.Minute {
			backoff.Reset() // it worked for a while: start over
		}
		delay := backoff.Next()
		c.mu.Lock()
		c.lastFailure = fmt.Sprint(err)
		c.mu.Unlock()
		c.log.Warn().Err(err).Dur("retry_in", delay).Msg("IRC connection lost")
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
	}
}

// session runs one connection from dial to loss.
func (c *Conn) session(ctx context.Context, quitMessage string) error {
	tlsConfig, err := c.tlsConfig()
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var socket net.Conn
	dialer := &net.Dialer{Timeout: 15 * time.Second}
	irc := &ircevent.Connection{
		Server: c.cfg.Server, Nick: c.cfg.Nick, User: "pircan", RealName: "PIRCAN agent directory",
		UseTLS: c.cfg.TLS, TLSConfig: tlsConfig, RequestCaps: wantedCaps,
		SASLLogin: c.cfg.SASLAccount, SASLPassword: c.cfg.SASLPassword,
		QuitMessage: quitMessage, Timeout: 30 * time.Second, KeepAlive: 90 * time.Second,
		// never Debug: it would log the SASL password
		Log: log.New(logWriter{c.log}, "", 0),
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			s, err := dialer.DialContext(ctx, network, addr)
			mu.Lock()
			socket = s
			mu.Unlock()
			return s, err
		},
	}
	lost := make(chan struct{})
	var lostOnce sync.Once
	markLost := func() { lostOnce.Do(func() { close(lost) }) }
	c.addCallbacks(irc)
	irc.AddDisconnectCallback(func(ircmsg.Message) { markLost() })
	ready := make(chan error, 1)
	irc.AddConnectCallback(func(ircmsg.Message) { ready <- c.onRegistered(irc) })

	if c.cfg.Insecure && c.cfg.TLS {
		c.log.Warn().Msg("TLS certificate verification is OFF (PIRCAN_IRC_INSECURE): anyone on the path can impersonate the IRC server")
	}
	if err := irc.Connect(); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() {
		c.setOnline(nil)
		mu.Lock()
		if socket != nil {
			socket.Close()
		}
		mu.Unlock()
	}()
	select {
	case err := <-ready:
		if err != nil {
			irc.Quit()
			return err
		}
	case <-time.After(60 * time.Second):
		irc.Quit()
		return errors.New("no end of MOTD within 60 s")
	case <-ctx.Done():
		irc.Quit()
		return nil
	}
	c.setOnline(irc)
	c.log.Info().Str("server", c.cfg.Server).Str("nick", irc.CurrentNick()).Msg("connected to IRC")
	c.emit(Event{Kind: Connected})
	// Wait for loss; poll too, since irc-go reports loss by callback only
	// for a connection it considers registered.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-lost:
			return errors.New("disconnected")
		case <-tick.C:
			if !irc.Connected() {
				return errors.New("disconnected")
			}
		case <-ctx.Done():
			c.quit(irc)
			return nil
		}
	}
}

// quit sends QUIT and waits briefly for the server to close the link.
func (c *Conn) quit(irc *ircevent.Connection) {
	c.quitting.Store(true)
	irc.Quit()
	deadline := time.Now().Add(3 * time.Second)
	for irc.Connected() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
}

// Flush waits until the output queue is empty or d has passed.
func (c *Conn) Flush(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if q, _ := c.pacer.Stats(); q == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *Conn) setOnline(irc *ircevent.Connection) {
	c.mu.Lock()
	c.irc = irc
	c.registered = irc != nil
	if irc == nil {
		c.channels = map[string]bool{}
	}
	c.mu.Unlock()
	if irc == nil {
		c.presence.Clear() // no one seen on the lost connection is known to hold a nick now
	}
	c.pacer.SetOnline(irc != nil)
}

// onRegistered runs on irc-go's read goroutine at the end of MOTD: check the
// grants, then bot mode, oper and the lobby. It only sends.
func (c *Conn) onRegistered(irc *ircevent.Connection) error {
	c.setCasemap(irc.ISupport())
	if c.fold(irc.CurrentNick()) != c.fold(c.cfg.Nick) {
		// irc-go took an alternative nick: another PIRCAN (a leader that
		// has not quit yet) holds ours. Agents talk to the nick, so wait.
		c.log.Warn().Str("nick", c.cfg.Nick).Msg("nick in use; retrying")
		return errors.New("nick " + c.cfg.Nick + " in use")
	}
	caps := irc.AcknowledgedCaps()
	if _, ok := caps["account-tag"]; !ok {
		c.log.Error().Msg("the IRC server did not grant the account-tag capability: PIRCAN cannot tell who is speaking and refuses to serve; enable account-tag (IRCv3) on the server")
		return errors.New("account-tag not granted")
	}
	irc.Send("MODE", irc.CurrentNick(), "+B")
	if c.cfg.OperName != "" {
		irc.Send("OPER", c.cfg.OperName, c.cfg.OperPassword)
	}
	if c.cfg.Lobby != "" {
		irc.Send("JOIN", c.cfg.Lobby)
	}
	return nil
}

func (c *Conn) emit(e Event) {
	c.track(&e)
	e.Received = time.Now()
	if e.At.IsZero() {
		e.At = e.Received
	}
	select {
	case c.events <- e:
	default:
		c.dropped.Add(1)
		c.log.Warn().Int("kind", int(e.Kind)).Str("nick", e.Sender.Nick).Msg("event queue full; dropped")
	}
}

// addCallbacks turns server lines into Events. They run on irc-go's read
// goroutine, so they only parse and enqueue.
func (c *Conn) addCallbacks(irc *ircevent.Connection) {
	self := func(nick string) bool { return c.fold(nick) == c.fold(irc.CurrentNick()) }
	irc.AddCallback("PRIVMSG", func(m ircmsg.Message) {
		if len(m.Params) < 2 || self(m.Nick()) {
			return
		}
		sender := pircan.Sender{Account: accountTag(m), Nick: m.Nick()}
		text := m.Params[1]
		if strings.HasPrefix(m.Params[0], "#") || strings.HasPrefix(m.Params[0], "&") {
			c.emit(Event{Kind: Spoke, Sender: sender, Channel: m.Params[0], At: serverTime(m)})
			return
		}
		if strings.HasPrefix(text, "\x01") {
			return // CTCP: ignored, never answered
		}
		c.emit(Event{Kind: Request, Sender: sender, Text: text, At: serverTime(m)})
	})
	irc.AddCallback("JOIN", func(m ircmsg.Message) {
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
		c.emit(Event{Kind: Joined, Sender: pircan.Sender{Account: account, Nick: m.Nick()}, Channel: m.Params[0]})
	})
	irc.AddCallback("NICK", func(m ircmsg.Message) {
		if len(m.Params) < 1 || self(m.Params[0]) {
			return
		}
		c.emit(Event{Kind: NickChanged, Sender: pircan.Sender{Account: accountTag(m), Nick: m.Nick()}, Text: m.Params[0]})
	})
	irc.AddCallback("PART", func(m ircmsg.Message) {
		if len(m.Params) >= 1 && self(m.Nick()) {
			c.setInChannel(m.Params[0], false)
		}
	})
	irc.AddCallback("KICK", func(m ircmsg.Message) {
		if len(m.Params) >= 2 && self(m.Params[1]) {
			c.setInChannel(m.Params[0], false)
			c.log.Warn().Str("channel", m.Params[0]).Str("by", m.Nick()).Msg("kicked")
		}
	})
	irc.AddCallback("QUIT", func(m ircmsg.Message) {
		c.emit(Event{Kind: Quit, Sender: pircan.Sender{Nick: m.Nick()}})
	})
	irc.AddCallback("ACCOUNT", func(m ircmsg.Message) {
		if len(m.Params) < 1 {
			return
		}
		account := m.Params[0]
		if account == "*" {
			account = ""
		}
		c.emit(Event{Kind: AccountChanged, Sender: pircan.Sender{Account: account, Nick: m.Nick()}})
	})
	irc.AddCallback("ERROR", func(m ircmsg.Message) {
		if c.quitting.Load() {
			c.log.Info().Strs("params", m.Params).Msg("left IRC")
			return
		}
		c.log.Warn().Strs("params", m.Params).Msg("server ERROR")
	})
	c.monitorCallbacks(func(code string, f func(ircmsg.Message)) { irc.AddCallback(code, f) })
	irc.AddCallback("354", c.whoReply)
	irc.AddCallback("315", c.whoEnd)
	irc.AddCallback("491", func(m ircmsg.Message) { c.log.Warn().Msg("OPER refused: no fake-lag exemption for the bot") })
	irc.AddCallback("381", func(m ircmsg.Message) { c.log.Info().Msg("OPER granted") })
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

// logWriter routes irc-go's own log lines into zerolog.
type logWriter struct{ l zerolog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.l.Debug().Str("component", "irc-go").Msg(strings.TrimSpace(string(p)))
	return len(p), nil
}
