// Package portal is the owner web portal (/owner): server-rendered HTML,
// no JavaScript. An owner signs in with a code the page shows and a LOGIN
// sent over IRC while identified (spec §3 LOGIN); the browser holds a
// random secret in an HttpOnly, SameSite=Strict cookie, and the database
// only its SHA-256. Signed in, the owner manages every agent bound to the
// account: policy, owner-decides requests, agreements, portal sessions.
// Every form carries a CSRF token bound to the session.
package portal

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"html/template"
	"net"
	"net/http"
	"strconv"
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
	core *pircan.Service
	cfg  Config
	mux  *http.ServeMux
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
	for _, name := range []string{"signin", "start", "agents", "sessions", "message", "confirm"} {
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
	h.mux.HandleFunc("GET /owner/signed-out", h.signedOut)
	h.mux.HandleFunc("POST /owner/sign-in", h.startSignIn)
	h.mux.HandleFunc("POST /owner/policy", h.action(h.setPolicy))
	h.mux.HandleFunc("POST /owner/decide", h.action(h.decide))
	h.mux.HandleFunc("POST /owner/revoke", h.action(h.revoke))
	h.mux.HandleFunc("POST /owner/binding", h.action(h.decideBinding))
	h.mux.HandleFunc("POST /owner/release", h.action(h.release))
	h.mux.HandleFunc("POST /owner/sessions/end", h.action(h.endSession))
	h.mux.HandleFunc("POST /owner/sign-out", h.action(h.signOut))
	h.mux.HandleFunc("/owner/", func(w http.ResponseWriter, r *http.Request) {
		h.message(w, http.StatusNotFound, "Not found", "There is no such page in the owner portal.", "/owner", "Go to the owner portal")
	})
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	h.mux.ServeHTTP(w, r)
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

// current returns the session the request's cookie names; hasCookie says
// whether there was a cookie at all.
func (h *Handler) current(r *http.Request) (s pircan.PortalSession, hasCookie bool, err error) {
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return s, false, nil
	}
	secret, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil || len(secret) != 32 {
		return s, true, nil
	}
	sum := sha256.Sum256(secret)
	s, err = h.core.PortalSession(r.Context(), sum[:])
	if errors.Is(err, pircan.ErrNotFound) {
		return s, true, nil
	}
	return s, true, err
}

func address(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// index shows the signed-in portal, the waiting sign-in (the same code on
// every reload: the page refreshes to notice the LOGIN), or the start page.
// A GET never starts a sign-in: only the start form's POST does.
func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	s, _, err := h.current(r)
	if err != nil {
		h.internal(w, err)
		return
	}
	switch {
	case s.Active:
		h.agents(w, r, s)
	case s.Waiting:
		h.signIn(w, s)
	case s.ID != "" && s.Account != "":
		h.start(w, r, "Your session has ended", "You were signed out (or 12 hours passed). Sign in again with a new code.")
	case s.ID != "":
		h.start(w, r, "This code has expired", "Codes work for 10 minutes. Get a new code to sign in.")
	default:
		h.start(w, r, "Sign in to the owner portal", "Owners sign in with their IRC account: this page gives you a code to send to "+h.cfg.BotNick+" while identified with NickServ.")
	}
}

type startData struct {
	Heading, Text, CSRF string
}

// start renders the start page, whose form asks for a code. Its CSRF
// token is double-submitted: in the form and in a cookie of its own.
func (h *Handler) start(w http.ResponseWriter, r *http.Request, heading, text string) {
	token := ""
	if c, err := r.Cookie(StartCookie); err == nil && len(c.Value) == 43 {
		token = c.Value
	} else {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		token = base64.RawURLEncoding.EncodeToString(b)
		http.SetCookie(w, &http.Cookie{Name: StartCookie, Value: token, Path: "/owner", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: secure(r)})
	}
	h.render(w, http.StatusOK, "start", page{Title: "Sign in", Data: startData{heading, text, token}})
}

func secure(r *http.Request) bool {
	return r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"
}

