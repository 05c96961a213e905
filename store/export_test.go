package store

import (
	"context"
	"time"

	"github.com/creatimus/pircan/store/db"
)

// PipeSteps runs steps in one pipelined transaction (pipe.go): queued in
// order and sent at once, with the commit or (withCommit false) before it.
func (s *Store) PipeSteps(ctx context.Context, withCommit bool, steps ...func(q *db.Queries) error) error {
	return s.withPipe(ctx, func(ctx context.Context, p *pipe) error {
		for _, st := range steps {
			p.queue(st)
		}
		if withCommit {
			return nil
		}
		return p.send(ctx)
	})
}

// ErrPipeOrder is a pipelined step that changed its statements.
var ErrPipeOrder = errPipeOrder

// Hooks into the agent cache for its tests (agentcache_test.go).

// OnAgentForget tells f of every agent the cache forgets ("*": all, which
// includes starting and stopping to trust it). Set before RunAgentCache.
func (s *Store) OnAgentForget(f func(agentID string)) { s.agents.forgotten = f }

// TrustAgentCache trusts the cache without listening: what a process sees
// of its own writes before (or without) their notifications.
func (s *Store) TrustAgentCache() { s.agents.setLive(true) }

// SetAgentCacheClock replaces the cache's clock (expiry).
func (s *Store) SetAgentCacheClock(now func() time.Time) { s.agents.now = now }

// AgentCacheLimit sets how many agents the cache holds.
func (s *Store) AgentCacheLimit(n int) { s.agents.max = n }

// AgentCacheLen is how many agents it holds.
func (s *Store) AgentCacheLen() int {
	s.agents.mu.Lock()
	defer s.agents.mu.Unlock()
	return len(s.agents.byKey)
}

// SetFindThresholds sets how many agents FIND's count of a text looks at
// first and walks at most, and up to how many holders a capability is
// walked whole (find.go), until the test ends.
func SetFindThresholds(t interface{ Cleanup(func()) }, sample, walk, whole int64) {
	was := [3]int64{findSample, findWalk, findWhole}
	findSample, findWalk, findWhole = sample, walk, whole
	t.Cleanup(func() { findSample, findWalk, findWhole = was[0], was[1], was[2] })
}

// Hooks into the token cache (tokencache_test.go).

// OnTokenForget tells f of every token the cache forgets ("*": all).
func (s *Store) OnTokenForget(f func(tokenID string)) {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	s.tokens.forgotten = f
}

// TokenCacheLimit sets how many tokens the cache holds.
func (s *Store) TokenCacheLimit(n int) { s.tokens.max = n }

// TokenCacheLen is how many tokens it holds.
func (s *Store) TokenCacheLen() int {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	return len(s.tokens.byKey)
}

// TrustTokenCache trusts the token cache without listening.
func (s *Store) TrustTokenCache() { s.tokens.setLive(true) }

// OnRightsForget tells f of every account the rights cache forgets ("*": all).
func (s *Store) OnRightsForget(f func(account string)) {
	s.rights.mu.Lock()
	defer s.rights.mu.Unlock()
	s.rights.forgotten = f
}

// PipeTwoBatches sends first with BEGIN, calls between (a refusal: its
// error), then sends last with COMMIT: a pipelined write's two round trips.
func (s *Store) PipeTwoBatches(ctx context.Context, first func(q *db.Queries) error, between func() error,
	last func(q *db.Queries) error) error {
	return s.withPipe(ctx, func(ctx context.Context, p *pipe) error {
		p.queue(first)
		if err := p.send(ctx); err != nil {
			return err
		}
		if err := between(); err != nil {
			return err
		}
		p.queue(last)
		return nil
	})
}
