package ircnet

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ergochat/irc-go/ircmsg"
)

// WantedCaps are requested by Dial when the server offers them: what a test
// needs to see who (which account) sent a message, and when.
var WantedCaps = []string{"message-tags", "server-time", "account-tag", "extended-join", "account-notify"}

// Client is a real IRC client (TLS) for tests. Its reader goroutine answers
// PING and buffers every other message for Expect. All methods are safe for
// concurrent use (typically: one test goroutine plus the reader).
type Client struct {
	conn net.Conn
	wmu  sync.Mutex // writes come from the caller and from the reader (PONG)

	mu    sync.Mutex
	nick  string
	acct  string          // account we are logged in to (900/901), "" if none
	caps  map[string]bool // acknowledged capabilities
	buf   []received      // not yet consumed by Expect, in arrival order
	cuts  uint64          // count of removals from buf, so waiters know when to rescan
	wake  chan struct{}   // closed (and replaced) whenever buf grows or err is set
	err   error           // why the reader stopped; nil while it runs
	done  chan struct{}   // closed when the reader has stopped
	trace bool

	closeOnce sync.Once
}

type received struct {
	msg ircmsg.Message
	raw string
}

// errClosed is reported by Expect once the connection is gone and nothing
// buffered matches.
var errClosed = errors.New("connection closed")

// Dial connects over TLS, negotiates the WantedCaps the server offers,
// registers as nick and waits for 001; the welcome burst is discarded.
// InspIRCd completes registrations only on its one-second tick, so a Dial
// takes up to ~1 s (~0.6 s on average): dial many clients in parallel.
func (n *Network) Dial(ctx context.Context, nick string) (*Client, error) {
	d := tls.Dialer{Config: n.TLSConfig()}
	conn, err := d.DialContext(ctx, "tcp", n.TLSAddr())
	if err != nil {
		return nil, fmt.Errorf("ircnet: dial %s: %w", nick, err)
	}
	c := &Client{
		conn:  conn,
		nick:  nick,
		caps:  map[string]bool{},
		wake:  make(chan struct{}),
		done:  make(chan struct{}),
		trace: os.Getenv("IRCNET_TRACE") != "",
	}
	go c.read()
	if err := c.register(ctx, nick); err != nil {
		c.conn.Close()
		<-c.done
		return nil, fmt.Errorf("ircnet: register %s: %w", nick, err)
	}
	return c, nil
}

func (c *Client) register(ctx context.Context, nick string) error {
	user := nick
	if len(user) > 10 { // USERLEN; the server would truncate it anyway
		user = user[:10]
	}
	if err := c.Raw("CAP LS 302\r\nNICK " + nick + "\r\nUSER " + user + " 0 * :ircnet test client"); err != nil {
		return err
	}
	offered := map[string]bool{}
	for { // CAP LS may span several lines: "CAP * LS * :…" until "CAP * LS :…"
		m, err := c.Expect(ctx, func(m ircmsg.Message) bool { return isCap(m, "LS") || isRegError(m) })
		if err != nil {
			return err
		}
		if m.Command != "CAP" {
			return fmt.Errorf("%s", describe(m))
		}
		for _, cp := range strings.Fields(m.Params[len(m.Params)-1]) {
			name, _, _ := strings.Cut(cp, "=")
			offered[name] = true
		}
		if len(m.Params) < 4 || m.Params[2] != "*" {
			break
		}
	}
	var want []string
	for _, cp := range WantedCaps {
		if offered[cp] {
			want = append(want, cp)
		}
	}
	if len(want) > 0 {
		if err := c.Raw("CAP REQ :" + strings.Join(want, " ")); err != nil {
			return err
		}
		m, err := c.Expect(ctx, func(m ircmsg.Message) bool { return isCap(m, "ACK") || isCap(m, "NAK") })
		if err != nil {
			return err
		}
		if m.Params[1] == "NAK" {
			return fmt.Errorf("CAP REQ refused: %s", describe(m))
		}
		c.mu.Lock()
		for _, cp := range strings.Fields(m.Params[len(m.Params)-1]) {
			c.caps[cp] = true
		}
		c.mu.Unlock()
	}
	if err := c.Raw("CAP END"); err != nil {
		return err
	}

	// InspIRCd finishes registrations in its once-a-second housekeeping,
	// which runs on the first event-loop wake-up after a second boundary; an
	// idle loop sleeps up to 1 s more. Poking it (as start.sh's probe does)
	// brings 001 right after the boundary: ~0.6 s on average instead of ~1 s.
	// The answers (451 "not registered") are discarded with the burst.
	pokeCtx, stopPoke := context.WithCancel(ctx)
	poked := make(chan struct{})
	go func() {
		defer close(poked)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-pokeCtx.Done():
				return
			case <-t.C:
				_ = c.Raw("PING :wake")
			}
		}
	}()
	m, err := c.Expect(ctx, func(m ircmsg.Message) bool { return m.Command == "001" || isRegError(m) })
	stopPoke()
	<-poked
	if err != nil {
		return err
	}
	if m.Command != "001" {
		return fmt.Errorf("%s", describe(m))
	}
	// The server sends the whole welcome burst (numerics, MOTD, notices) at
	// registration, so once it answers this PING, all of it and every answer
	// to the pokes is here: drop it, so tests see only what follows Dial.
	if err := c.Raw("PING :ircnet-sync"); err != nil {
		return err
	}
	if _, err := c.Expect(ctx, func(m ircmsg.Message) bool {
		return m.Command == "PONG" && len(m.Params) > 0 && m.Params[len(m.Params)-1] == "ircnet-sync"
	}); err != nil {
		return err
	}
	c.mu.Lock()
	c.buf = nil
	c.cuts++
	c.mu.Unlock()
	return nil
}

