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

// TokenStore keeps tokens; each change and a token's first use write an
// audit row.
type TokenStore interface {
	IssueToken(ctx context.Context, t NewToken) (Token, error)
	// Tokens lists the tokens of account ("": of every account), newest first.
	Tokens(ctx context.Context, account string) ([]Token, error)
	// RevokeToken revokes a token: ErrNotFound for an unknown id; revoking a
	// revoked one changes nothing.
	RevokeToken(ctx context.Context, id string) (Token, error)
	// TokenBySecret finds the token whose secret hashes to secretSHA256
	// (ErrNotFound) and records its first use.
	TokenBySecret(ctx context.Context, secretSHA256 []byte) (Token, error)
}

// IssuedToken is a new token with its secret, which exists only here.
type IssuedToken struct {
	Token
	Secret string
}

// maxTokenLabel bounds a token's label (an operator's note).
const maxTokenLabel = 100

// IssueToken issues a token for account, valid for ttl (0: until revoked).
func (s *Service) IssueToken(ctx context.Context, account, label string, ttl time.Duration) (IssuedToken, error) {
	return s.IssueTokenRights(ctx, account, label, ttl, nil)
}

// IssueTokenRights issues a token narrowed to some forum rights (nil: the
// account's own; ["read"]: read-only); an unknown right is invalid_argument.
func (s *Service) IssueTokenRights(ctx context.Context, account, label string, ttl time.Duration, rights []string) (IssuedToken, error) {
	if rights != nil {
		if err := checkRightNames("rights", rights, true); err != nil {
			return IssuedToken{}, err
		}
		rights = normalRights(rights)
	}
	if err := CheckAccountName("account", account); err != nil {
		return IssuedToken{}, err
	}
	if err := CheckOptionalText("label", label, maxTokenLabel); err != nil {
		return IssuedToken{}, err
	}
	if ttl < 0 {
		return IssuedToken{}, FieldError(CodeInvalidArgument, "expires", "A token's lifetime is positive.")
	}
	secret := TokenPrefix + NewSecret()
	sum := sha256.Sum256([]byte(secret))
	nt := NewToken{Account: account, Label: label, SecretSHA256: sum[:], Rights: rights}
	if ttl > 0 {
		nt.ExpiresAt = s.cfg.Now().Add(ttl)
	}
	t, err := s.store.IssueToken(ctx, nt)
	if err != nil {
		return IssuedToken{}, err
	}
	return IssuedToken{Token: t, Secret: secret}, nil
}

// Tokens lists the tokens of account ("": all).
func (s *Service) Tokens(ctx context.Context, account string) ([]Token, error) {
	return s.store.Tokens(ctx, account)
}

// RevokeToken revokes a token by its id.
func (s *Service) RevokeToken(ctx context.Context, id string) (Token, error) {
	if err := CheckID("token_id", id); err != nil {
		return Token{}, err
	}
	t, err := s.store.RevokeToken(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return Token{}, FieldError(CodeNotFound, "token_id", "No token %s.", id)
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

// TokenAccount is the account a bearer token stands for: a missing,
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
// account, with the agent registered for it.
func (s *Service) Authenticate(ctx context.Context, face Face, secret string) (Caller, error) {
	account, err := s.TokenAccount(ctx, secret)
	if err != nil {
		return Caller{}, err
	}
	return s.Caller(ctx, face, account, "")
}
