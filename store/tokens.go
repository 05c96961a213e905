package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// Bearer tokens (pircan.TokenStore). Audit rows name a token by its id and
// label, never by its secret or hash.

var _ pircan.TokenStore = (*Store)(nil)

func toToken(r db.Token) pircan.Token {
	t := pircan.Token{ID: r.ID, Account: r.Account, Label: r.Label, CreatedAt: r.CreatedAt, Rights: r.Rights}
	if r.ExpiresAt.Valid {
		t.ExpiresAt = r.ExpiresAt.Time
	}
	if r.RevokedAt.Valid {
		t.RevokedAt = r.RevokedAt.Time
	}
	if r.UsedAt.Valid {
		t.UsedAt = r.UsedAt.Time
	}
	return t
}

// IssueToken implements pircan.TokenStore.
func (s *Store) IssueToken(ctx context.Context, actor pircan.Actor, nt pircan.NewToken) (pircan.Token, error) {
	var out pircan.Token
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		p := db.InsertTokenParams{Account: nt.Account, AccountFolded: foldAccount(nt.Account), Label: nt.Label,
			SecretSha256: nt.SecretSHA256, Rights: nt.Rights}
		if !nt.ExpiresAt.IsZero() {
			p.ExpiresAt = pgtype.Timestamptz{Time: nt.ExpiresAt, Valid: true}
		}
		r, err := q.InsertToken(ctx, p)
		if err != nil {
			return err
		}
		out = toToken(r)
		details := map[string]any{"account": out.Account, "label": out.Label}
		if out.Rights != nil {
			details["rights"] = out.Rights
		}
		if !out.ExpiresAt.IsZero() {
			details["expires_at"] = out.ExpiresAt
		}
		return audit(ctx, q, actor, "token.issued", out.ID, details)
	})
	return out, err
}

// Tokens implements pircan.TokenStore.
func (s *Store) Tokens(ctx context.Context, account string) ([]pircan.Token, error) {
	var filter *string
	if account != "" {
		f := foldAccount(account)
		filter = &f
	}
	var out []pircan.Token
	err := s.readPlanned(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.ListTokens(ctx, filter)
		for _, r := range rows {
			out = append(out, toToken(r))
		}
		return err
	})
	return out, err
}

// RevokeToken implements pircan.TokenStore: only the first revocation is a
// change (and an audit row); a later one returns the token as it is.
func (s *Store) RevokeToken(ctx context.Context, actor pircan.Actor, id string) (pircan.Token, error) {
	if !pircan.ValidID(id) {
		return pircan.Token{}, pircan.ErrNotFound
	}
	var out pircan.Token
	// Forgotten here at commit: this process refuses the token at once
	// (others on the notification, tokencache.go).
	defer s.tokens.forget(id)
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		r, err := q.RevokeToken(ctx, id)
		if errors.Is(err, errNoRows) {
			r, err = q.TokenByID(ctx, id)
			out = toToken(r)
			return notFound(err)
		}
		if err != nil {
			return err
		}
		out = toToken(r)
		return audit(ctx, q, actor, "token.revoked", out.ID,
			map[string]any{"account": out.Account, "label": out.Label})
	})
	return out, err
}

// TokenBySecret implements pircan.TokenStore. It returns revoked and
// expired tokens too: the core refuses them (Token.Active), by its clock.
// A token's first use is recorded once, with one audit row, however many
// requests race to be first; after that a lookup is one read, or none
// while the token cache holds it (tokencache.go).
func (s *Store) TokenBySecret(ctx context.Context, secretSHA256 []byte) (pircan.Token, error) {
	key, keyed := tokenKey(secretSHA256)
	var gen uint64
	if keyed {
		var t pircan.Token
		var ok bool
		if t, ok, gen = s.tokens.get(key); ok {
			return t, nil
		}
	}
	var r db.Token
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) (err error) {
		r, err = q.TokenBySecret(ctx, secretSHA256)
		return notFound(err)
	})
	if err != nil {
		return toToken(r), err
	}
	if r.UsedAt.Valid {
		t := toToken(r)
		if keyed {
			s.tokens.put(key, t, gen)
		}
		return t, nil
	}
	err = s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		used, err := q.MarkTokenUsed(ctx, r.ID)
		if errors.Is(err, errNoRows) {
			// another request was first
			r, err = q.TokenByID(ctx, r.ID)
			return notFound(err)
		}
		if err != nil {
			return err
		}
		r = used
		return audit(ctx, q, pircan.Actor{Account: r.Account}, "token.first_use", r.ID,
			map[string]any{"label": r.Label})
	})
	return toToken(r), err
}
