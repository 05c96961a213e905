// Package portal is the owner web portal (/owner): server-rendered HTML,
// no JavaScript. An owner signs in with a code the page shows and a LOGIN
// sent over IRC while identified (spec §3 LOGIN); the browser holds a
// secret the core minted in an HttpOnly, SameSite=Strict cookie, and the
// database only its SHA-256. Signed in, the owner manages every agent
// bound to the account: policy, owner-decides requests, agreements, portal
// sessions. Forms are refused from other origins (http.CrossOriginProtection)
// and each carries a CSRF token bound to the session as well.
//
// One file per page: signin.go (start, code, signed out), agents.go (the
// agents page and its actions), sessions.go (sessions, sign-out), forum.go
// (the forum's threads and a human's marks on them), claims.go (claims,
// seals and access reviews); forms.go
// holds what every form shares.
package portal

import (
	"bytes"
	"embed"
	"errors"
	"html/template"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
)

// CookieName is the portal's session cookie.
const CookieName = "pircan_owner"

// StartCookie holds the CSRF token of the sign-in start form, which has no
// session yet (a double-submitted cookie).
const StartCookie = "pircan_start"

// Config holds the portal's settings.
type Config struct {
	BotNick string // the nick owners send LOGIN to
	Log     zerolog.Logger
}

// Handler serves /owner and everything under it: it decodes forms, calls
// the core's owner operations and renders their results as pages.
type Handler struct {
	core    *pircan.Service
	cfg     Config
	mux     *http.ServeMux
	guarded http.Handler // mux behind the cross-origin check
}

//go:embed templates/*.html
var templateFS embed.FS

var pages = map[string]*template.Template{}

func init() {
	funcs := template.FuncMap{
		"when":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
		"clock": func(t time.Time) string { return t.UTC().Format("15:04 UTC") },
		"join":  func(s []string) string { return strings.Join(s, ", ") },
		"short": func(id string) string {
			if len(id) > 8 {
				return id[:8]
			}
			return id
		},
	}
	for _, name := range []string{"signin", "start", "agents", "sessions", "message", "confirm", "forum", "thread", "claims"} {
		pages[name] = template.Must(template.New("layout.html").Funcs(funcs).
			ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
}

// New returns the portal's handler; mount it at /owner and /owner/.
func New(core *pircan.Service, cfg Config) *Handler {
	if cfg.BotNick == "" {
		cfg.BotNick = "PIRCAN"
	}
	h := &Handler{core: core, cfg: cfg, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /owner", h.index)
	h.mux.HandleFunc("GET /owner/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/owner", http.StatusSeeOther)
	})
	h.mux.HandleFunc("GET /owner/sessions", h.signedIn(h.sessions))
	h.mux.HandleFunc("GET /owner/forum", h.signedIn(h.forum))
	h.mux.HandleFunc("GET /owner/forum/claims", h.signedIn(h.forumClaims))
	h.mux.HandleFunc("GET /owner/forum/{thread}", h.signedIn(h.forumThread))
	h.mux.HandleFunc("GET /owner/signed-out", h.signedOut)
	h.mux.HandleFunc("POST /owner/sign-in", h.startSignIn)
	h.mux.HandleFunc("POST /owner/policy", h.action(h.setPolicy))
	h.mux.HandleFunc("POST /owner/decide", h.action(h.decide))
	h.mux.HandleFunc("POST /owner/revoke", h.action(h.revoke))
	h.mux.HandleFunc("POST /owner/binding", h.action(h.decideBinding))
	h.mux.HandleFunc("POST /owner/release", h.action(h.release))
	h.mux.HandleFunc("POST /owner/sessions/end", h.action(h.endSession))
	h.mux.HandleFunc("POST /owner/sign-out", h.action(h.signOut))
	h.mux.HandleFunc("POST /owner/forum/move", h.action(h.forumMove))
	h.mux.HandleFunc("POST /owner/forum/seal", h.action(h.forumSeal))
	h.mux.HandleFunc("POST /owner/forum/review", h.action(h.forumReview))
	h.mux.HandleFunc("/owner/", func(w http.ResponseWriter, r *http.Request) {
		h.message(w, http.StatusNotFound, "Not found", "There is no such page in the owner portal.", "/owner", "Go to the owner portal")
	})
	// A browser says where a form comes from (Sec-Fetch-Site, Origin): a
	// form posted from another site is refused before any handler reads it.
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.message(w, http.StatusForbidden, "Forbidden", "This form was sent from another site. Open the owner portal itself and try again.", "/owner", "Back to the owner portal")
	}))
	h.guarded = cop.Handler(h.mux)
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	h.guarded.ServeHTTP(w, r)
}

// page is what every template gets.
type page struct {
	Title   string
	Refresh int // seconds; 0: none
	Account string
	Owner   *pircan.Owner
	CSRF    string
	Nav     string // which page of the signed-in portal
	Flash   string
	Data    any
}

func (h *Handler) render(w http.ResponseWriter, status int, name string, p page) {
	var buf bytes.Buffer
	if err := pages[name].Execute(&buf, p); err != nil {
		h.internal(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

type messageData struct {
	Heading, Text, Link, LinkText string
}

func (h *Handler) message(w http.ResponseWriter, status int, heading, text, link, linkText string) {
	h.render(w, status, "message", page{Title: heading, Data: messageData{heading, text, link, linkText}})
}

func (h *Handler) internal(w http.ResponseWriter, err error) {
	ref := pircan.AsError(err).Ref
	h.cfg.Log.Error().Err(err).Str("ref", ref).Str("component", "portal").Msg("internal error")
	var buf bytes.Buffer
	_ = pages["message"].Execute(&buf, page{Title: "Something went wrong", Data: messageData{"Something went wrong",
		"Something went wrong on our side; quote the reference " + ref + " to the operator.", "/owner", "Back to the owner portal"}})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = buf.WriteTo(w)
}

// current returns the session the request's cookie names (zero if none).
func (h *Handler) current(r *http.Request) (pircan.PortalSession, error) {
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return pircan.PortalSession{}, nil
	}
	s, err := h.core.PortalSession(r.Context(), c.Value)
	if errors.Is(err, pircan.ErrNotFound) {
		return pircan.PortalSession{}, nil
	}
	return s, err
}

func address(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func secure(r *http.Request) bool {
	return r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"
}
