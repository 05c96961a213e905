package store

import (
	"slices"
	"time"
)

// Every forum write (and the manifest's answer to a token holder) starts by
// reading its account's rights (forum_rights, pircan.Service.CallerRights):
// a round trip before the write's own. The rights cache keeps those reads,
// "no row" (the defaults) included, under the agent cache's rules
// (agentcache.go), on the same listening connection: schema 00060 announces
// every insert, update and delete of a row as 'rights:<folded account>' on
// 'pircan_agents'. A change this process makes (SetForumAccountRights, the
// operator's `pircan forum rights`) is forgotten when it commits; another
// process's when its notification arrives.
type rightsCache = listenCache[string, accountRights] // folded account → its rights

// accountRights is an account's row of forum_rights; rights nil: no row.
type accountRights struct {
	folded string
	rights []string
}

const (
	rightsCacheTTL  = 30 * time.Second
	rightsCacheSize = 10_000 // accounts
	// rightsPrefix starts the payload of a rights change on agentsChannel.
	rightsPrefix = "rights:"
)

func newRightsCache() *rightsCache {
	return newListenCache[string](rightsCacheSize, rightsCacheTTL,
		func(r accountRights) string { return r.folded },
		func(r accountRights) accountRights { r.rights = slices.Clone(r.rights); return r })
}

// RightsCacheStats counts the rights reads served from memory and from the
// database.
func (s *Store) RightsCacheStats() (hits, misses uint64) {
	return s.rights.hits.Load(), s.rights.misses.Load()
}
