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
type PendingBinding struct {
	AgentID      string
	Name         string
	Description  string
	AgentAccount string
	NamedAt      time.Time
}

// ErrOwnerConfirmed: the agent's owner has confirmed, so the agent alone
// cannot name another owner or clear it.
var ErrOwnerConfirmed = errors.New("owner confirmed")

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
		return nil, FieldError(CodeNotFound, "code", "No browser is waiting with that code: it is wrong, older than 10 minutes, or already used. Get a new code in the portal.")
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

// maxAccount bounds an account name given in OWNER (NickServ accounts are
// nick-sized; 64 leaves room for any network's NICKLEN).
const maxAccount = 64

// CheckAccountName validates an IRC services account name as a person
// would type it: one word, no IRC special characters.
func CheckAccountName(field, s string) *Error {
	if err := checkText(field, s, maxAccount); err != nil {
		return err
	}
	if strings.ContainsAny(s, " ,*?!@#:") || strings.IndexFunc(s, unicode.IsSpace) >= 0 {
		return FieldError(CodeInvalidArgument, field, "%q is a NickServ account name: one word, without spaces or any of , * ? ! @ # :", field)
	}
	return nil
}

// ownerNote tells the agent what happens after it named an owner.
const ownerNote = "Pending until that account signs in to the owner portal (LOGIN from its own nick) and confirms."

// owner is OWNER: with no argument it shows the owner binding;
// {"account":"alice"} names an owner (pending until alice confirms in the
// portal); {"clear":true} withdraws a pending or declined one. A confirmed
// owner binds the agent: only that owner (portal) or an operator ends it.
func owner(ctx context.Context, c *call) ([]Reply, error) {
	var a struct {
		Account *string `json:"account"`
		Clear   *bool   `json:"clear"`
	}
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	confirmed := func(err error) error {
		b, _ := c.svc.store.OwnerBinding(ctx, c.agent.ID)
		who := "your owner"
		if b != nil {
			who = b.Account
		}
		return ruleErrors(err, map[error]*Error{
			ErrOwnerConfirmed: Errorf(CodeNotAuthorized, "%s confirmed as your owner; only they (owner portal) or an operator can change it.", who),
		})
	}
	switch {
	case a.Account != nil && a.Clear != nil:
		return nil, FieldError(CodeInvalidArgument, "clear", `Give "account" or "clear", not both.`)
	case a.Clear != nil:
		if !*a.Clear {
			return nil, FieldError(CodeInvalidArgument, "clear", `"clear" is true, or leave it out.`)
		}
		old, err := c.svc.store.ClearOwner(ctx, c.actor())
		if err != nil {
			return nil, confirmed(err)
		}
		var was any
		if old != nil {
			was = Text(old.Account)
		}
		return one("OWNER", Object{{"account", nil}, {"status", "none"}, {"cleared", was}}), nil
	case a.Account != nil:
		if err := CheckAccountName("account", *a.Account); err != nil {
			return nil, err
		}
		if FoldAccount(*a.Account) == FoldAccount(c.sender.Account) {
			return nil, FieldError(CodeInvalidArgument, "account", "That is your own account; without another owner it already acts as your owner.")
		}
		b, err := c.svc.store.NameOwner(ctx, c.actor(), *a.Account)
		if err != nil {
			if errors.Is(err, ErrCooldown) {
				return nil, FieldError(CodeCooldown, "account", "That account declined to be your owner in the last 24 hours.")
			}
			return nil, confirmed(err)
		}
		return one("OWNER", Object{{"account", Text(b.Account)}, {"status", b.Status}, {"note", ownerNote}}), nil
	}
	b, err := c.svc.store.OwnerBinding(ctx, c.agent.ID)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return one("OWNER", Object{{"account", nil}, {"status", "none"}}), nil
	}
	out := Object{{"account", Text(b.Account)}, {"status", b.Status}, {"since", timeText(b.NamedAt)}}
	if b.Status != BindingPending {
		out[2] = Field{"since", timeText(b.DecidedAt)}
	}
	if b.Status == BindingConfirmed && b.Owner != nil {
		out = append(out, Field{"name", Text(b.Owner.Name)}, Field{"verification", b.Owner.Verification})
	}
	return one("OWNER", out), nil
}
