package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ergochat/irc-go/ircevent"
	"github.com/ergochat/irc-go/ircmsg"
	"github.com/ergochat/irc-go/ircutils"

	"github.com/creatimus/pircan/pircan"
)

// PIRCAN drives CAP, SASL and the checks of its own identity itself rather
// than through irc-go, which stops its CAP timer at the first reply, takes
// 907 for a success and logs nothing on the way. irc-go still reads,
// writes and dispatches lines; it is given no caps to request and no SASL
// credentials, so its own negotiation stays idle.

const (
	// QuitWait bounds the wait for the server to close the link after QUIT
	// (Run's return after its context ends).
	QuitWait = 2 * time.Second
	// renickEvery paces NICK attempts while reclaiming the nick.
	renickEvery = 2 * time.Second
)

// Nick reclaim methods (PIRCAN_NICK_RECLAIM).
const (
	ReclaimRecover = "recover" // Anope: NickServ RECOVER (kills or renames the holder)
	ReclaimRegain  = "regain"  // Atheme: NickServ REGAIN
	ReclaimGhost   = "ghost"   // Ergo: NickServ GHOST (a session of the same account)
	ReclaimNone    = "none"
)

// Check reports a configuration PIRCAN cannot serve with; nothing is sent
// to the server before it passes. (DESIGN.md: without its own account PIRCAN
// does not serve.)
func (c Config) Check() error {
	if strings.TrimSpace(c.SASLAccount) == "" {
		return errors.New("PIRCAN_SASL_ACCOUNT (--sasl-account) is not set: PIRCAN logs in to its own services account with SASL PLAIN and does not serve without it")
	}
	if c.SASLPassword == "" {
		return errors.New("PIRCAN_SASL_PASSWORD (--sasl-password) is not set: PIRCAN logs in to its own services account with SASL PLAIN and does not serve without it")
	}
	switch c.NickReclaim {
	case "", ReclaimRecover, ReclaimRegain, ReclaimGhost, ReclaimNone:
	default:
		return fmt.Errorf("PIRCAN_NICK_RECLAIM (--nick-reclaim): %q is not recover, regain, ghost or none", c.NickReclaim)
	}
	return nil
}

// refusal is a reason PIRCAN will not serve on this connection; its text
// goes into the log and the QUIT.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

func refuse(format string, args ...any) error { return &refusal{fmt.Sprintf(format, args...)} }

// link is one connection's registration and identity state. Callbacks run
// on irc-go's read goroutine; the session goroutine waits on the channels.
type link struct {
	c   *Conn
	irc *ircevent.Connection
	ctx context.Context // ends with the session

	mu       sync.Mutex
	socket   net.Conn
	stage    string
	deadline time.Time // of the current stage
	offered  map[string]string
	pending  map[string]bool // CAP REQs not yet answered
	acked    map[string]bool
	account  string // from 900
	loggedIn bool   // 903 after a 900 for our own account
	nickLost bool   // the server answered 433 for our nick

	progress   chan struct{} // a stage began (new deadline)
	registered chan struct{} // end of MOTD
	reclaimed  chan struct{} // our nick is ours again
	lost       chan struct{} // the socket failed or closed
	failed     chan struct{}
	failure    error
	lostOnce   sync.Once
	failOnce   sync.Once
	reclaimOne sync.Once

	lastRead atomic.Int64 // unix nanoseconds of the last byte read
	quitting atomic.Bool

	cbMu  sync.RWMutex
	ended bool // the session is over: callbacks do nothing
}

// guardedIRC registers callbacks that run only while the connection's
// session lasts: irc-go may still be reading after the session returned.
type guardedIRC struct {
	*ircevent.Connection
	l *link
}

func (g guardedIRC) AddCallback(code string, fn func(ircmsg.Message)) ircevent.CallbackID {
	return g.Connection.AddCallback(code, g.l.guard(fn))
}

func (l *link) guard(fn func(ircmsg.Message)) func(ircmsg.Message) {
	return func(m ircmsg.Message) {
		l.cbMu.RLock()
		defer l.cbMu.RUnlock()
		if !l.ended {
			fn(m)
		}
	}
}

// end waits for a callback under way and stops any later one.
func (l *link) end() {
	l.cbMu.Lock()
	l.ended = true
	l.cbMu.Unlock()
}

func newLink(c *Conn) *link {
	return &link{c: c, offered: map[string]string{}, pending: map[string]bool{}, acked: map[string]bool{},
		progress: make(chan struct{}, 1), registered: make(chan struct{}), reclaimed: make(chan struct{}),
		lost: make(chan struct{}), failed: make(chan struct{})}
}