// startSignIn is the start form's POST: a new code for this browser, unless
// it already has one that is still valid (a second click is no new start).
func (h *Handler) startSignIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		h.message(w, http.StatusBadRequest, "Bad request", "The form could not be read.", "/owner", "Back to the owner portal")
		return
	}
	c, err := r.Cookie(StartCookie)
	token := r.PostForm.Get("csrf")
	if err != nil || token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(c.Value)) != 1 ||
		r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		h.message(w, http.StatusForbidden, "Forbidden", "The form's security token is missing or wrong. Reload the page and try again.", "/owner", "Back to the owner portal")
		return
	}
	s, _, err := h.current(r)
	if err != nil {
		h.internal(w, err)
		return
	}
	if s.Waiting || s.Active {
		http.Redirect(w, r, "/owner", http.StatusSeeOther)
		return
	}
	secret := make([]byte, 32)
	csrf := make([]byte, 32)
	_, _ = rand.Read(secret)
	_, _ = rand.Read(csrf)
	sum := sha256.Sum256(secret)
	ua := r.UserAgent()
	if len(ua) > 300 {
		ua = ua[:300]
	}
	s, err = h.core.StartSignIn(r.Context(), pircan.NewSignIn{SecretSHA256: sum[:], CSRFToken: base64.RawURLEncoding.EncodeToString(csrf),
		Address: address(r), UserAgent: strings.ToValidUTF8(ua, "")})
	if errors.Is(err, pircan.ErrRateLimited) {
		h.tooMany(w, s.RetryAt)
		return
	}
	if err != nil {
		h.internal(w, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: base64.RawURLEncoding.EncodeToString(secret), Path: "/owner",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r),
		MaxAge: int(pircan.SessionLifetime / time.Second)})
	http.Redirect(w, r, "/owner", http.StatusSeeOther)
}

// tooMany is the 429 page: it says when to retry, and so does Retry-After.
func (h *Handler) tooMany(w http.ResponseWriter, at time.Time) {
	secs := int(time.Until(at).Seconds()) + 1
	if secs < 1 {
		secs = 1
	}
	mins := (secs + 59) / 60
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	h.message(w, http.StatusTooManyRequests, "Too many sign-in codes",
		"This address asked for "+strconv.Itoa(h.core.Limits().SignInStartsHour)+" sign-in codes in the last hour that were not used. "+
			"Try again after "+at.UTC().Format("15:04 UTC")+" (in about "+strconv.Itoa(mins)+" minute"+plural(mins)+"). "+
			"Codes that were used to sign in do not count.", "/owner", "Back to the owner portal")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

type signInData struct {
	Code, BotNick, Command string
	ValidUntil             time.Time
}

func (h *Handler) signIn(w http.ResponseWriter, s pircan.PortalSession) {
	h.render(w, http.StatusOK, "signin", page{Title: "Sign in", Refresh: 3, Data: signInData{
		Code: s.Code, BotNick: h.cfg.BotNick, ValidUntil: s.CreatedAt.Add(pircan.CodeLifetime),
		Command: "/msg " + h.cfg.BotNick + ` PIRCAN/1 LOGIN {"code":"` + s.Code + `"}`,
	}})
}

func (h *Handler) signedOut(w http.ResponseWriter, r *http.Request) {
	h.message(w, http.StatusOK, "Signed out", "This browser is signed out of the owner portal.", "/owner", "Sign in again")
}

// signedIn wraps a GET page that needs an active session.
func (h *Handler) signedIn(fn func(http.ResponseWriter, *http.Request, pircan.PortalSession)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, _, err := h.current(r)
		if err != nil {
			h.internal(w, err)
			return
		}
		if !s.Active {
			http.Redirect(w, r, "/owner", http.StatusSeeOther)
			return
		}
		fn(w, r, s)
	}
}

// action wraps a form POST: an active session and its CSRF token, or 403.
func (h *Handler) action(fn func(http.ResponseWriter, *http.Request, pircan.PortalSession) (string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			h.message(w, http.StatusBadRequest, "Bad request", "The form could not be read.", "/owner", "Back to the owner portal")
			return
		}
		s, _, err := h.current(r)
		if err != nil {
			h.internal(w, err)
			return
		}
		if !s.Active {
			h.message(w, http.StatusForbidden, "Not signed in", "This browser is not signed in (or its session ended).", "/owner", "Sign in")
			return
		}
		token := r.PostForm.Get("csrf")
		if token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(s.CSRFToken)) != 1 {
			h.message(w, http.StatusForbidden, "Forbidden", "The form's security token is missing or wrong. Reload the page and try again.", "/owner", "Back to the owner portal")
			return
		}
		if err := h.core.Admit(r.Context(), pircan.OwnerCaller(s)); err != nil {
			h.actionError(w, err)
			return
		}
		next, err := fn(w, r, s)
		if err != nil {
			h.actionError(w, err)
			return
		}
		if next != "" {
			http.Redirect(w, r, next, http.StatusSeeOther)
		}
	}
}

