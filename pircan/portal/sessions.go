package portal

import (
	"net/http"

	"github.com/creatimus/pircan/pircan"
)

// The sessions page and its actions: ending a session, signing out.

type sessionsData struct {
	Current  string
	Sessions []pircan.SessionItem
}

func (h *Handler) sessions(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) {
	c := pircan.OwnerCaller(s)
	owner, err := h.core.AccountOwner(r.Context(), c, pircan.NoArgs{})
	if err != nil {
		h.internal(w, err)
		return
	}
	list, err := h.core.Sessions(r.Context(), c, pircan.NoArgs{})
	if err != nil {
		h.internal(w, err)
		return
	}
	h.render(w, http.StatusOK, "sessions", page{Title: "Portal sessions", Account: s.Account, Owner: owner, CSRF: s.CSRFToken,
		Nav: "sessions", Flash: flashes[r.URL.Query().Get("done")], Data: sessionsData{Current: s.ID, Sessions: list}})
}

func (h *Handler) endSession(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) (string, error) {
	id := r.PostForm.Get("session_id")
	if _, err := h.core.EndSession(r.Context(), pircan.OwnerCaller(s), pircan.SessionArgs{SessionID: &id}); err != nil {
		return "", err
	}
	if id == s.ID {
		return "/owner/signed-out", nil
	}
	return "/owner/sessions?done=ended", nil
}

func (h *Handler) signOut(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) (string, error) {
	if _, err := h.core.EndSession(r.Context(), pircan.OwnerCaller(s), pircan.SessionArgs{SessionID: &s.ID}); err != nil {
		return "", err
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/owner", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return "/owner/signed-out", nil
}