// enter starts a stage with its own deadline.
func (l *link) enter(stage string) {
	l.mu.Lock()
	l.stage, l.deadline = stage, time.Now().Add(l.c.cfg.StageTimeout)
	l.mu.Unlock()
	select {
	case l.progress <- struct{}{}:
	default:
	}
}

func (l *link) current() (string, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stage, l.deadline
}

// fail ends this connection for err: serving stops at once (readiness
// follows), and the session goroutine quits with the reason.
func (l *link) fail(err error) {
	l.failOnce.Do(func() {
		l.c.stopServing(l.irc)
		l.c.mu.Lock()
		l.c.lastFailure = err.Error() // /readyz says why at once
		l.c.mu.Unlock()
		l.failure = err
		close(l.failed)
	})
}

func (l *link) markLost() { l.lostOnce.Do(func() { close(l.lost) }) }

// drained runs after the socket failed: it lets irc-go's read loop finish
// the lines read before (a last ERROR says why, and may be a flood kill),
// then returns the failure they recorded, if any. irc-go marks itself
// stopped only once that loop has taken the read error.
func (l *link) drained() error {
	for deadline := time.Now().Add(time.Second); l.irc.Connected() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case <-l.failed:
		return l.failure
	default:
		return nil
	}
}

// dial opens the socket (TLS done here, not by irc-go) and writes CAP LS
// first, so the server holds registration until CAP END whatever irc-go
// sends next.
func (l *link) dial(_ context.Context, network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(l.ctx, l.c.cfg.StageTimeout)
	defer cancel()
	l.enter("connect")
	raw, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	var s net.Conn = raw
	if l.c.cfg.TLS {
		cfg, err := l.c.tlsConfig()
		if err != nil {
			raw.Close()
			return nil, err
		}
		t := tls.Client(raw, cfg)
		if err := t.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, fmt.Errorf("TLS: %w", err)
		}
		s = t
	}
	w := &watchedConn{Conn: s, l: l}
	if tc, ok := raw.(*net.TCPConn); ok {
		if rc, err := tc.SyscallConn(); err == nil {
			w.tcp = rc
		}
	}
	l.lastRead.Store(time.Now().UnixNano())
	l.mu.Lock()
	l.socket = w
	l.mu.Unlock()
	if l.ctx.Err() != nil { // the session ended meanwhile
		w.Close()
		return nil, l.ctx.Err()
	}
	l.enter("CAP LS")
	if _, err := s.Write([]byte("CAP LS 302\r\n")); err != nil {
		s.Close()
		return nil, err
	}
	return w, nil
}

// writeSocket writes one line on the socket directly (one Write: lines of
// another writer never interleave with it); false without a socket.
func (l *link) writeSocket(line string) bool {
	l.mu.Lock()
	s := l.socket
	l.mu.Unlock()
	if s == nil {
		return false
	}
	_, err := s.Write([]byte(line + "\r\n"))
	return err == nil
}

func (l *link) closeSocket() {
	l.mu.Lock()
	s := l.socket
	l.mu.Unlock()
	if s != nil {
		s.Close()
	}
}

// watchedConn notes when bytes arrive (liveness) and when the socket fails,
// and acknowledges what arrives at once (quickAck).
type watchedConn struct {
	net.Conn
	l   *link
	tcp syscall.RawConn // nil: not TCP
}

func (w *watchedConn) Read(p []byte) (int, error) {
	if w.tcp != nil {
		quickAck(w.tcp)
	}
	n, err := w.Conn.Read(p)
	if n > 0 {
		w.l.lastRead.Store(time.Now().UnixNano())
	}
	if err != nil {
		w.l.markLost()
	}
	return n, err
}