// formError is a form the portal itself cannot read (400).
type formError string

func (e formError) Error() string { return string(e) }

// refusals are the page heading and HTTP status of each code an owner
// operation refuses with; the text is the operation's own message.
var refusals = map[pircan.Code]struct {
	status  int
	heading string
}{
	pircan.CodeNotAuthorized:   {http.StatusForbidden, "Read-only"},
	pircan.CodeNotFound:        {http.StatusNotFound, "Not found"},
	pircan.CodeNotPending:      {http.StatusConflict, "Already decided"},
	pircan.CodeNotActive:       {http.StatusConflict, "Already ended"},
	pircan.CodeInvalidArgument: {http.StatusBadRequest, "Not done"},
	pircan.CodeInvalidScope:    {http.StatusBadRequest, "Not done"},
	pircan.CodeRateLimited:     {http.StatusTooManyRequests, "Too many requests"},
}

func (h *Handler) actionError(w http.ResponseWriter, err error) {
	var fe formError
	if errors.As(err, &fe) {
		h.message(w, http.StatusBadRequest, "Not done", string(fe), "/owner", "Back to the owner portal")
		return
	}
	perr := pircan.AsError(err)
	ref, ok := refusals[perr.Code]
	if !ok {
		h.internal(w, err)
		return
	}
	if perr.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(perr.RetryAfter.Seconds())+1))
	}
	h.message(w, ref.status, ref.heading, perr.Message, "/owner", "Back to the owner portal")
}

// flashes are the confirmations a redirect may name (?done=…).
var flashes = map[string]string{
	"policy":    "Policy saved.",
	"accepted":  "Request accepted: the agreement is active.",
	"declined":  "Request declined.",
	"revoked":   "Agreement revoked.",
	"ended":     "Session ended.",
	"confirmed": "You are now this agent's owner.",
	"refused":   "You declined to be this agent's owner.",
	"released":  "You released the agent: it acts as its own owner again.",
}

type agentsData struct {
	pircan.OwnerView
	Policies []policyChoice
	Account  string
}

type policyChoice struct{ Value, Text string }

// policyTexts explain each policy (pircan.Policies) to an owner.
var policyTexts = map[string]string{
	pircan.PolicyAgentDecides: "the agent accepts or declines itself",
	pircan.PolicyOwnerDecides: "you decide here; the agent cannot change this",
	pircan.PolicyAutoAccept:   "message-only requests are accepted at once",
	pircan.PolicyDeny:         "every request is declined at once",
}

var policyChoices = func() []policyChoice {
	out := make([]policyChoice, len(pircan.Policies))
	for i, p := range pircan.Policies {
		out[i] = policyChoice{p, p + ": " + policyTexts[p]}
	}
	return out
}()

func (h *Handler) agents(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) {
	view, err := h.core.Owned(r.Context(), pircan.OwnerCaller(s))
	if err != nil {
		h.internal(w, err)
		return
	}
	h.render(w, http.StatusOK, "agents", page{Title: "Your agents", Account: s.Account, Owner: view.Owner, CSRF: s.CSRFToken,
		Nav: "agents", Flash: flashes[r.URL.Query().Get("done")], Data: agentsData{OwnerView: view, Policies: policyChoices, Account: s.Account}})
}

type sessionsData struct {
	Current  string
	Sessions []pircan.SessionItem
}

func (h *Handler) sessions(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) {
	c := pircan.OwnerCaller(s)
	owner, err := h.core.AccountOwner(r.Context(), c)
	if err != nil {
		h.internal(w, err)
		return
	}
	list, err := h.core.Sessions(r.Context(), c)
	if err != nil {
		h.internal(w, err)
		return
	}
	h.render(w, http.StatusOK, "sessions", page{Title: "Portal sessions", Account: s.Account, Owner: owner, CSRF: s.CSRFToken,
		Nav: "sessions", Flash: flashes[r.URL.Query().Get("done")], Data: sessionsData{Current: s.ID, Sessions: list}})
}

// form is a form field, nil when absent (as the operations' arguments take it).
func form(r *http.Request, field string) *string {
	if _, ok := r.PostForm[field]; !ok {
		return nil
	}
	v := r.PostForm.Get(field)
	return &v
}

