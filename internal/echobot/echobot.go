// Package echobot is a bot that does no work, for benchmarks: it answers
// every private PRIVMSG with a NOTICE of the same text to the sender, at
// once and without pacing. It uses the same client library (irc-go's
// ircevent) and connection settings as PIRCAN's transport (TLS, SASL PLAIN,
// the same capabilities, bot mode, an optional OPER for a fake-lag
// exemption), so a round trip through it is the floor under any PIRCAN
// request: client → IRC server → bot → IRC server → client, minus the
// bot's own work.
package echobot

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ergochat/irc-go/ircevent"
	"github.com/ergochat/irc-go/ircmsg"
)

// wantedCaps are the capabilities PIRCAN's transport requests
// (pircan/irc/transport), so that the server sends the echo bot the same tagged
// lines it sends PIRCAN.
var wantedCaps = []string{"account-tag", "message-tags", "server-time", "extended-join", "account-notify", "cap-notify"}

// Bot is a running echo bot.
type Bot struct {
	irc *ircevent.Connection

	mu     sync.Mutex
	socket net.Conn
	closed bool
}

// Start connects to server (host:port, TLS) as nick, trusting the PEM
// certificates in caFile besides the system roots (caFile may be empty),
// logs in with SASL PLAIN as saslAccount, and sends OPER operName operPass
// when operName is not empty. It returns once the bot is registered and,
// with an OPER, once the server granted it. ctx bounds the start only.
func Start(ctx context.Context, server, caFile, nick, saslAccount, saslPassword, operName, operPass string) (*Bot, error) {
	tlsConfig, err := tlsConfig(server, caFile)
	if err != nil {
		return nil, err
	}
	b := &Bot{}
	dialer := &net.Dialer{Timeout: 15 * time.Second}
	b.irc = &ircevent.Connection{
		Server: server, Nick: nick, User: "echobot", RealName: "echo bot (benchmarks)",
		UseTLS: true, TLSConfig: tlsConfig, RequestCaps: append([]string(nil), wantedCaps...),
		SASLLogin: saslAccount, SASLPassword: saslPassword,
		QuitMessage: "bye", Timeout: 30 * time.Second, KeepAlive: 90 * time.Second,
		Log: log.New(io.Discard, "", 0), // never Debug: it would log the SASL password
		DialContext: func(dctx context.Context, network, addr string) (net.Conn, error) {
			s, err := dialer.DialContext(dctx, network, addr)
			b.mu.Lock()
			b.socket = s
			b.mu.Unlock()
			return s, err
		},
	}
	irc := b.irc

	irc.AddCallback("PRIVMSG", func(m ircmsg.Message) {
		if len(m.Params) < 2 || m.Nick() == "" {
			return
		}
		target, text := m.Params[0], m.Params[1]
		if strings.HasPrefix(target, "#") || strings.HasPrefix(target, "&") || strings.HasPrefix(text, "\x01") {
			return // channel talk and CTCP are not for us
		}
		_ = irc.Send("NOTICE", m.Nick(), text)
	})

	ready := make(chan error, 1)
	report := func(err error) {
		select {
		case ready <- err:
		default:
		}
	}
	irc.AddConnectCallback(func(ircmsg.Message) { // end of MOTD
		irc.Send("MODE", irc.CurrentNick(), "+B")
		if operName == "" {
			report(nil)
			return
		}
		irc.Send("OPER", operName, operPass)
	})
	irc.AddCallback("381", func(ircmsg.Message) { report(nil) }) // RPL_YOUREOPER
	for _, code := range []string{"464", "491"} {                // ERR_PASSWDMISMATCH, ERR_NOOPERHOST
		irc.AddCallback(code, func(m ircmsg.Message) {
			report(fmt.Errorf("echobot: OPER %s refused: %s", operName, strings.Join(m.Params, " ")))
		})
	}

	// Connect blocks until the welcome (or its own Timeout): let ctx cut
	// it short by closing the socket.
	stop := context.AfterFunc(ctx, b.closeSocket)
	defer stop()
	connected := make(chan error, 1)
	go func() { connected <- irc.Connect() }()
	select {
	case err = <-connected:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err == nil {
		select {
		case err = <-ready:
		case <-ctx.Done():
			err = ctx.Err()
		case <-time.After(30 * time.Second):
			err = errors.New("no end of MOTD (or OPER answer) within 30 s")
		}
	}
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("echobot %s on %s: %w", nick, server, err)
	}
	return b, nil
}

// Nick is the bot's current nick.
func (b *Bot) Nick() string { return b.irc.CurrentNick() }

// Close quits and waits briefly for the server to hang up (idempotent).
func (b *Bot) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	b.mu.Unlock()
	if b.irc.Connected() {
		b.irc.Quit()
		deadline := time.Now().Add(3 * time.Second)
		for b.irc.Connected() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	b.closeSocket()
}

func (b *Bot) closeSocket() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.socket != nil {
		_ = b.socket.Close()
	}
}

// tlsConfig is PIRCAN's: verify the server by the host of server, against
// the system roots plus caFile.
func tlsConfig(server, caFile string) (*tls.Config, error) {
	host, _, err := net.SplitHostPort(server)
	if err != nil {
		return nil, fmt.Errorf("echobot: server %q: %w", server, err)
	}
	cfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("echobot: CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("echobot: CA file %s holds no certificate", caFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}
