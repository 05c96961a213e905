package pircan

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"time"
)

// Bearer tokens (DESIGN.md "Identity and tokens"): a token acts as its
// NickServ account on the HTTP faces, with the same agent, agreements and
// limits as that account on IRC. Only a hash is stored; the secret is shown
// once, when an operator issues it. No credential ever travels over IRC.

// TokenPrefix starts every token, so that one pasted in the wrong place is
// recognised (and secret scanners can find it).
const TokenPrefix = "pircan_"

// Token is an issued token as stored: never its secret.
type Token struct {
	ID        string
	Account   string
	Label     string
	CreatedAt time.Time
	ExpiresAt time.Time // zero: never
	RevokedAt time.Time // zero: not revoked
	UsedAt    time.Time // first use; zero: never used
	// Rights narrow the token's forum rights (nil: the account's own;
	// ["read"]: read-only).
	Rights []string
}

// Active reports whether the token may be used at now.
func (t Token) Active(now time.Time) bool {
	return t.RevokedAt.IsZero() && (t.ExpiresAt.IsZero() || now.Before(t.ExpiresAt))
}

// NewToken is a token to store.
type NewToken struct {
	Account      string
	Label        string
	ExpiresAt    time.Time // zero: never
	SecretSHA256 []byte
	Rights       []string // nil: the account's forum rights
}

// TokenStore keeps tokens; each change (audited with the actor) and a
// token's first use write an audit row.
type TokenStore interface {
	IssueToken(ctx context.Context, actor Actor, t NewToken) (Token, error)
	// Tokens lists the tokens of account ("": of every account), newest first.
	Tokens(ctx context.Context, account string) ([]Token, error)
	// RevokeToken revokes a token: ErrNotFound for an unknown id; revoking a
	// revoked one changes nothing.
	RevokeToken(ctx context.Context, actor Actor, id string) (Token, error)
	// TokenBySecret finds the token whose secret hashes to secretSHA256
	// (ErrNotFound) and records its first use.
	TokenBySecret(ctx context.Context, secretSHA256 []byte) (Token, error)
}

// IssuedToken is a new token with its secret, which exists only here.
type IssuedToken struct {
	Token
	Secret string
}

// IssueTokenArgs issue a token for an account; ExpiresIn nil: until
// revoked.
type IssueTokenArgs struct {
	Account   *string        `json:"account" check:"required,account"`
	Label     *string        `json:"label" check:"text=100,clear"`
	ExpiresIn *time.Duration `json:"expires_in"`
	// Rights narrow the token's forum rights (nil: the account's own;
	// ["read"]: read-only); an unknown right is invalid_argument.
	Rights *[]string `json:"rights"`
}

// IssueToken issues a token for an account (operators only).
func (s *Service) IssueToken(ctx context.Context, c Caller, a IssueTokenArgs) (IssuedToken, error) {
	if err := operating(c, &a); err != nil {
		return IssuedToken{}, err
	}
	secret := TokenPrefix + NewSecret()
	sum := sha256.Sum256([]byte(secret))
	nt := NewToken{Account: *a.Account, SecretSHA256: sum[:]}
	if a.Rights != nil {
		if err := checkRightNames("rights", *a.Rights, true); err != nil {
			return IssuedToken{}, err
		}
		nt.Rights = normalRights(*a.Rights)
	}
	if a.Label != nil {
		nt.Label = *a.Label
	}
	if a.ExpiresIn != nil {
		if *a.ExpiresIn <= 0 {
			return IssuedToken{}, FieldError(CodeInvalidArgument, "expires_in", "A token's lifetime is positive.")
		}
		nt.ExpiresAt = s.cfg.Now().Add(*a.ExpiresIn)
	}
	t, err := s.store.IssueToken(ctx, c.actor(), nt)
	if err != nil {
		return IssuedToken{}, err
	}
	return IssuedToken{Token: t, Secret: secret}, nil
}

