package store

import (
	"context"
	"errors"

	"github.com/creatimus/pircan/pircan"
)

// Placeholders while tokens and webhooks are built (branch mcp); replaced
// by store/tokens.go and store/webhooks.go.
var errNotYet = errors.New("not implemented yet")

func (s *Store) AddWebhook(context.Context, pircan.Actor, string, string, int) (pircan.Webhook, error) {
	return pircan.Webhook{}, errNotYet
}
func (s *Store) Webhooks(context.Context, string) ([]pircan.Webhook, error) { return nil, errNotYet }
func (s *Store) DeleteWebhook(context.Context, pircan.Actor, string) error  { return errNotYet }
