package store

import (
	"sync"
	"sync/atomic"
	"time"
)

// listenCache is the core of the agent and token caches (agentcache.go,
// tokencache.go): rows kept by a key, forgotten by their id, and trusted
// only while the one listener listens. The rules are agentcache.go's; each
// cache names its key, how a row names its id, and how a row is copied out
// (so a caller's change to what it got never reaches the cache).
type listenCache[K comparable, V any] struct {
	mu    sync.Mutex
	live  bool
	gen   uint64
	byKey map[K]cached[V]
	keyOf map[string]K // row id → key
	max   int
	ttl   time.Duration
	now   func() time.Time
	id    func(V) string
	clone func(V) V

	hits, misses atomic.Uint64
	forgotten    func(id string) // tests: told of every forget, "*" included
}

type cached[V any] struct {
	row    V
	expiry time.Time
}

func newListenCache[K comparable, V any](max int, ttl time.Duration, id func(V) string, clone func(V) V) *listenCache[K, V] {
	return &listenCache[K, V]{byKey: map[K]cached[V]{}, keyOf: map[string]K{},
		max: max, ttl: ttl, now: time.Now, id: id, clone: clone}
}

// get returns the row of a key, if trusted; else the generation a fill
// must present to put.
func (c *listenCache[K, V]) get(k K) (V, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok || !c.live || !c.now().Before(e.expiry) {
		c.misses.Add(1)
		var zero V
		return zero, false, c.gen
	}
	c.hits.Add(1)
	return c.clone(e.row), true, c.gen
}

// put keeps a read made under generation gen, unless something changed
// since or nothing is trusted.
func (c *listenCache[K, V]) put(k K, v V, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live || gen != c.gen {
		return
	}
	if _, ok := c.byKey[k]; !ok && len(c.byKey) >= c.max {
		for old, e := range c.byKey { // an arbitrary one: O(1)
			delete(c.byKey, old)
			delete(c.keyOf, c.id(e.row))
			break
		}
	}
	c.byKey[k] = cached[V]{row: c.clone(v), expiry: c.now().Add(c.ttl)}
	c.keyOf[c.id(v)] = k
}

// forget drops one row by its id ("*": all of them).
func (c *listenCache[K, V]) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if id == "*" {
		clear(c.byKey)
		clear(c.keyOf)
	} else if k, ok := c.keyOf[id]; ok {
		delete(c.byKey, k)
		delete(c.keyOf, id)
	}
	if c.forgotten != nil {
		c.forgotten(id)
	}
}

// setLive forgets everything and says whether entries may be trusted from
// now on.
func (c *listenCache[K, V]) setLive(live bool) {
	c.mu.Lock()
	c.live = live
	c.mu.Unlock()
	c.forget("*")
}
