package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/tokenauth"
	"github.com/creatimus/pircan/pircan/a2a"
	"github.com/creatimus/pircan/pircan/mcp"
	"github.com/creatimus/pircan/pircan/parley"
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
//	GET /metrics  Prometheus text format, from the bot's own registry;
//	              only when Config.MetricsAddr is empty (else 404 here:
//	              ServeMetrics serves it on its own listener)
//	/owner        the owner web portal (pircan/portal)
//	POST /mcp     the MCP face (pircan/mcp; bearer tokens)
//	GET /api/v1/manifest  the public manifest (pircan/mcp)
//	/a2a/         the A2A face (pircan/a2a): public Agent Cards, JSON-RPC
//	/parley/      the Parley v1 forum (pircan/parley): MCP, REST, manifest,
//	              health, llms.txt, parley.html
//	GET /.well-known/oauth-protected-resource[/mcp]  RFC 9728 metadata of
//	              the bearer faces (internal/tokenauth)
//
// It returns nil after a clean shutdown, or why it could not serve.
func (b *Bot) ServeHTTP(ctx context.Context, addr string) error {
	what := "serving the HTTP faces, health, readiness and metrics"
	if b.cfg.MetricsAddr != "" {
		what = "serving the HTTP faces, health and readiness"
	}
	return b.serveOn(ctx, addr, b.httpHandler(b.cfg.MetricsAddr == ""), &b.ops.httpAddr, what, b.faceURLs)
}

// faces are the public faces ServeHTTP serves, by the name its start-up
// log gives each one's URL.
var faces = []struct{ name, path string }{
	{"portal", "/owner"},
	{"mcp", mcp.Path},
	{"a2a", a2a.Path + "<agent_id>/"},
	{"parley", parley.Root + "/"},
	{"manifest", mcp.ManifestPath},
}

// faceURLs tells the core the address the listener bound (its PublicURL
// when none is configured) and adds each face's URL on that public URL to
// the start-up log line, so that an operator reads where everything is,
// as clients are told.
func (b *Bot) faceURLs(e *zerolog.Event, at string) *zerolog.Event {
	b.svc.Listening(at)
	base := b.svc.PublicURL()
	if host, _, err := net.SplitHostPort(at); b.cfg.PublicURL == "" && err == nil && !isLoopback(host) {
		b.log.Warn().Str("public_url", base).Msg("PIRCAN_PUBLIC_URL is not set: agent cards, the manifest and the bearer " +
			"challenge name the listen address; set it to the address clients use (https://pircan.example)")
	}
	for _, f := range faces {
		e = e.Str(f.name, base+f.path)
	}
	return e
}

// isLoopback reports whether host (an IP, as a listener reports it) is a
// loopback address: a listener only this machine reaches, whose own
// address is what a local client uses.
func isLoopback(host string) bool {
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// ServeMetrics serves GET /metrics alone on addr (Config.MetricsAddr: an
// address operators can keep off the public network) until ctx ends.
func (b *Bot) ServeMetrics(ctx context.Context, addr string) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", b.metricsHandler())
	return b.serveOn(ctx, addr, mux, &b.ops.metricsAddr, "serving metrics over HTTP", nil)
}

func (b *Bot) serveOn(ctx context.Context, addr string, h http.Handler, bound *atomic.Pointer[string], what string,
	fields func(*zerolog.Event, string) *zerolog.Event) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(logWriter{b}, "", 0),
	}
	at := ln.Addr().String()
	e := b.log.Info().Str("addr", at)
	if fields != nil {
		e = fields(e, at)
	}
	e.Msg(what)
	bound.Store(&at) // after the log line: who waits for the address finds it logged
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
func (b *Bot) HTTPAddr() string { return loadAddr(&b.ops.httpAddr) }

// MetricsAddr is the address ServeMetrics listens on ("" before it listens).
func (b *Bot) MetricsAddr() string { return loadAddr(&b.ops.metricsAddr) }

func loadAddr(p *atomic.Pointer[string]) string {
	if a := p.Load(); a != nil {
		return *a
	}
	return ""
}

func (b *Bot) metricsHandler() http.Handler {
	return promhttp.HandlerFor(b.metrics().reg, promhttp.HandlerOpts{
		ErrorLog:      promLogger{b},
		ErrorHandling: promhttp.ContinueOnError,
	})
}

