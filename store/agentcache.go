package store

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
)

// Every request begins by reading its caller's agent (pircan.Service.Caller);
// on a quiet network that one read was most of a WHOAMI's time. The agent
// cache keeps those reads in memory, trusted only while this process
// listens for the changes every process makes (schema 00013: the
// 'pircan_agents' notifications). The rules:
//
//   - Entries are trusted only while listening: until LISTEN succeeds, and
//     from the moment the listening connection fails until it listens again,
//     nothing is served from memory (and everything is forgotten).
//   - A change this process makes is forgotten when its transaction commits
//     (read your own writes, with no wait for the notification); a change
//     another process makes is forgotten when its notification arrives
//     (normally within a millisecond of its commit).
//   - A read that raced with any change is not kept (gen), so a row read
//     before a commit never outlives that commit's notification.
//   - Each entry lives agentCacheTTL at most, which bounds what a lost
//     notification (a connection failing silently) could leave stale.
type agentCache = listenCache[string, pircan.Agent] // folded account → agent

const (
	agentCacheTTL  = 30 * time.Second
	agentCacheSize = 10_000 // agents; ~1 KB each at most
	// agentsChannel is the notification channel of schema 00013.
	agentsChannel = "pircan_agents"
)

func newAgentCache() *agentCache {
	return newListenCache[string](agentCacheSize, agentCacheTTL,
		func(a pircan.Agent) string { return a.ID }, copyAgent)
}

// setCachesLive trusts (or stops trusting) the caches kept by the one
// listener, forgetting all they hold.
func (s *Store) setCachesLive(live bool) {
	s.agents.setLive(live)
	s.tokens.setLive(live)
	s.rights.setLive(live)
}

// changed forgets what one notification on agentsChannel names: an agent,
// '*' (every agent), 'token:<id>' or 'rights:<folded account>'.
func (s *Store) changed(payload string) {
	if id, ok := strings.CutPrefix(payload, tokenPrefix); ok {
		s.tokens.forget(id)
		return
	}
	if account, ok := strings.CutPrefix(payload, rightsPrefix); ok {
		s.rights.forget(account)
		return
	}
	s.agents.forget(payload)
}

func copyAgent(a pircan.Agent) pircan.Agent {
	a.Capabilities = slices.Clone(a.Capabilities)
	if a.Owner != nil {
		o := *a.Owner
		a.Owner = &o
	}
	return a
}

// AgentCacheStats counts the Caller reads served from memory and from the
// database.
func (s *Store) AgentCacheStats() (hits, misses uint64) {
	return s.agents.hits.Load(), s.agents.misses.Load()
}

// RunAgentCache listens for agent, token and forum rights changes until ctx
// ends, and trusts the agent, token and rights caches while it listens.
// Without it (a store that never runs it) every read goes to the database.
func (s *Store) RunAgentCache(ctx context.Context, log zerolog.Logger) {
	defer s.setCachesLive(false)
	for ctx.Err() == nil {
		err := s.Listen(ctx, agentsChannel, func() { s.setCachesLive(true) }, s.changed)
		s.setCachesLive(false)
		if ctx.Err() != nil {
			return
		}
		log.Warn().Err(err).Msg("agent changes: not listening; requests read their agent and token from the database until listening again in 1 s")
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}
