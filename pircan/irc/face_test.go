package irc

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
)

// newTestFace is the face over a core on st (nil: no store, for verbs that
// need none) with limits l and clock now (nil: time.Now).
func newTestFace(st pircan.Store, cfg Config) *Face {
	return New(pircan.NewService(st, pircan.Config{Limits: cfg.Limits, Now: cfg.Now}, zerolog.Nop()), nil, cfg, zerolog.Nop())
}

// handle is Face.Handle without the outcome.
func (f *Face) handle(ctx context.Context, s Sender, text string) []Reply {
	r, _ := f.Handle(ctx, s, text)
	return r
}
