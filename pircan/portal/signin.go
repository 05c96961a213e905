package portal

import (
	"net/http"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// The signed-out pages: the start page, the waiting code, signed out.

// index shows the signed-in portal, the waiting sign-in (the same code on
// every reload: the page refreshes to notice the LOGIN), or the start page.
// A GET never starts a sign-in: only the start form's POST does.
func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	s, err := h.current(r)
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
		h.start(w, r, "This code has expired", "Codes work for "+pircan.Span(pircan.CodeLifetime)+". Get a new code to sign in.")
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
		token = pircan.NewSecret()
		http.SetCookie(w, &http.Cookie{Name: StartCookie, Value: token, Path: "/owner", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: secure(r)})
	}
	h.render(w, http.StatusOK, "start", page{Title: "Sign in", Data: startData{heading, text, token}})
}

// startSignIn is the start form's POST: a new code for this browser, unless
// it already has one that is still valid (a second click is no new start).
func (h *Handler) startSignIn(w http.ResponseWriter, r *http.Request) {
	if !h.readForm(w, r, 4<<10) {
		return
	}
	c, err := r.Cookie(StartCookie)
	if err != nil || !sameToken(r.PostForm.Get("csrf"), c.Value) {
		h.forbidden(w)
		return
	}
	s, err := h.current(r)
	if err != nil {
		h.internal(w, err)
		return
	}
	if s.Waiting || s.Active {
		http.Redirect(w, r, "/owner", http.StatusSeeOther)
		return
	}
	started, err := h.core.StartSignIn(r.Context(), pircan.OwnerCaller(pircan.PortalSession{}),
		pircan.SignInArgs{Address: address(r), UserAgent: r.UserAgent()})
	if perr := pircan.AsError(err); err != nil && perr.Code == pircan.CodeRateLimited {
		h.refuse(w, http.StatusTooManyRequests, "Too many sign-in codes", perr)
		return
	}
	if err != nil {
		h.internal(w, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: started.Secret, Path: "/owner",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r),
		MaxAge: int(pircan.SessionLifetime / time.Second)})
	http.Redirect(w, r, "/owner", http.StatusSeeOther)
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