func (b *Bot) httpHandler(withMetrics bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", b.serveReady)
	owner := portal.New(b.svc, portal.Config{BotNick: b.cfg.IRC.Nick,
		Log: b.log.With().Str("component", "portal").Logger()})
	mux.Handle("/owner", owner)
	mux.Handle("/owner/", owner)
	face := b.mcpFace()
	mux.Handle("POST "+mcp.Path, face.Handler())
	mux.Handle("GET "+mcp.ManifestPath, face.ManifestHandler())
	// RFC 9728: how to authenticate to /mcp, and to the origin's other
	// bearer resource (/a2a/): a header, a token from the operator.
	mux.Handle("GET "+tokenauth.MetadataPath+mcp.Path, face.MetadataHandler(mcp.Path))
	mux.Handle("GET "+tokenauth.MetadataPath, face.MetadataHandler(""))
	mux.Handle(a2a.Path, b.a2aFace().Handler())
	mux.Handle(parley.Root+"/", b.parleyFace().Handler())
	if withMetrics {
		mux.Handle("GET /metrics", b.metricsHandler())
	}
	return mux
}

// mcpFace is the bot's MCP face, made once: its metrics go into the bot's
// registry, which takes each only once.
func (b *Bot) mcpFace() *mcp.Face {
	b.ops.mcpOnce.Do(func() {
		b.ops.mcp = mcp.New(b.svc, mcp.Config{Registerer: b.metrics().reg, ParleyPath: parley.Root},
			b.log.With().Str("component", "mcp").Logger())
	})
	return b.ops.mcp
}

// parleyFace is the bot's Parley forum face, made once (its metrics go
// into the bot's registry once).
func (b *Bot) parleyFace() *parley.Face {
	b.ops.parleyOnce.Do(func() {
		b.ops.parley = parley.New(b.svc, parley.Config{Registerer: b.metrics().reg, Health: b.parleyHealth},
			b.log.With().Str("component", "parley").Logger())
	})
	return b.ops.parley
}

// parleyHealth is the forum's health: the database answers, its schema
// version and whether it is current.
func (b *Bot) parleyHealth(ctx context.Context) parley.Health {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	var h parley.Health
	if b.store.Ping(ctx) != nil {
		return h
	}
	h.Database = true
	h.SchemaVersion, h.SchemaCurrent, _ = b.store.SchemaVersion(ctx)
	return h
}

// a2aFace is the bot's A2A face, made once (its metrics, like the MCP
// face's, go into the bot's registry once).
func (b *Bot) a2aFace() *a2a.Face {
	b.ops.a2aOnce.Do(func() {
		b.ops.a2a = a2a.New(b.svc, a2a.Config{Registerer: b.metrics().reg},
			b.log.With().Str("component", "a2a").Logger())
	})
	return b.ops.a2a
}

// Readiness is the body of /readyz: which parts are ready.
type Readiness struct {
	IRC      bool `json:"irc"`      // registered, account-tag granted
	Database bool `json:"database"` // answers a ping
	Schema   bool `json:"schema"`   // every embedded migration applied
	Standby  bool `json:"standby"`  // another process holds the leader lock
	// IRCReason says why IRC is not ready (an active process only).
	IRCReason string `json:"irc_reason,omitempty"`
	NoIRC     bool   `json:"no_irc,omitempty"` // an HTTP-only replica (--no-irc)
	// OutputCapped: the ordinary-client output cap is in force (no OPER
	// granted, no exemption stated; README "Output cap"). Not a readiness
	// condition: a capped bot serves, slower under load.
	OutputCapped bool `json:"output_capped,omitempty"`
}

// Ready reports whether the bot is ready to serve: on IRC (unless it runs
// without: NoIRC), with its database up and current, and not standing by.
func (r Readiness) Ready() bool {
	return (r.IRC || r.NoIRC) && r.Database && r.Schema && !r.Standby
}

// Readiness checks each part now.
func (b *Bot) Readiness(ctx context.Context) Readiness {
	r := Readiness{IRC: b.conn.Online(), Standby: b.standby.Load(), NoIRC: b.cfg.NoIRC}
	if !r.IRC && !r.Standby && !r.NoIRC {
		r.IRCReason = b.conn.NotServing()
	}
	r.OutputCapped = !r.NoIRC && !b.conn.OutputExempt()
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
