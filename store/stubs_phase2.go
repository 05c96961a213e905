package store

import (
	"context"
	"errors"

	"github.com/creatimus/pircan/pircan"
)

// Placeholders while tokens are built (branch mcp); replaced by
// store/tokens.go.
var errNotYet = errors.New("not implemented yet")

func (s *Store) IssueToken(context.Context, pircan.NewToken) (pircan.Token, error) {
	return pircan.Token{}, errNotYet
}
func (s *Store) Tokens(context.Context, string) ([]pircan.Token, error) { return nil, errNotYet }
func (s *Store) RevokeToken(context.Context, string) (pircan.Token, error) {
	return pircan.Token{}, errNotYet
}
func (s *Store) TokenBySecret(context.Context, []byte) (pircan.Token, error) {
	return pircan.Token{}, errNotYet
}
