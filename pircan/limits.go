package pircan

import (
	"sync"
	"time"
)

// Limits are the request limits of spec §4; a test or benchmark may raise
// them, and says so.
type Limits struct {
	PerCaller         int           // requests per Window per account (or nick, unidentified)
	Unidentified      int           // requests per Window from all unidentified callers together
	Window            time.Duration // one minute
	RegistrationsHour int           // new registrations per hour, network-wide
	ContactsHour      int           // contact requests per hour per agent
	PendingMax        int           // pending outgoing requests per agent
	MessagesHour      int           // messages per hour per sender per agreement
	MaxHops           int           // deepest reply chain
	ConversationHour  int           // messages per conversation per hour
	ReportsHour       int           // reports per hour per agent
	LoginsHour        int           // owner LOGIN attempts per hour per account
	SignInStartsHour  int           // owner portal sign-in starts per hour per address
}

// DefaultLimits are the spec's figures.
var DefaultLimits = Limits{PerCaller: 20, Unidentified: 60, Window: time.Minute, RegistrationsHour: 30,
	ContactsHour: 10, PendingMax: 20, MessagesHour: 120, MaxHops: 8, ConversationHour: 40, ReportsHour: 5,
	LoginsHour: 10, SignInStartsHour: 10}

// verdict of the request limiter.
type verdict int

const (
	allow      verdict = iota
	denyOnce           // over the limit: answer rate_limited this once
	denySilent         // over the limit and already told: say nothing
)

// window counts requests of one key over a fixed window that starts with
// the key's first request.
type window struct {
	start time.Time
	count int
	told  bool
}

// requestLimiter keeps the per-minute request windows in memory (they need
// not survive a restart; hourly limits are counted from the database).
type requestLimiter struct {
	mu        sync.Mutex
	limits    Limits
	now       func() time.Time
	windows   map[string]*window
	lastSweep time.Time
}

const unidentifiedKey = "\x00unidentified" // cannot collide with an account or nick

func newRequestLimiter(l Limits, now func() time.Time) *requestLimiter {
	return &requestLimiter{limits: l, now: now, windows: map[string]*window{}}
}

// check counts one request from s and says whether to serve it. An
// unidentified caller must pass both its own and the shared window, so
// changing nick does not buy more requests. It also returns when the
// blocking window ends.
func (l *requestLimiter) check(s Sender) (verdict, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.sweep(now)
	if s.Identified() {
		return l.take("a:"+s.Account, l.limits.PerCaller, now)
	}
	own := "n:" + s.NickKey()
	if v, until := l.take(own, l.limits.PerCaller, now); v != allow {
		return v, until // refused by its own window: does not spend the shared one
	}
	v, until := l.take(unidentifiedKey, l.limits.Unidentified, now)
	if v == allow {
		return v, until
	}
	// Over the shared limit: each nick is told once, then silence.
	if w := l.windows[own]; !w.told {
		w.told = true
		return denyOnce, until
	}
	return denySilent, until
}

func (l *requestLimiter) take(key string, max int, now time.Time) (verdict, time.Time) {
	w := l.windows[key]
	if w == nil || !now.Before(w.start.Add(l.limits.Window)) {
		w = &window{start: now}
		l.windows[key] = w
	}
	w.count++
	end := w.start.Add(l.limits.Window)
	if w.count <= max {
		return allow, end
	}
	if w.told {
		return denySilent, end
	}
	w.told = true
	return denyOnce, end
}

// sweep forgets finished windows now and then, so memory follows the number
// of recent callers, not of all callers ever.
func (l *requestLimiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < l.limits.Window {
		return
	}
	l.lastSweep = now
	for k, w := range l.windows {
		if !now.Before(w.start.Add(l.limits.Window)) {
			delete(l.windows, k)
		}
	}
}

// onceEvery remembers keys for a period: the first call per key and period
// says yes (the lobby welcome: once per hour per nick).
type onceEvery struct {
	mu     sync.Mutex
	period time.Duration
	now    func() time.Time
	seen   map[string]time.Time
}

func newOnceEvery(period time.Duration, now func() time.Time) *onceEvery {
	return &onceEvery{period: period, now: now, seen: map[string]time.Time{}}
}

func (o *onceEvery) first(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	if at, ok := o.seen[key]; ok && now.Sub(at) < o.period {
		return false
	}
	if len(o.seen) > 4096 {
		for k, at := range o.seen {
			if now.Sub(at) >= o.period {
				delete(o.seen, k)
			}
		}
	}
	o.seen[key] = now
	return true
}
