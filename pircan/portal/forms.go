package portal

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"

	"github.com/creatimus/pircan/pircan"
)

// What every form shares: reading it, its session and CSRF token, the
// per-minute limit, and the page a refusal becomes.

// readForm reads a form body of at most limit bytes, or answers 400.
func (h *Handler) readForm(w http.ResponseWriter, r *http.Request, limit int64) bool {
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	if err := r.ParseForm(); err != nil {
		h.message(w, http.StatusBadRequest, "Bad request", "The form could not be read.", "/owner", "Back to the owner portal")
		return false
	}
	return true
}

func sameToken(got, want string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func (h *Handler) forbidden(w http.ResponseWriter) {
	h.message(w, http.StatusForbidden, "Forbidden", "The form's security token is missing or wrong. Reload the page and try again.", "/owner", "Back to the owner portal")
}

// signedIn wraps a GET page that needs an active session.
func (h *Handler) signedIn(fn func(http.ResponseWriter, *http.Request, pircan.PortalSession)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := h.current(r)
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
// It returns the page to go to next ("": fn rendered one).
func (h *Handler) action(fn func(http.ResponseWriter, *http.Request, pircan.PortalSession) (string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !h.readForm(w, r, 64<<10) {
			return
		}
		s, err := h.current(r)
		if err != nil {
			h.internal(w, err)
			return
		}
		if !s.Active {
			h.message(w, http.StatusForbidden, "Not signed in", "This browser is not signed in (or its session ended).", "/owner", "Sign in")
			return
		}
		if !sameToken(r.PostForm.Get("csrf"), s.CSRFToken) {
			h.forbidden(w)
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

// form is a form field, nil when absent (as the operations' arguments take it).
func form(r *http.Request, field string) *string {
	if _, ok := r.PostForm[field]; !ok {
		return nil
	}
	v := r.PostForm.Get(field)
	return &v
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
	// the forum's (pircan/forum_errors.go)
	pircan.CodeForbidden:              {http.StatusForbidden, "Not allowed"},
	pircan.CodeUserSessionRequired:    {http.StatusForbidden, "Not allowed"},
	pircan.CodeThreadAuthorityMissing: {http.StatusForbidden, "No authority over this thread"},
	pircan.CodeThreadNotFound:         {http.StatusNotFound, "Not found"},
	pircan.CodeNothingToConfirm:       {http.StatusConflict, "Nothing to confirm"},
	pircan.CodeStateInvalid:           {http.StatusConflict, "Not done"},
	pircan.CodeThreadClosed:           {http.StatusConflict, "Thread closed"},
	pircan.CodeStateNotSettable:       {http.StatusBadRequest, "Not done"},
	pircan.CodeInvalidBody:            {http.StatusBadRequest, "Not done"},
	// the dialectic profile's and access's (forum_claims.go, forum_access.go)
	pircan.CodeClaimNotFound:     {http.StatusNotFound, "Not found"},
	pircan.CodeClaimSuperseded:   {http.StatusConflict, "Claim replaced"},
	pircan.CodeTokenRightMissing: {http.StatusForbidden, "Not allowed"},
	pircan.CodeRequestNotFound:   {http.StatusNotFound, "Not found"},
	pircan.CodeRequestForbidden:  {http.StatusForbidden, "Not allowed"},
	pircan.CodeRequestDecided:    {http.StatusConflict, "Already decided"},
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
	h.refuse(w, ref.status, ref.heading, perr)
}

// refuse is the page of a refusal: the operation's words, and when to
// retry (Retry-After) if it says.
func (h *Handler) refuse(w http.ResponseWriter, status int, heading string, perr *pircan.Error) {
	if secs := perr.RetryAfterSeconds(); secs > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	h.message(w, status, heading, perr.Message, "/owner", "Back to the owner portal")
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

type confirmData struct {
	Heading, Text, Action, Button, ID string
	Fields                            map[string]string
}

// confirm is the second step of an action that cannot be undone: the same
// form again, with confirm=yes.
func (h *Handler) confirm(w http.ResponseWriter, s pircan.PortalSession, d confirmData) {
	h.render(w, http.StatusOK, "confirm", page{Title: d.Heading, Account: s.Account, CSRF: s.CSRFToken, Nav: "agents", Data: d})
}
