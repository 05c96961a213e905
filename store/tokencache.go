package store

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// Every request of the HTTP faces starts by checking its bearer token
// (pircan.Service.TokenAccount): a round trip to Postgres that was a fifth
// of an MCP call. The token cache keeps the tokens checked in memory under
// the agent cache's rules (agentcache.go), on the same listening
// connection (schema 00020: a change to a token announces 'token:<id>' on
// 'pircan_agents'):
//
//   - Trusted only while listening: nothing is served from memory before
//     LISTEN succeeds or after the connection fails, and all is forgotten.
//   - A revocation this process makes is forgotten when it commits, so the
//     next request here is refused; one another process makes (the
//     `pircan token revoke` command is one) is forgotten when its
//     notification arrives, normally within a millisecond of the commit.
//   - A read that raced with any token change is not kept (gen).
//   - Each entry lives tokenCacheTTL at most, which bounds what a lost
//     notification could leave.
//
// Kept are tokens found and already used once (the first use is a write of
// its own); an unknown secret is never kept, so guessing fills nothing. An
// expired token is refused by the core's clock (pircan.Token.Active) as it
// would be from the database.
type tokenCache struct {
	mu       sync.Mutex
	live     bool
	gen      uint64
	bySecret map[[32]byte]cachedToken
	secretOf map[string][32]byte // token id →
	max      int
	now      func() time.Time

	hits, misses atomic.Uint64
	forgotten    func(tokenID string) // tests: told of every forget, "*" included
}

type cachedToken struct {
	token  pircan.Token
	expiry time.Time
}

const (
	tokenCacheTTL  = 30 * time.Second
	tokenCacheSize = 10_000 // tokens; ~200 bytes each
	// tokenPrefix starts the payload of a token's change on agentsChannel.
	tokenPrefix = "token:"
)

func newTokenCache() *tokenCache {
	return &tokenCache{bySecret: map[[32]byte]cachedToken{}, secretOf: map[string][32]byte{},
		max: tokenCacheSize, now: time.Now}
}

// key is the map key of a secret's hash (false: not a SHA-256).
func tokenKey(sum []byte) ([32]byte, bool) {
	var k [32]byte
	return k, copy(k[:], sum) == len(k) && len(sum) == len(k)
}

// get returns the token of a secret's hash, if trusted; else the
// generation a fill must present to put.
func (c *tokenCache) get(k [32]byte) (pircan.Token, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.bySecret[k]
	if !ok || !c.live || !c.now().Before(e.expiry) {
		c.misses.Add(1)
		return pircan.Token{}, false, c.gen
	}
	c.hits.Add(1)
	return e.token, true, c.gen
}

// put keeps a read made under generation gen, unless something changed
// since or nothing is trusted.
func (c *tokenCache) put(k [32]byte, t pircan.Token, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live || gen != c.gen {
		return
	}
	if _, ok := c.bySecret[k]; !ok && len(c.bySecret) >= c.max {
		for old, e := range c.bySecret { // an arbitrary one: O(1)
			delete(c.bySecret, old)
			delete(c.secretOf, e.token.ID)
			break
		}
	}
	c.bySecret[k] = cachedToken{token: t, expiry: c.now().Add(tokenCacheTTL)}
	c.secretOf[t.ID] = k
}

// forget drops one token ("*": all of them).
func (c *tokenCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if id == "*" {
		clear(c.bySecret)
		clear(c.secretOf)
	} else if k, ok := c.secretOf[id]; ok {
		delete(c.bySecret, k)
		delete(c.secretOf, id)
	}
	if c.forgotten != nil {
		c.forgotten(id)
	}
}

// setLive forgets everything and says whether entries may be trusted from
// now on.
func (c *tokenCache) setLive(live bool) {
	c.mu.Lock()
	c.live = live
	c.mu.Unlock()
	c.forget("*")
}

// TokenCacheStats counts the token checks served from memory and from the
// database.
func (s *Store) TokenCacheStats() (hits, misses uint64) {
	return s.tokens.hits.Load(), s.tokens.misses.Load()
}
