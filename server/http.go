package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/creatimus/pircan/pircan/portal"
)

// readyTimeout bounds the database checks of one readiness probe.
const readyTimeout = 2 * time.Second

// ServeHTTP serves the operator endpoints on addr until ctx ends, then
// shuts the server down gracefully (bounded by Drain):
//
//	GET /healthz  200 "ok" while the process is up
//	GET /readyz   200 when IRC serves (own nick, own account, account-tag), the
//	              database answers and its schema is current, and this
//	              process is not a standby; else 503. A JSON body names
//	              each part either way.
//	GET /metrics  Prometheus text format, from the bot's own registry
//	/owner        the owner web portal (pircan/portal)
//
// It returns nil after a clean shutdown, or why it could not serve.
func (b *Bot) ServeHTTP(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           b.httpHandler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(logWriter{b}, "", 0),
	}
	bound := ln.Addr().String()
	b.ops.httpAddr.Store(&bound)
	b.log.Info().Str("addr", bound).Msg("serving the owner portal, health, readiness and metrics over HTTP")
	stopped := make(chan error, 1)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.cfg.Drain)
		defer cancel()
		stopped <- srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-stopped
}

// HTTPAddr is the address ServeHTTP listens on ("" before it listens); it
// tells the port chosen for an address such as 127.0.0.1:0.
func (b *Bot) HTTPAddr() string {
	if p := b.ops.httpAddr.Load(); p != nil {
		return *p
	}
	return ""
}

func (b *Bot) httpHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", b.serveReady)
	owner := portal.New(b.store, portal.Config{BotNick: b.cfg.IRC.Nick, Limits: b.cfg.Limits,
		Log: b.log.With().Str("component", "portal").Logger()})
	mux.Handle("/owner", owner)
	mux.Handle("/owner/", owner)
	mux.Handle("GET /metrics", promhttp.HandlerFor(b.metrics().reg, promhttp.HandlerOpts{
		ErrorLog:      promLogger{b},
		ErrorHandling: promhttp.ContinueOnError,
	}))
	return mux
}

// Readiness is the body of /readyz: which parts are ready.
type Readiness struct {
	IRC      bool `json:"irc"`      // registered, account-tag granted
	Database bool `json:"database"` // answers a ping
	Schema   bool `json:"schema"`   // every embedded migration applied
	Standby  bool `json:"standby"`  // another process holds the leader lock
	// IRCReason says why IRC is not ready (an active process only).
	IRCReason string `json:"irc_reason,omitempty"`
}

// Ready reports whether the bot is ready to serve: on IRC, with its
// database up and current, and not standing by.
func (r Readiness) Ready() bool { return r.IRC && r.Database && r.Schema && !r.Standby }

// Readiness checks each part now.
func (b *Bot) Readiness(ctx context.Context) Readiness {
	r := Readiness{IRC: b.conn.Registered(), Standby: b.standby.Load()}
	if !r.IRC && !r.Standby {
		r.IRCReason = b.conn.NotServing()
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := b.store.Ping(ctx); err != nil {
		b.log.Debug().Err(err).Msg("readyz: database does not answer")
		return r
	}
	r.Database = true
	ok, err := b.store.SchemaReady(ctx)
	if err != nil {
		b.log.Debug().Err(err).Msg("readyz: schema version not read")
	}
	r.Schema = ok
	return r
}

func (b *Bot) serveReady(w http.ResponseWriter, req *http.Request) {
	r := b.Readiness(req.Context())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !r.Ready() {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(r)
}

// logWriter routes net/http's own error lines into the bot's log.
type logWriter struct{ b *Bot }

func (w logWriter) Write(p []byte) (int, error) {
	w.b.log.Warn().Str("component", "http").Msg(strings.TrimSpace(string(p)))
	return len(p), nil
}

// promLogger routes promhttp's errors into the bot's log.
type promLogger struct{ b *Bot }

func (l promLogger) Println(v ...any) {
	l.b.log.Warn().Str("component", "metrics").Msg(strings.TrimSpace(fmt.Sprintln(v...)))
}