func isCap(m ircmsg.Message, sub string) bool {
	return m.Command == "CAP" && len(m.Params) >= 3 && m.Params[1] == sub
}

// isRegError matches what can end a registration attempt.
func isRegError(m ircmsg.Message) bool {
	switch m.Command {
	case "ERROR", "432", "433", "436", "437", "465":
		return true
	}
	return false
}

func (c *Client) read() {
	defer close(c.done)
	r := bufio.NewReaderSize(c.conn, 64<<10)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			c.mu.Lock()
			c.err = err
			c.notify()
			c.mu.Unlock()
			return
		}
		line = strings.TrimRight(line, "\r\n")
		if c.trace {
			fmt.Fprintf(os.Stderr, "ircnet [%s] << %s\n", c.Nick(), line)
		}
		m, err := ircmsg.ParseLine(line)
		if err != nil {
			continue // empty or malformed: nothing a test could match on
		}
		if m.Command == "PING" {
			_ = c.Raw("PONG :" + strings.Join(m.Params, " "))
			continue
		}
		c.mu.Lock()
		switch {
		case m.Command == "NICK" && len(m.Params) > 0 && strings.EqualFold(m.Nick(), c.nick):
			c.nick = m.Params[0] // our own nick changed (by us or by services)
		case m.Command == "900" && len(m.Params) > 2: // RPL_LOGGEDIN
			c.acct = m.Params[2]
		case m.Command == "901": // RPL_LOGGEDOUT
			c.acct = ""
		}
		c.buf = append(c.buf, received{m, line})
		c.notify()
		c.mu.Unlock()
	}
}

// notify wakes every waiting Expect; c.mu must be held.
func (c *Client) notify() {
	close(c.wake)
	c.wake = make(chan struct{})
}

// Expect returns the first buffered or future message (in arrival order)
// for which match returns true and removes it from the buffer; messages that
// do not match stay buffered for later calls. match runs with the client's
// lock held: it must not call the client's methods.
func (c *Client) Expect(ctx context.Context, match func(ircmsg.Message) bool) (ircmsg.Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Only the reader appends; anything else that removes entries bumps
	// cuts, and only then must the scan start over.
	seen, cuts := 0, c.cuts
	for {
		if cuts != c.cuts {
			seen, cuts = 0, c.cuts
		}
		for i := seen; i < len(c.buf); i++ {
			if match(c.buf[i].msg) {
				m := c.buf[i].msg
				c.buf = append(c.buf[:i], c.buf[i+1:]...)
				c.cuts++
				return m, nil
			}
		}
		seen = len(c.buf)
		if c.err != nil {
			return ircmsg.Message{}, c.failure(errClosed)
		}
		wake := c.wake
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			c.mu.Lock()
			return ircmsg.Message{}, c.failure(ctx.Err())
		case <-wake:
		}
		c.mu.Lock()
	}
}

// ExpectNone fails if a message matching match is buffered or arrives within
// d (or if the connection drops, since then nothing could be observed). It
// consumes nothing.
func (c *Client) ExpectNone(d time.Duration, match func(ircmsg.Message) bool) error {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	seen, cuts := 0, c.cuts
	for {
		if cuts != c.cuts {
			seen, cuts = 0, c.cuts
		}
		for ; seen < len(c.buf); seen++ {
			if match(c.buf[seen].msg) {
				return fmt.Errorf("ircnet [%s]: unexpected message: %s", c.nick, c.buf[seen].raw)
			}
		}
		if c.err != nil {
			return c.failure(errClosed)
		}
		wake := c.wake
		c.mu.Unlock()
		select {
		case <-deadline.C:
			c.mu.Lock()
			return nil
		case <-wake:
		}
		c.mu.Lock()
	}
}

// failure decorates err with the client's state and its most recent
// unconsumed lines, which usually say why the expected message never came.
// c.mu must be held.
func (c *Client) failure(err error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "ircnet [%s]: %v", c.nick, err)
	if c.err != nil && !errors.Is(err, errClosed) {
		fmt.Fprintf(&b, " (connection closed: %v)", c.err)
	}
	if len(c.buf) > 0 {
		from := max(0, len(c.buf)-8)
		fmt.Fprintf(&b, "; %d unconsumed messages, the last ones:", len(c.buf))
		for _, r := range c.buf[from:] {
			b.WriteString("\n\t" + r.raw)
		}
	}
	return errors.New(b.String())
}

