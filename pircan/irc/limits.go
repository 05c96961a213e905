package irc

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/creatimus/pircan/internal/expiring"
	"github.com/creatimus/pircan/pircan"
)

// MaxTrackedCallers bounds each in-memory per-caller table (request
// windows of accounts, of unidentified nicks; nicks welcomed; welcome
// origins). A caller who finds its table full has no entry of its own: its
// requests count against the unidentified callers' shared window only, and
// it is not welcomed. A flood of distinct nicks thus costs bounded memory
// and cannot buy more than the shared budget.
const MaxTrackedCallers = 20000

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
	mu       sync.Mutex
	limits   pircan.Limits
	now      func() time.Time
	accounts *expiring.Table[window]
	nicks    *expiring.Table[window] // unidentified callers, by folded nick
	shared   window                  // all unidentified callers together
	// sharedTold counts the rate_limited replies of the shared window: at
	// most Unidentified per window, so a flood of fresh nicks past the
	// shared limit is not answered line for line.
	sharedTold int
}

func newRequestLimiter(l pircan.Limits, now func() time.Time) *requestLimiter {
	return &requestLimiter{limits: l, now: now,
		accounts: expiring.New[window](l.Window, MaxTrackedCallers),
		nicks:    expiring.New[window](l.Window, MaxTrackedCallers)}
}

// check counts one request from s and says whether to serve it. An
// unidentified caller must pass both its own and the shared window, so
// changing nick does not buy more requests. It also returns when the
// blocking window ends.
func (l *requestLimiter) check(s Sender) (verdict, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if s.Identified() {
		if w, ok := l.own(l.accounts, s.Key(), now); ok {
			return l.take(w, l.limits.PerCaller, now)
		}
		return l.takeShared(nil, now) // the table is full (MaxTrackedCallers)
	}
	w, ok := l.own(l.nicks, s.Key(), now)
	if ok {
		if v, until := l.take(w, l.limits.PerCaller, now); v != allow {
			return v, until // refused by its own window: does not spend the shared one
		}
	}
	return l.takeShared(w, now)
}

// own finds or starts key's window; false when the table is full.
func (l *requestLimiter) own(t *expiring.Table[window], key string, now time.Time) (*window, bool) {
	if w, ok := t.Get(key, now); ok {
		return w, true
	}
	return t.Put(key, window{start: now}, now)
}

// takeShared counts a request in the unidentified callers' shared window.
// Over it, each nick is told once (own: its window; nil when it has none),
// up to Unidentified replies per window in all; then silence.
func (l *requestLimiter) takeShared(own *window, now time.Time) (verdict, time.Time) {
	if !now.Before(l.shared.start.Add(l.limits.Window)) {
		l.shared, l.sharedTold = window{start: now}, 0
	}
	l.shared.count++
	until := l.shared.start.Add(l.limits.Window)
	if l.shared.count <= l.limits.Unidentified {
		return allow, until
	}
	if own == nil || own.told || l.sharedTold >= l.limits.Unidentified {
		return denySilent, until
	}
	own.told = true
	l.sharedTold++
	return denyOnce, until
}

func (l *requestLimiter) take(w *window, max int, now time.Time) (verdict, time.Time) {
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

// Lobby welcome bounds (spec §4: at most once per hour per nick). Beyond
// them a joiner is simply not welcomed, and counted (WelcomeRefused).
const (
	// WelcomePeriod is how often one nick may be welcomed.
	WelcomePeriod = time.Hour
	// One connection (user@host as the server shows it; a client rotating
	// nicks keeps it) is welcomed at most welcomeOriginMax times per
	// welcomeOriginWindow.
	welcomeOriginMax    = 3
	welcomeOriginWindow = 10 * time.Minute
	// Unidentified joiners share a network-wide token bucket: a burst of
	// welcomeNetworkBurst, then welcomeNetworkRate per second. Identified
	// joiners (extended-join says their account) are not counted in it, so
	// a flood of guests does not keep new agents from being welcomed.
	welcomeNetworkBurst = 30
	welcomeNetworkRate  = 1
)

// WelcomeOutcome says what became of a lobby join, for metrics.
type WelcomeOutcome int

const (
	WelcomeSent    WelcomeOutcome = iota // welcomed now
	WelcomeRepeat                        // that nick was welcomed within WelcomePeriod
	WelcomeRefused                       // over a connection's or the network's welcome budget, or a table is full
)

func (o WelcomeOutcome) String() string {
	return [...]string{"sent", "repeat", "refused"}[o]
}

// welcomeGate decides whom to welcome.
type welcomeGate struct {
	mu      sync.Mutex
	now     func() time.Time
	nicks   *expiring.Table[struct{}] // folded nicks welcomed within WelcomePeriod
	origins *expiring.Table[int]      // user@host → welcomes in its window
	network *rate.Limiter             // unidentified joiners together
}

func newWelcomeGate(now func() time.Time) *welcomeGate {
	return &welcomeGate{now: now,
		nicks:   expiring.New[struct{}](WelcomePeriod, MaxTrackedCallers),
		origins: expiring.New[int](welcomeOriginWindow, MaxTrackedCallers),
		network: rate.NewLimiter(welcomeNetworkRate, welcomeNetworkBurst)}
}

// admit decides for the nick keyed key (Sender.NickKey) joining from
// origin (user@host; "" if unknown).
func (g *welcomeGate) admit(key, origin string, identified bool) WelcomeOutcome {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if _, ok := g.nicks.Get(key, now); ok {
		return WelcomeRepeat
	}
	if !g.nicks.Room(now) {
		return WelcomeRefused
	}
	if origin != "" {
		n, ok := g.origins.Get(origin, now)
		if !ok {
			if n, ok = g.origins.Put(origin, 0, now); !ok {
				return WelcomeRefused
			}
		}
		if *n >= welcomeOriginMax {
			return WelcomeRefused
		}
		*n++
	}
	if !identified && !g.network.AllowN(now, 1) {
		return WelcomeRefused
	}
	g.nicks.Put(key, struct{}{}, now)
	return WelcomeSent
}
