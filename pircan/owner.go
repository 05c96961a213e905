package pircan

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"time"
	"unicode"
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
	// RetryAt: when a refused sign-in start (ErrRateLimited) may be tried again.
	RetryAt time.Time
}

// SessionItem is one live portal session of an account.
type SessionItem struct {
	ID         string
	Address    string
	UserAgent  string
	ApprovedAt time.Time
	ExpiresAt  time.Time
}

// OwnedAgent is an agent the portal shows a signed-in account, with its
// policy: one whose confirmed owner the account is, or the account's own
// agent. ReadOnly: the account is the agent's own and another account is
// its confirmed owner (OwnerAccount), so only that one holds owner powers.
type OwnedAgent struct {
	Agent
	Policy       string
	Locked       bool
	OwnerAccount string // the confirmed owner, "" if none
	ReadOnly     bool
}

// Owner binding states (OWNER; DESIGN.md "Owners").
const (
	BindingPending   = "pending"
	BindingConfirmed = "confirmed"
	BindingDeclined  = "declined"
)

// Binding is the owner account an agent named, and where it stands.
type Binding struct {
	Account   string
	Status    string
	NamedAt   time.Time
	DecidedAt time.Time
	Owner     *Owner // the account's owner row (name, verification), if any
}

// PendingBinding is an agent waiting for an account to confirm it as owner.
// PendingBinding is an agent waiting for an account to confirm it owns it.
type PendingBinding struct {
	AgentID      string
	Name         string
	Description  string
	AgentAccount string
	NamedAt      time.Time
}

// LoginArgs carry the code the owner portal shows.
type LoginArgs struct {
	Code *string `json:"code"`
}

// Login approves the browser waiting with the code, as the caller's account.
func (s *Service) Login(ctx context.Context, c Caller, a LoginArgs) (LoginResult, error) {
	if err := c.identified(); err != nil {
		return LoginResult{}, err
	}
	if a.Code == nil {
		return LoginResult{}, FieldError(CodeInvalidArgument, "code", `"code" is required: the code the owner portal shows, like BCDF-GHJK.`)
	}
	code, ok := NormalizeCode(*a.Code)
	if !ok {
		return LoginResult{}, FieldError(CodeInvalidArgument, "code", "A code is two groups of four letters, like BCDF-GHJK.")
	}
	res, err := s.store.Login(ctx, c.Account, code, s.cfg.Limits)
	switch {
	case errors.Is(err, ErrRateLimited):
		return LoginResult{}, Errorf(CodeRateLimited, "At most %d sign-in attempts per hour.", s.cfg.Limits.LoginsHour)
	case errors.Is(err, ErrNotFound):
		return LoginResult{}, FieldError(CodeNotFound, "code", "No browser is waiting with that code: it is wrong, older than %s, or already used. Get a new code in the portal.", Span(CodeLifetime))
	case err != nil:
		return LoginResult{}, err
	}
	if res.Browser == "" {
		res.Browser = "(unknown browser)"
	}
	return res, nil
}

// Logout ends every portal session of the caller's account and says how many.
func (s *Service) Logout(ctx context.Context, c Caller, _ NoArgs) (int, error) {
	if err := c.identified(); err != nil {
		return 0, err
	}
	return s.store.Logout(ctx, c.Account)
}

// MaxAccount bounds an account name given in OWNER (NickServ accounts are
// nick-sized; 64 leaves room for any network's NICKLEN).
const MaxAccount = 64

// CheckAccountName validates an IRC services account name as a person
// would type it: one word, no IRC special characters.
func CheckAccountName(field, s string) *Error {
	if err := checkText(field, s, MaxAccount); err != nil {
		return err
	}
	if strings.ContainsAny(s, " ,*?!@#:") || strings.IndexFunc(s, unicode.IsSpace) >= 0 {
		return FieldError(CodeInvalidArgument, field, "%q is a NickServ account name: one word, without spaces or any of , * ? ! @ # :", field)
	}
	return nil
}

// OwnerNote tells the agent what happens after it named an owner.
const OwnerNote = "Pending until that account signs in to the owner portal (LOGIN from its own nick) and confirms."

// OwnerArgs show the owner binding (none given), name an owner (Account:
// pending until that account confirms in the portal) or withdraw a pending
// or declined one (Clear).
type OwnerArgs struct {
	Account *string `json:"account"`
	Clear   *bool   `json:"clear"`
}

// OwnerResult is the caller's owner binding after the call (nil: none),
// and, after a Clear, the account the withdrawn one named ("": none).
type OwnerResult struct {
	Binding *Binding
	Named   bool // this call named Binding's account
	Cleared bool
	Was     string
}

// Owner shows, names or withdraws the caller's owner. A confirmed owner
// binds the agent: only that owner (portal) or an operator ends it.
func (s *Service) Owner(ctx context.Context, c Caller, a OwnerArgs) (OwnerResult, error) {
	agent, perr := c.agent()
	if perr != nil {
		return OwnerResult{}, perr
	}
	switch {
	case a.Account != nil && a.Clear != nil:
		return OwnerResult{}, FieldError(CodeInvalidArgument, "clear", `Give "account" or "clear", not both.`)
	case a.Clear != nil:
		if !*a.Clear {
			return OwnerResult{}, FieldError(CodeInvalidArgument, "clear", `"clear" is true, or leave it out.`)
		}
		old, err := s.store.ClearOwner(ctx, c.actor())
		if err != nil {
			return OwnerResult{}, err
		}
		out := OwnerResult{Cleared: true}
		if old != nil {
			out.Was = old.Account
		}
		return out, nil
	case a.Account != nil:
		if err := CheckAccountName("account", *a.Account); err != nil {
			return OwnerResult{}, err
		}
		if FoldAccount(*a.Account) == FoldAccount(c.Account) {
			return OwnerResult{}, FieldError(CodeInvalidArgument, "account", "That is your own account; without another owner it already acts as your owner.")
		}
		b, err := s.store.NameOwner(ctx, c.actor(), *a.Account)
		if err != nil {
			return OwnerResult{}, err
		}
		return OwnerResult{Binding: &b, Named: true}, nil
	}
	b, err := s.store.OwnerBinding(ctx, agent.ID)
	if err != nil {
		return OwnerResult{}, err
	}
	return OwnerResult{Binding: b}, nil
}
