package loadgen

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/ergochat/irc-go/ircmsg"
)

// wantedCaps are requested when offered: what the spec recommends to agents.
var wantedCaps = []string{"message-tags", "server-time", "account-tag"}

// client is one IRC connection of the load generator. Unlike the test
// client of internal/ircnet it buffers nothing: after registration every
// line goes to a handler on the reader goroutine, so that replies are
// timed as they arrive and matched by their "re", and it notices when the
// server drops the connection (flood control) and why.
type client struct {
	nick string
	conn net.Conn
	r    *bufio.Reader
	wmu  sync.Mutex

	mu      sync.Mutex
	closing bool   // we are quitting: the server's ERROR and EOF are expected
	gone    string // why the server dropped us ("" while connected, or when we quit)
	done    chan struct{}
}

// dial connects over TLS and registers as nick (CAP negotiation, NICK/USER,
// 001). It returns with the welcome burst read and discarded; the reader
// is not running yet (see start).
func dial(ctx context.Context, addr string, tlsConf *tls.Config, nick string) (*client, error) {
	d := tls.Dialer{Config: tlsConf}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: dial %s: %w", nick, addr, err)
	}
	c := &client{nick: nick, conn: conn, r: bufio.NewReaderSize(conn, 64<<10), done: make(chan struct{})}
	if err := c.register(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%s: register: %w", nick, err)
	}
	return c, nil
}

// next reads one message during the synchronous phase (registration and
// NickServ), answering PINGs; it gives up when ctx ends.
func (c *client) next(ctx context.Context) (ircmsg.Message, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(60 * time.Second)
	}
	_ = c.conn.SetReadDeadline(deadline)
	defer func() { _ = c.conn.SetReadDeadline(time.Time{}) }()
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			return ircmsg.Message{}, err
		}
		m, err := ircmsg.ParseLine(strings.TrimRight(line, "\r\n"))
		if err != nil {
			continue
		}
		switch m.Command {
		case "PING":
			_ = c.raw("PONG :" + strings.Join(m.Params, " "))
			continue
		case "ERROR":
			return m, fmt.Errorf("server closed the link: %s", strings.Join(m.Params, " "))
		}
		return m, nil
	}
}

func (c *client) register(ctx context.Context) error {
	user := c.nick
	if len(user) > 10 {
		user = user[:10]
	}
	if err := c.raw("CAP LS 302\r\nNICK " + c.nick + "\r\nUSER " + user + " 0 * :pircan bench agent"); err != nil {
		return err
	}
	// InspIRCd completes registrations on its one-second tick, and an idle
	// event loop may sleep up to a second past it: poking it brings 001
	// right after the tick (see internal/ircnet). The answers are ignored.
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
				_ = c.raw("PING :wake")
			}
		}
	}()
	defer func() { stopPoke(); <-poked }()

	offered := map[string]bool{}
	capsDone := false
	for {
		m, err := c.next(ctx)
		if err != nil {
			return err
		}
		switch {
		case m.Command == "CAP" && len(m.Params) >= 3 && m.Params[1] == "LS":
			for _, cp := range strings.Fields(m.Params[len(m.Params)-1]) {
				name, _, _ := strings.Cut(cp, "=")
				offered[name] = true
			}
			if len(m.Params) >= 4 && m.Params[2] == "*" {
				continue // more LS lines follow
			}
			var want []string
			for _, cp := range wantedCaps {
				if offered[cp] {
					want = append(want, cp)
				}
			}
			if len(want) == 0 {
				capsDone = true
				if err := c.raw("CAP END"); err != nil {
					return err
				}
				continue
			}
			if err := c.raw("CAP REQ :" + strings.Join(want, " ")); err != nil {
				return err
			}
		case m.Command == "CAP" && len(m.Params) >= 2 && (m.Params[1] == "ACK" || m.Params[1] == "NAK"):
			if !capsDone {
				capsDone = true
				if err := c.raw("CAP END"); err != nil {
					return err
				}
			}
		case m.Command == "001":
			// Agents should set bot mode (spec §1); nothing waits for it.
			return c.raw("MODE " + c.nick + " +B")
		case m.Command == "432" || m.Command == "433" || m.Command == "436" || m.Command == "437" || m.Command == "465":
			return fmt.Errorf("refused: %s", strings.Join(m.Params, " "))
		}
	}
}

