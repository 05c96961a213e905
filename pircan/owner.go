package pircan

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"time"
)

// Owner sign-in (spec §3 LOGIN, LOGOUT). The portal shows a code and keeps
// a secret in the browser's cookie; LOGIN with the code approves that
// browser for the sender's account. The code is not a secret: it only
// names a waiting browser, so nothing secret ever travels over IRC.
const (
	// CodeAlphabet is consonants only: no vowels (so no words) and no
	// digits to mistake for O or I.
	CodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"
	// CodeLifetime is how long a sign-in code can be used (once).
	CodeLifetime = 10 * time.Minute
	// SessionLifetime is how long an approved browser stays signed in.
	SessionLifetime = 12 * time.Hour
	// LoginWarning is LOGIN's reminder of what a code does.
	LoginWarning = "Only send a code from a page you opened yourself: it signs that browser in as you."
)

// NewSignInCode returns a fresh code of two groups of four letters, like
// BCDF-GHJK (20^8 ≈ 2.6e10 codes).
func NewSignInCode() string {
	var b strings.Builder
	buf := make([]byte, 16)
	for b.Len() < 9 {
		if _, err := rand.Read(buf); err != nil {
			panic(err) // crypto/rand does not fail on supported platforms
		}
		for _, x := range buf {
			if x >= 240 { // 240 = 12*20: keeps the letters uniform
				continue
			}
			if b.Len() == 4 {
				b.WriteByte('-')
			}
			b.WriteByte(CodeAlphabet[x%20])
			if b.Len() == 9 {
				break
			}
		}
	}
	return b.String()
}

// NormalizeCode reads a code as a person may type it (any case, with or
// without the dash or a space) and returns it as the portal shows it.
func NormalizeCode(s string) (string, bool) {
	s = strings.ToUpper(strings.TrimSpace(s))
	s = strings.NewReplacer("-", "", " ", "").Replace(s)
	if len(s) != 8 {
		return "", false
	}
	for _, r := range s {
		if !strings.ContainsRune(CodeAlphabet, r) {
			return "", false
		}
	}
	return s[:4] + "-" + s[4:], true
}

// LoginResult is the browser a LOGIN approved.
type LoginResult struct {
	SessionID string
	Account   string
	Browser   string    // the browser's User-Agent, as it sent it
	StartedAt time.Time // when the browser opened the portal and got the code
	ExpiresAt time.Time
}

// NewSignIn is a browser starting a sign-in.
type NewSignIn struct {
	SecretSHA256 []byte // of the cookie's secret; the secret itself is never stored
	CSRFToken    string
	Address      string
	UserAgent    string
}

// PortalSession is one browser's portal session as of now.
type PortalSession struct {
	ID        string
	Code      string
	CSRFToken string
	Address   string
	UserAgent string
	CreatedAt time.Time
	Account   string // "" until approved
	ExpiresAt time.Time
	Waiting   bool // unapproved, and its code still valid
	Active    bool // approved, not ended, not expired
}

// SessionItem is one live portal session of an account.
type SessionItem struct {
	ID         string
	Address    string
	UserAgent  string
	ApprovedAt time.Time
	ExpiresAt  time.Time
}

// OwnedAgent is an agent bound to an owner's account, with its policy.
type OwnedAgent struct {
	Agent
	Policy string
	Locked bool
}

func login(ctx context.Context, c *call) ([]Reply, error) {
	var a struct {
		Code *string `json:"code"`
	}
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	if a.Code == nil {
		return nil, FieldError(CodeInvalidArgument, "code", `"code" is required: the code the owner portal shows, like BCDF-GHJK.`)
	}
	code, ok := NormalizeCode(*a.Code)
	if !ok {
		return nil, FieldError(CodeInvalidArgument, "code", "A code is two groups of four letters, like BCDF-GHJK.")
	}
	res, err := c.svc.store.Login(ctx, c.sender.Account, code, c.svc.cfg.Limits)
	switch {
	case errors.Is(err, ErrRateLimited):
		return nil, Errorf(CodeRateLimited, "At most %d LOGIN attempts per hour.", c.svc.cfg.Limits.LoginsHour)
	case errors.Is(err, ErrNotFound):
		return nil, FieldError(CodeNotFound, "code", "No browser is waiting with that code: it is wrong, older than 10 minutes, or already used. Reload the portal for a new one.")
	case err != nil:
		return nil, err
	}
	browser := res.Browser
	if browser == "" {
		browser = "(unknown browser)"
	}
	return one("LOGIN", Object{
		{"signed_in", true}, {"account", Text(res.Account)}, {"browser", Text(browser)},
		{"started_at", res.StartedAt.UTC().Format("15:04 UTC")}, {"warning", LoginWarning},
	}), nil
}

func logout(ctx context.Context, c *call) ([]Reply, error) {
	if err := c.req.Decode(&struct{}{}); err != nil {
		return nil, err
	}
	n, err := c.svc.store.Logout(ctx, c.sender.Account)
	if err != nil {
		return nil, err
	}
	return one("LOGOUT", Object{{"sessions_ended", n}}), nil
}
