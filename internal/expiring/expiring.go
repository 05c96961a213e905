// Package expiring is a bounded table whose entries each live one fixed
// time, so that expiry costs O(1) per call: per-caller windows and gaps.
package expiring

import (
	"container/list"
	"time"
)

// expirePerCall is how many expired entries one call of an expiring table
// drops at most: more than it adds, so expired entries never pile up, and
// no call sweeps the whole table.
const expirePerCall = 4

// Table is a table whose entries each live one fixed ttl from when they
// were put. So they expire in the order they were put: expiry pops from the
// front of a list, O(1) per call. It holds at most max entries.
type Table[V any] struct {
	ttl   time.Duration
	max   int
	items map[string]*list.Element
	order list.List // of *expiringEntry[V], oldest first
}

type expiringEntry[V any] struct {
	key   string
	until time.Time
	val   V
}

// New makes a table of entries living ttl, at most max of them. It
// is not safe for concurrent use: its owner holds a lock.
func New[V any](ttl time.Duration, max int) *Table[V] {
	return &Table[V]{ttl: ttl, max: max, items: map[string]*list.Element{}}
}

// Get returns key's live value.
func (e *Table[V]) Get(key string, now time.Time) (*V, bool) {
	e.expire(now)
	el, ok := e.items[key]
	if !ok {
		return nil, false
	}
	en := el.Value.(*expiringEntry[V])
	if !now.Before(en.until) { // expired, not yet reached by expire
		e.remove(el)
		return nil, false
	}
	return &en.val, true
}

// Room reports whether Put would find space.
func (e *Table[V]) Room(now time.Time) bool {
	e.expire(now)
	return len(e.items) < e.max
}

// Put stores v for key from now (replacing an expired entry); false, and
// nothing stored, when the table is full of live entries.
func (e *Table[V]) Put(key string, v V, now time.Time) (*V, bool) {
	e.expire(now)
	if el, ok := e.items[key]; ok {
		e.remove(el)
	}
	if len(e.items) >= e.max {
		return nil, false
	}
	en := &expiringEntry[V]{key: key, until: now.Add(e.ttl), val: v}
	e.items[key] = e.order.PushBack(en)
	return &en.val, true
}

func (e *Table[V]) expire(now time.Time) {
	for range expirePerCall {
		el := e.order.Front()
		if el == nil || now.Before(el.Value.(*expiringEntry[V]).until) {
			return
		}
		e.remove(el)
	}
}

func (e *Table[V]) remove(el *list.Element) {
	delete(e.items, el.Value.(*expiringEntry[V]).key)
	e.order.Remove(el)
}

func (e *Table[V]) Len() int { return len(e.items) }