// TokensArgs list tokens: an account's, or (nil) every account's.
type TokensArgs struct {
	Account *string `json:"account" check:"account"`
}

// Tokens lists tokens, newest first (operators only).
func (s *Service) Tokens(ctx context.Context, c Caller, a TokensArgs) ([]Token, error) {
	if err := operating(c, &a); err != nil {
		return nil, err
	}
	account := ""
	if a.Account != nil {
		account = *a.Account
	}
	return s.store.Tokens(ctx, account)
}

// TokenArgs name a token.
type TokenArgs struct {
	TokenID *string `json:"token_id" check:"required,id"`
}

// RevokeToken revokes a token by its id (operators only).
func (s *Service) RevokeToken(ctx context.Context, c Caller, a TokenArgs) (Token, error) {
	if err := operating(c, &a); err != nil {
		return Token{}, err
	}
	t, err := s.store.RevokeToken(ctx, c.actor(), *a.TokenID)
	if errors.Is(err, ErrNotFound) {
		return Token{}, FieldError(CodeNotFound, "token_id", "No token %s.", *a.TokenID)
	}
	return t, err
}

// secretBytes is the randomness of every secret the core mints (tokens,
// portal cookies, CSRF tokens): 256 bits.
const secretBytes = 32

// NewSecret returns a fresh random secret, base64url without padding (43
// characters): the core mints every credential, faces only carry them.
func NewSecret() string {
	s, _ := newSecret()
	return s
}

func newSecret() (string, []byte) {
	raw := make([]byte, secretBytes)
	_, _ = rand.Read(raw) // crypto/rand does not fail on supported platforms
	return base64.RawURLEncoding.EncodeToString(raw), raw
}

// ErrUnauthorized: a missing, unknown, expired or revoked token. Faces
// answer it as HTTP does (401 with WWW-Authenticate: Bearer), never with
// which of the four it was.
var ErrUnauthorized = errors.New("unauthorized")

// TokenAccount is the bearer check, before there is a Caller (so not an
// operation): the account a bearer token stands for: a missing,
// unknown, expired or revoked token is ErrUnauthorized. A face that reads
// the caller per call (MCP: an agent may register mid-session) needs no
// more at the door.
func (s *Service) TokenAccount(ctx context.Context, secret string) (string, error) {
	t, err := s.TokenOf(ctx, secret)
	return t.Account, err
}

// TokenOf is the active token a bearer secret is: ErrUnauthorized as
// TokenAccount. The forum reads its rights.
func (s *Service) TokenOf(ctx context.Context, secret string) (Token, error) {
	if !strings.HasPrefix(secret, TokenPrefix) || len(secret) > 128 {
		return Token{}, ErrUnauthorized
	}
	sum := sha256.Sum256([]byte(secret))
	t, err := s.store.TokenBySecret(ctx, sum[:])
	if errors.Is(err, ErrNotFound) {
		return Token{}, ErrUnauthorized
	}
	if err != nil {
		return Token{}, err
	}
	if !t.Active(s.cfg.Now()) {
		return Token{}, ErrUnauthorized
	}
	return t, nil
}

// Authenticate is the Caller a bearer token stands for on face: its
// account, with the agent registered for it (the bearer check, which makes
// the Caller: not an operation).
func (s *Service) Authenticate(ctx context.Context, face Face, secret string) (Caller, error) {
	account, err := s.TokenAccount(ctx, secret)
	if err != nil {
		return Caller{}, err
	}
	return s.Caller(ctx, face, account, "")
}

// newTokenSecret mints a token's secret and the token to store (its hash).
func (s *Service) newTokenSecret(account, label string, rights []string) (IssuedToken, NewToken) {
	secret := TokenPrefix + NewSecret()
	sum := sha256.Sum256([]byte(secret))
	return IssuedToken{Secret: secret}, NewToken{Account: account, Label: label, SecretSHA256: sum[:], Rights: rights}
}