// nickServ sends REGISTER (then IDENTIFY if the account exists already) or
// IDENTIFY, and waits until the server says the client is logged in to
// account (numeric 900) or NickServ says why not.
func (c *client) nickServ(ctx context.Context, register bool, account, password, email string) error {
	if register {
		cmd := "REGISTER " + password
		if email != "" {
			cmd += " " + email
		}
		err := c.nickServOnce(ctx, cmd, account)
		if !errors.Is(err, errAlreadyRegistered) {
			return err
		}
	}
	return c.nickServOnce(ctx, "IDENTIFY "+account+" "+password, account)
}

var errAlreadyRegistered = errors.New("account already registered")

func (c *client) nickServOnce(ctx context.Context, command, account string) error {
	if err := c.raw("PRIVMSG NickServ :" + command); err != nil {
		return err
	}
	verb, _, _ := strings.Cut(command, " ")
	for {
		m, err := c.next(ctx)
		if err != nil {
			return fmt.Errorf("NickServ %s: %w", verb, err)
		}
		if m.Command == "900" { // <nick> <nick!user@host> <account> :You are now logged in as …
			if len(m.Params) < 3 || !strings.EqualFold(m.Params[2], account) {
				return fmt.Errorf("NickServ %s: logged in as something else: %s", verb, strings.Join(m.Params, " "))
			}
			return nil
		}
		if m.Command != "NOTICE" || !strings.EqualFold(m.Nick(), "NickServ") || len(m.Params) < 2 {
			continue
		}
		text := stripFormatting(m.Params[len(m.Params)-1])
		// Anope 2.0's refusals; anything else (success, info) means: keep waiting for 900.
		switch {
		case strings.Contains(text, "is already registered"):
			return fmt.Errorf("NickServ %s: %s: %w", verb, text, errAlreadyRegistered)
		case strings.Contains(text, "You are already identified"):
			return nil
		case strings.Contains(text, "Password incorrect"),
			strings.Contains(text, "isn't registered"),
			strings.Contains(text, "may not be registered"),
			strings.Contains(text, "obscure password"),
			strings.Contains(text, "Syntax:"),
			strings.Contains(text, "Unknown command"),
			strings.Contains(text, "Access denied"),
			strings.Contains(text, "must have been using"),
			strings.Contains(text, "is currently suspended"):
			return fmt.Errorf("NickServ %s: %s", verb, text)
		}
	}
}

// start runs the reader: every message goes to handle, on the reader's
// goroutine, until the connection ends; then gone says why if it was not
// our own QUIT.
func (c *client) start(handle func(ircmsg.Message, time.Time)) {
	go func() {
		defer close(c.done)
		var reason string
		for {
			line, err := c.r.ReadString('\n')
			if err != nil {
				if reason == "" {
					reason = "connection closed: " + err.Error()
				}
				break
			}
			at := time.Now()
			m, err := ircmsg.ParseLine(strings.TrimRight(line, "\r\n"))
			if err != nil {
				continue
			}
			switch m.Command {
			case "PING":
				_ = c.raw("PONG :" + strings.Join(m.Params, " "))
				continue
			case "ERROR":
				reason = "ERROR " + strings.Join(m.Params, " ")
				continue
			}
			handle(m, at)
		}
		c.mu.Lock()
		if !c.closing {
			c.gone = reason
		}
		c.mu.Unlock()
	}()
}

// Gone says why the server dropped the connection ("" if it did not, or
// if we quit).
func (c *client) Gone() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gone
}

// raw sends line (which may hold several CRLF-separated lines) and CRLF.
func (c *client) raw(line string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := c.conn.Write([]byte(line + "\r\n"))
	return err
}

func (c *client) privmsg(target, text string) error {
	if strings.ContainsAny(target+text, "\r\n\x00") {
		return errors.New("line break or NUL in a message")
	}
	return c.raw("PRIVMSG " + target + " :" + text)
}

// close quits and waits briefly for the server to hang up. It works
// whether or not the reader was started.
func (c *client) close(started bool) {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	_ = c.raw("QUIT :pircan bench done")
	if started {
		select {
		case <-c.done:
		case <-time.After(2 * time.Second):
		}
	}
	c.conn.Close()
	if started {
		<-c.done
	}
}

// stripFormatting removes IRC bold/underline/reverse/reset codes.
func stripFormatting(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\x02', '\x1d', '\x1f', '\x16', '\x0f':
			return -1
		}
		return r
	}, s)
}
