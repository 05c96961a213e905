package store

import (
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
type tokenCache = listenCache[[32]byte, pircan.Token] // secret's hash → token

const (
	tokenCacheTTL  = 30 * time.Second
	tokenCacheSize = 10_000 // tokens; ~200 bytes each
	// tokenPrefix starts the payload of a token's change on agentsChannel.
	tokenPrefix = "token:"
)

func newTokenCache() *tokenCache {
	return newListenCache[[32]byte](tokenCacheSize, tokenCacheTTL,
		func(t pircan.Token) string { return t.ID }, func(t pircan.Token) pircan.Token { return t })
}

// key is the map key of a secret's hash (false: not a SHA-256).
func tokenKey(sum []byte) ([32]byte, bool) {
	var k [32]byte
	return k, copy(k[:], sum) == len(k) && len(sum) == len(k)
}

// TokenCacheStats counts the token checks served from memory and from the
// database.
func (s *Store) TokenCacheStats() (hits, misses uint64) {
	return s.tokens.hits.Load(), s.tokens.misses.Load()
}