// addRegistration installs the callbacks of CAP, SASL and identity.
func (l *link) addRegistration(irc guardedIRC) {
	cfg := l.c.cfg
	irc.AddCallback("CAP", l.onCAP)
	irc.AddCallback("AUTHENTICATE", func(m ircmsg.Message) {
		if len(m.Params) < 1 || m.Params[0] != "+" {
			return
		}
		plain := cfg.SASLAccount + "\x00" + cfg.SASLAccount + "\x00" + cfg.SASLPassword
		for _, chunk := range ircutils.EncodeSASLResponse([]byte(plain)) {
			irc.Send("AUTHENTICATE", chunk)
		}
	})
	irc.AddCallback("900", func(m ircmsg.Message) { // RPL_LOGGEDIN me mask account :text
		if len(m.Params) < 3 {
			return
		}
		account := m.Params[2]
		l.mu.Lock()
		l.account = account
		stage := l.stage
		l.mu.Unlock()
		if stage == "serving" && !l.ownAccount(account) {
			l.fail(refuse("logged in to account %q, not PIRCAN's own %q", account, cfg.SASLAccount))
		}
	})
	irc.AddCallback("903", func(ircmsg.Message) { // RPL_SASLSUCCESS
		l.mu.Lock()
		account := l.account
		l.mu.Unlock()
		switch {
		case account == "":
			l.fail(refuse("SASL: the server said 903 (success) without 900 (logged in): no account to serve as"))
		case !l.ownAccount(account):
			l.fail(refuse("SASL logged in to account %q, not %q (PIRCAN_SASL_ACCOUNT)", account, cfg.SASLAccount))
		default:
			l.mu.Lock()
			l.loggedIn = true
			l.mu.Unlock()
			l.enter("welcome")
			irc.Send("CAP", "END")
		}
	})
	saslFailed := func(m ircmsg.Message) {
		l.fail(refuse("SASL PLAIN as %q refused (%s %s): check PIRCAN_SASL_ACCOUNT and PIRCAN_SASL_PASSWORD",
			cfg.SASLAccount, m.Command, lastParam(m)))
	}
	for _, code := range []string{"902", "904", "905", "906"} {
		irc.AddCallback(code, saslFailed)
	}
	irc.AddCallback("907", func(m ircmsg.Message) {
		// Already authenticated, but not by this exchange: to which account
		// is unknown, so it is no success.
		l.fail(refuse("SASL: the server said 907 (already authenticated) instead of 903: not taken for a login"))
	})
	irc.AddCallback("901", func(m ircmsg.Message) { // RPL_LOGGEDOUT
		l.fail(refuse("logged out of services account %q (901)", cfg.SASLAccount))
	})
	irc.AddCallback("433", func(m ircmsg.Message) {
		if len(m.Params) >= 2 && l.c.fold(m.Params[1]) == l.c.fold(cfg.Nick) {
			l.mu.Lock()
			l.nickLost = true
			l.mu.Unlock()
		}
	})
	irc.AddCallback("001", func(m ircmsg.Message) {
		if len(m.Params) < 1 {
			return
		}
		l.enter("MOTD")
	})
	// After irc-go's own end-of-registration handler (it prepends its own).
	irc.AddConnectCallback(l.guard(func(ircmsg.Message) {
		// ISUPPORT is complete by the end of MOTD: nicks compare by it from here on.
		l.c.setCasemap(irc.ISupport())
		select {
		case <-l.registered:
		default:
			close(l.registered)
		}
	}))
}

func (l *link) ownAccount(account string) bool {
	return account != "" && account != "*" && pircan.FoldAccount(account) == pircan.FoldAccount(l.c.cfg.SASLAccount)
}

func lastParam(m ircmsg.Message) string {
	if len(m.Params) == 0 {
		return ""
	}
	return m.Params[len(m.Params)-1]
}

// onCAP handles LS (multi-line), ACK/NAK, and NEW/DEL (cap-notify).
func (l *link) onCAP(m ircmsg.Message) {
	if len(m.Params) < 3 {
		return
	}
	sub, list := m.Params[1], m.Params[len(m.Params)-1]
	switch sub {
	case "LS":
		more := len(m.Params) > 3 && m.Params[2] == "*"
		l.mu.Lock()
		for _, tok := range strings.Fields(list) {
			name, value, _ := strings.Cut(tok, "=")
			l.offered[name] = value
		}
		l.mu.Unlock()
		if !more {
			l.offeredAll()
		}
	case "ACK", "NAK":
		l.mu.Lock()
		for _, tok := range strings.Fields(list) {
			name := strings.TrimPrefix(tok, "-")
			delete(l.pending, name)
			if sub == "ACK" && !strings.HasPrefix(tok, "-") {
				l.acked[name] = true
			}
		}
		done := len(l.pending) == 0
		stage := l.stage
		l.mu.Unlock()
		if done && stage == "CAP REQ" {
			l.capsAnswered()
		}
	case "NEW":
		l.mu.Lock()
		var want []string
		for _, tok := range strings.Fields(list) {
			name, value, _ := strings.Cut(tok, "=")
			l.offered[name] = value
			if wanted(name) && !l.acked[name] {
				want = append(want, name)
			}
		}
		l.mu.Unlock()
		for _, name := range want {
			l.c.log.Info().Str("cap", name).Msg("the server offers a capability anew (CAP NEW): requesting it")
			l.irc.Send("CAP", "REQ", name)
		}
	case "DEL":
		l.mu.Lock()
		gone := false
		for _, tok := range strings.Fields(list) {
			delete(l.acked, tok)
			delete(l.offered, tok)
			gone = gone || tok == "account-tag"
		}
		l.mu.Unlock()
		if gone {
			l.fail(refuse("the server withdrew the account-tag capability (CAP DEL): PIRCAN cannot tell who is speaking"))
		}
	}
}