func (h *Handler) setPolicy(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) (string, error) {
	err := h.core.OwnerSetPolicy(r.Context(), pircan.OwnerCaller(s), r.PostForm.Get("agent_id"), pircan.PolicyArgs{Policy: form(r, "policy")})
	return "/owner?done=policy", err
}

func (h *Handler) decide(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) (string, error) {
	c, agentID, requestID := pircan.OwnerCaller(s), r.PostForm.Get("agent_id"), form(r, "request_id")
	switch r.PostForm.Get("decision") {
	case "accept":
		// The form lists the requested scopes as checkboxes: none checked
		// grants none (refused), never "as requested".
		a := pircan.DecideArgs{RequestID: requestID, Scopes: &[]string{}}
		*a.Scopes = append(*a.Scopes, r.PostForm["scopes"]...)
		if v := r.PostForm.Get("ttl_days"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return "", formError("The duration is a whole number of days.")
			}
			a.TTLDays = &n
		}
		_, err := h.core.OwnerAccept(r.Context(), c, agentID, a)
		return "/owner?done=accepted", err
	case "decline":
		_, err := h.core.OwnerDecline(r.Context(), c, agentID, pircan.RequestArgs{RequestID: requestID})
		return "/owner?done=declined", err
	}
	return "", formError("Accept or decline.")
}

func (h *Handler) revoke(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) (string, error) {
	agentID, agreementID := r.PostForm.Get("agent_id"), r.PostForm.Get("agreement_id")
	if r.PostForm.Get("confirm") != "yes" {
		if err := pircan.CheckID("agent_id", agentID); err != nil {
			return "", err
		}
		if err := pircan.CheckID("agreement_id", agreementID); err != nil {
			return "", err
		}
		h.confirm(w, s, confirmData{Heading: "Revoke this agreement?",
			Text:   "The agreement " + agreementID + " ends for both parties at once; the other agent is told. This cannot be undone: a new agreement needs a new request.",
			Action: "/owner/revoke", Button: "Revoke", ID: "confirm-revoke",
			Fields: map[string]string{"agent_id": agentID, "agreement_id": agreementID}})
		return "", nil
	}
	return "/owner?done=revoked", h.core.OwnerRevoke(r.Context(), pircan.OwnerCaller(s), agentID, pircan.RevokeArgs{AgreementID: &agreementID})
}

type confirmData struct {
	Heading, Text, Action, Button, ID string
	Fields                            map[string]string
}

// confirm is the second step of an action that cannot be undone: the same
// form again, with confirm=yes.
func (h *Handler) confirm(w http.ResponseWriter, s pircan.PortalSession, d confirmData) {
	h.render(w, http.StatusOK, "confirm", page{Title: d.Heading, Account: s.Account, CSRF: s.CSRFToken, Nav: "agents", Data: d})
}

func (h *Handler) decideBinding(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) (string, error) {
	c, agentID := pircan.OwnerCaller(s), r.PostForm.Get("agent_id")
	switch r.PostForm.Get("decision") {
	case "confirm":
		return "/owner?done=confirmed", h.core.DecideBinding(r.Context(), c, agentID, true)
	case "decline":
		return "/owner?done=refused", h.core.DecideBinding(r.Context(), c, agentID, false)
	}
	return "", formError("Confirm or decline.")
}

func (h *Handler) release(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) (string, error) {
	agentID := r.PostForm.Get("agent_id")
	if r.PostForm.Get("confirm") != "yes" {
		if err := pircan.CheckID("agent_id", agentID); err != nil {
			return "", err
		}
		h.confirm(w, s, confirmData{Heading: "Release this agent?",
			Text:   "You stop being the owner of agent " + agentID + ". Its own account acts as its owner again and can change a locked policy.",
			Action: "/owner/release", Button: "Release", ID: "confirm-release", Fields: map[string]string{"agent_id": agentID}})
		return "", nil
	}
	return "/owner?done=released", h.core.ReleaseAgent(r.Context(), pircan.OwnerCaller(s), agentID)
}

func (h *Handler) endSession(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) (string, error) {
	id := r.PostForm.Get("session_id")
	if err := h.core.EndSession(r.Context(), pircan.OwnerCaller(s), id); err != nil {
		return "", err
	}
	if id == s.ID {
		return "/owner/signed-out", nil
	}
	return "/owner/sessions?done=ended", nil
}

func (h *Handler) signOut(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) (string, error) {
	if err := h.core.EndSession(r.Context(), pircan.OwnerCaller(s), s.ID); err != nil {
		return "", err
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/owner", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return "/owner/signed-out", nil
}
