package store

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
type agentCache struct {
	mu        sync.Mutex
	live      bool
	gen       uint64
	byAccount map[string]cachedAgent // folded account →
	accountOf map[string]string      // agent id → folded account
	max       int
	now       func() time.Time

	hits, misses atomic.Uint64
	forgotten    func(agentID string) // tests: told of every forget, "*" included
}

type cachedAgent struct {
	agent  pircan.Agent
	expiry time.Time
}

const (
	agentCacheTTL  = 30 * time.Second
	agentCacheSize = 10_000 // agents; ~1 KB each at most
	// agentsChannel is the notification channel of schema 00013.
	agentsChannel = "pircan_agents"
)

func newAgentCache() *agentCache {
	return &agentCache{byAccount: map[string]cachedAgent{}, accountOf: map[string]string{},
		max: agentCacheSize, now: time.Now}
}

// get returns the agent of a folded account, if trusted; else the
// generation a fill must present to put.
func (c *agentCache) get(folded string) (pircan.Agent, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byAccount[folded]
	if !ok || !c.live || !c.now().Before(e.expiry) {
		c.misses.Add(1)
		return pircan.Agent{}, false, c.gen
	}
	c.hits.Add(1)
	return copyAgent(e.agent), true, c.gen
}

// put keeps a read made under generation gen, unless something changed
// since or nothing is trusted.
func (c *agentCache) put(folded string, a pircan.Agent, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live || gen != c.gen {
		return
	}
	if _, ok := c.byAccount[folded]; !ok && len(c.byAccount) >= c.max {
		for k, e := range c.byAccount { // an arbitrary one: O(1)
			delete(c.byAccount, k)
			delete(c.accountOf, e.agent.ID)
			break
		}
	}
	c.byAccount[folded] = cachedAgent{agent: copyAgent(a), expiry: c.now().Add(agentCacheTTL)}
	c.accountOf[a.ID] = folded
}

// forget drops one agent ("*": all of them).
func (c *agentCache) forget(agentID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if agentID == "*" {
		clear(c.byAccount)
		clear(c.accountOf)
	} else if folded, ok := c.accountOf[agentID]; ok {
		delete(c.byAccount, folded)
		delete(c.accountOf, agentID)
	}
	if c.forgotten != nil {
		c.forgotten(agentID)
	}
}

// setLive forgets everything and says whether entries may be trusted from
// now on.
func (c *agentCache) setLive(live bool) {
	c.mu.Lock()
	c.live = live
	c.mu.Unlock()
	c.forget("*")
}

// setCachesLive trusts (or stops trusting) the caches kept by the one
// listener, forgetting all they hold.
func (s *Store) setCachesLive(live bool) {
	s.agents.setLive(live)
	s.tokens.setLive(live)
}

// changed forgets what one notification on agentsChannel names: an agent,
// '*' (every agent), or 'token:<id>'.
func (s *Store) changed(payload string) {
	if id, ok := strings.CutPrefix(payload, tokenPrefix); ok {
		s.tokens.forget(id)
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

// RunAgentCache listens for agent and token changes until ctx ends, and
// trusts the agent and token caches while it listens. Without it (a store
// that never runs it) every read goes to the database.
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