func wanted(name string) bool {
	for _, w := range wantedCaps {
		if w == name {
			return true
		}
	}
	return false
}

// offeredAll runs at the end of CAP LS: request what PIRCAN uses, or refuse.
func (l *link) offeredAll() {
	l.mu.Lock()
	_, tag := l.offered["account-tag"]
	mechs, sasl := l.offered["sasl"]
	var req []string
	for _, name := range append(wantedCaps[:len(wantedCaps):len(wantedCaps)], "sasl") {
		if _, ok := l.offered[name]; ok {
			req = append(req, name)
			l.pending[name] = true
		}
	}
	l.mu.Unlock()
	switch {
	case !tag:
		l.fail(refuse("the IRC server does not offer the account-tag capability: PIRCAN cannot tell who is speaking and refuses to serve; enable account-tag (IRCv3) on the server"))
		return
	case !sasl:
		l.fail(refuse("the IRC server does not offer SASL: PIRCAN cannot log in to its own account; enable SASL (services) on the server"))
		return
	case mechs != "" && !hasToken(mechs, "PLAIN"):
		l.fail(refuse("the IRC server offers SASL %s but not PLAIN", mechs))
		return
	}
	l.enter("CAP REQ")
	for _, name := range req {
		l.irc.Send("CAP", "REQ", name)
	}
}

func hasToken(list, tok string) bool {
	for _, t := range strings.Split(list, ",") {
		if strings.EqualFold(t, tok) {
			return true
		}
	}
	return false
}

// capsAnswered runs when every CAP REQ has its ACK or NAK: then SASL.
func (l *link) capsAnswered() {
	l.mu.Lock()
	tag, sasl := l.acked["account-tag"], l.acked["sasl"]
	l.mu.Unlock()
	switch {
	case !tag:
		l.fail(refuse("the IRC server did not grant the account-tag capability: PIRCAN cannot tell who is speaking and refuses to serve; enable account-tag (IRCv3) on the server"))
	case !sasl:
		l.fail(refuse("the IRC server did not grant the sasl capability: PIRCAN cannot log in to its own account"))
	default:
		l.enter("SASL")
		l.irc.Send("AUTHENTICATE", "PLAIN")
	}
}