// Drain removes and returns every buffered message (e.g. between the
// rounds of a benchmark, where nobody Expects the bulk of the traffic).
func (c *Client) Drain() []ircmsg.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]ircmsg.Message, len(c.buf))
	for i, r := range c.buf {
		out[i] = r.msg
	}
	c.buf = nil
	c.cuts++
	return out
}

// Raw sends line followed by CRLF. line may itself hold several
// CRLF-separated lines, which then go out in a single write.
func (c *Client) Raw(line string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.trace {
		fmt.Fprintf(os.Stderr, "ircnet [%s] >> %s\n", c.Nick(), line)
	}
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := c.conn.Write([]byte(line + "\r\n"))
	return err
}

// Sync returns once the server has read every line this client sent
// before it: a server reads a client's lines in order, so its answer to a
// PING sent now comes after it took them (and passed on what they said).
func (c *Client) Sync(ctx context.Context) error {
	token := fmt.Sprintf("sync-%d", syncTokens.Add(1))
	if err := c.Raw("PING :" + token); err != nil {
		return err
	}
	_, err := c.Expect(ctx, func(m ircmsg.Message) bool {
		return m.Command == "PONG" && len(m.Params) > 0 && m.Params[len(m.Params)-1] == token
	})
	return err
}

var syncTokens atomic.Uint64

// Privmsg sends PRIVMSG target :text.
func (c *Client) Privmsg(target, text string) error { return c.send("PRIVMSG", target, text) }

// Notice sends NOTICE target :text.
func (c *Client) Notice(target, text string) error { return c.send("NOTICE", target, text) }

func (c *Client) send(cmd, target, text string) error {
	if strings.ContainsAny(target+text, "\r\n\x00") || strings.ContainsAny(target, " ") {
		return fmt.Errorf("ircnet: %s: target or text contains a line break, NUL or (target) a space", cmd)
	}
	return c.Raw(cmd + " " + target + " :" + text)
}

// Nick is the client's current nick (kept up to date from the server's NICK
// messages).
func (c *Client) Nick() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nick
}

// Account is the account the client is logged in to ("" if none), as
// announced to it by numerics 900/901 (or, on Ergo, which sends no 900
// after NickServ IDENTIFY, by NickServ's confirmation: see nickServ).
func (c *Client) Account() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.acct
}

// HasCap reports whether the server acknowledged capability name.
func (c *Client) HasCap(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.caps[name]
}

// SetNick changes the nick and waits for the server's NICK echo.
func (c *Client) SetNick(ctx context.Context, nick string) error {
	old := c.Nick()
	if err := c.Raw("NICK " + nick); err != nil {
		return err
	}
	m, err := c.Expect(ctx, func(m ircmsg.Message) bool {
		switch m.Command {
		case "NICK":
			return strings.EqualFold(m.Nick(), old)
		case "431", "432", "433", "435", "436", "437", "438", "447":
			return true
		case "400": // Ergo's force-nick-equals-account: "You must use your account name as your nickname"
			return len(m.Params) > 1 && m.Params[1] == "NICK"
		}
		return false
	})
	if err != nil {
		return err
	}
	if m.Command != "NICK" {
		return fmt.Errorf("ircnet [%s]: NICK %s refused: %s", old, nick, describe(m))
	}
	return nil
}

// Join joins channel and waits for the server's echo of our own JOIN.
func (c *Client) Join(ctx context.Context, channel string) error {
	if err := c.Raw("JOIN " + channel); err != nil {
		return err
	}
	m, err := c.Expect(ctx, func(m ircmsg.Message) bool {
		if len(m.Params) == 0 {
			return false
		}
		switch m.Command {
		case "JOIN": // c.nick directly: match runs under c.mu
			return strings.EqualFold(m.Params[0], channel) && strings.EqualFold(m.Nick(), c.nick)
		case "403", "405", "471", "473", "474", "475", "476", "477", "489":
			return len(m.Params) > 1 && strings.EqualFold(m.Params[1], channel)
		}
		return false
	})
	if err != nil {
		return err
	}
	if m.Command != "JOIN" {
		return fmt.Errorf("ircnet [%s]: JOIN %s refused: %s", c.Nick(), channel, describe(m))
	}
	return nil
}

// Close sends QUIT, gives the server a moment to process it (so others see
// the quit message) and closes the connection. It is safe to call twice.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		_ = c.Raw("QUIT :bye")
		select { // the server answers QUIT with ERROR and hangs up
		case <-c.done:
		case <-time.After(2 * time.Second):
		}
		c.conn.Close()
		<-c.done
	})
	return nil
}

func describe(m ircmsg.Message) string {
	if l, err := m.Line(); err == nil {
		return strings.TrimRight(l, "\r\n")
	}
	return m.Command + " " + strings.Join(m.Params, " ")
}