// awaitRegistration waits for the end of MOTD, a refusal, loss, a stage
// past its deadline, the whole registration past RegisterTimeout, or ctx.
func (l *link) awaitRegistration(ctx context.Context, connectErr <-chan error, started time.Time) error {
	overall := started.Add(l.c.cfg.RegisterTimeout)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		stage, deadline := l.current()
		until := min(time.Until(deadline), time.Until(overall))
		if until <= 0 {
			if time.Now().After(overall) {
				return fmt.Errorf("registration did not finish within %v (at stage %s)", l.c.cfg.RegisterTimeout, stage)
			}
			return fmt.Errorf("no answer from the server within %v at stage %s", l.c.cfg.StageTimeout, stage)
		}
		timer.Reset(until)
		select {
		case <-l.registered:
			return l.complete()
		case <-l.failed:
			return l.failure
		case err := <-connectErr:
			if err == nil {
				<-l.registered // Connect returns after the end of MOTD
				return l.complete()
			}
			select {
			case <-l.failed:
				return l.failure
			default:
			}
			return fmt.Errorf("at stage %s: %w", stage, err)
		case <-l.lost:
			if err := l.drained(); err != nil {
				return err
			}
			return fmt.Errorf("the server closed the connection at stage %s", stage)
		case <-l.progress:
		case <-timer.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// complete checks a finished registration: a server that ignores CAP
// registers the client without SASL or account-tag.
func (l *link) complete() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.loggedIn || !l.acked["account-tag"] {
		return refuse("the server registered PIRCAN without SASL and account-tag (does it support IRCv3 CAP?)")
	}
	return nil
}

// checkNick runs after registration: serve under the configured nick, or
// reclaim it when another client holds it, or refuse when the server
// renamed the bot.
func (l *link) checkNick(ctx context.Context) error {
	cfg := l.c.cfg
	l.mu.Lock()
	nickLost := l.nickLost
	l.mu.Unlock()
	now := l.irc.CurrentNick()
	if l.c.fold(now) == l.c.fold(cfg.Nick) {
		return nil
	}
	if !nickLost {
		return refuse("the server registered PIRCAN as %q, not %q (PIRCAN_NICK); agents address %q. On Ergo, set PIRCAN_NICK to the account name (%q) or turn off accounts.nick-reservation.force-nick-equals-account",
			now, cfg.Nick, cfg.Nick, cfg.SASLAccount)
	}
	if cfg.NickReclaim == ReclaimNone {
		return refuse("nick %q is held by another client and PIRCAN_NICK_RECLAIM=none", cfg.Nick)
	}
	l.c.log.Warn().Str("nick", cfg.Nick).Str("as", l.irc.CurrentNick()).Str("method", cfg.NickReclaim).
		Msg("another client holds PIRCAN's nick: reclaiming it through NickServ")
	l.enter("reclaim")
	l.irc.Send("PRIVMSG", "NickServ", strings.ToUpper(cfg.NickReclaim)+" "+cfg.Nick)
	deadline := time.NewTimer(cfg.ReclaimTimeout)
	defer deadline.Stop()
	renick := time.NewTicker(renickEvery)
	defer renick.Stop()
	for {
		select {
		case <-l.reclaimed:
			l.c.log.Info().Str("nick", cfg.Nick).Msg("nick reclaimed")
			return nil
		case <-renick.C:
			// Services may only free the nick (a hold released, a ghost
			// killed) without moving PIRCAN onto it.
			l.irc.Send("NICK", cfg.Nick)
		case <-deadline.C:
			return refuse("nick %q is held by another client and was not reclaimed within %v (NickServ %s)",
				cfg.Nick, cfg.ReclaimTimeout, strings.ToUpper(cfg.NickReclaim))
		case <-l.failed:
			return l.failure
		case <-l.lost:
			return errors.New("the server closed the connection while PIRCAN reclaimed its nick")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ownNick runs when the server says the bot's nick changed.
func (l *link) ownNick(now string) {
	stage, _ := l.current()
	mine := l.c.fold(now) == l.c.fold(l.c.cfg.Nick)
	switch {
	case mine && stage == "reclaim":
		l.reclaimOne.Do(func() { close(l.reclaimed) })
	case !mine && stage == "serving":
		l.fail(refuse("the server changed PIRCAN's nick from %q to %q", l.c.cfg.Nick, now))
	}
}

// ownAccountChanged runs on ACCOUNT for the bot itself.
func (l *link) ownAccountChanged(account string) {
	if !l.ownAccount(account) {
		if account == "*" || account == "" {
			l.fail(refuse("logged out of services account %q (ACCOUNT *)", l.c.cfg.SASLAccount))
			return
		}
		l.fail(refuse("now logged in to account %q, not PIRCAN's own %q", account, l.c.cfg.SASLAccount))
	}
}

// livenessCheck is how often watchLiveness looks: each of its two bounds
// is seen at most one check late.
func livenessCheck(idle, answer time.Duration) time.Duration { return min(idle, answer) / 10 }

// watchLiveness sends PIRCAN's own PING after PingIdle of silence; a PING
// with no line back within PingTimeout ends serving at once, then the link.
func (l *link) watchLiveness(ctx context.Context) {
	idle, answer := l.c.cfg.PingIdle, l.c.cfg.PingTimeout
	tick := time.NewTicker(livenessCheck(idle, answer))
	defer tick.Stop()
	var pingAt time.Time
	for seq := 1; ; {
		select {
		case <-ctx.Done():
			return
		case <-l.failed:
			return
		case <-l.lost:
			return
		case now := <-tick.C:
			last := time.Unix(0, l.lastRead.Load())
			switch {
			case !pingAt.IsZero() && last.After(pingAt):
				pingAt = time.Time{}
			case !pingAt.IsZero() && now.Sub(pingAt) > answer:
				l.fail(fmt.Errorf("the server did not answer PIRCAN's PING within %v", answer))
				return
			case pingAt.IsZero() && now.Sub(last) > idle:
				pingAt = now
				l.irc.Send("PING", fmt.Sprintf("pircan-%d", seq))
				seq++
			}
		}
	}
}
