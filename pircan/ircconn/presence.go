package ircconn

import (
	"sync"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// PresenceTTL is how long a sighting counts (DESIGN: presence rule).
const PresenceTTL = 24 * time.Hour

// Presence remembers, per account, the nick PIRCAN last saw using it: the
// only place a NOTIFY may go. It forgets on QUIT, on a nick change or
// logout that leaves the account, and after PresenceTTL.
type Presence struct {
	mu        sync.Mutex
	now       func() time.Time
	byAccount map[string]sighting // folded account → where it was seen
	byNick    map[string]string   // folded nick → folded account
	lastSweep time.Time
}

type sighting struct {
	nick string
	at   time.Time
}

// NewPresence builds an empty table; now is the clock (nil: time.Now).
func NewPresence(now func() time.Time) *Presence {
	if now == nil {
		now = time.Now
	}
	return &Presence{now: now, byAccount: map[string]sighting{}, byNick: map[string]string{}}
}

// Seen records account using nick now. It reports whether this is news
// (the account was not present, or used another nick): the moment to
// deliver what waits for it.
func (p *Presence) Seen(account, nick string) bool {
	if account == "" || nick == "" {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	a, n := pircan.FoldNick(account), pircan.FoldNick(nick)
	old, ok := p.byAccount[a]
	fresh := !ok || pircan.FoldNick(old.nick) != n || p.now().Sub(old.at) > PresenceTTL
	if ok && pircan.FoldNick(old.nick) != n {
		delete(p.byNick, pircan.FoldNick(old.nick))
	}
	if prev, taken := p.byNick[n]; taken && prev != a {
		delete(p.byAccount, prev) // the nick changed hands
	}
	p.byAccount[a] = sighting{nick: nick, at: p.now()}
	p.byNick[n] = a
	p.sweep()
	return fresh
}

// sweep drops sightings older than PresenceTTL now and then, so the table
// follows the accounts seen in the last day.
func (p *Presence) sweep() {
	now := p.now()
	if now.Sub(p.lastSweep) < time.Hour {
		return
	}
	p.lastSweep = now
	for a, s := range p.byAccount {
		if now.Sub(s.at) > PresenceTTL {
			delete(p.byAccount, a)
			delete(p.byNick, pircan.FoldNick(s.nick))
		}
	}
}

// NickChanged follows a NICK. account is the account tag on the NICK line
// ("" when the server sent none): the new nick keeps the old nick's account
// only when the tag confirms it, or when no tag was available at all.
func (p *Presence) NickChanged(oldNick, newNick, account string) (acct string, fresh bool) {
	p.mu.Lock()
	a, ok := p.byNick[pircan.FoldNick(oldNick)]
	if ok {
		delete(p.byNick, pircan.FoldNick(oldNick))
		delete(p.byAccount, a)
	}
	p.mu.Unlock()
	switch {
	case account != "":
		return account, p.Seen(account, newNick)
	case ok:
		return a, p.Seen(a, newNick)
	}
	return "", false
}

// Gone forgets whoever used nick (QUIT, or a logout).
func (p *Presence) Gone(nick string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := pircan.FoldNick(nick)
	if a, ok := p.byNick[n]; ok {
		delete(p.byAccount, a)
		delete(p.byNick, n)
	}
}

// Nick returns where account was last seen, if within PresenceTTL.
func (p *Presence) Nick(account string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.byAccount[pircan.FoldNick(account)]
	if !ok || p.now().Sub(s.at) > PresenceTTL {
		return "", false
	}
	return s.nick, true
}

// Forget drops an account whose nick turned out to belong to someone else.
func (p *Presence) Forget(account string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := pircan.FoldNick(account)
	if s, ok := p.byAccount[a]; ok {
		delete(p.byNick, pircan.FoldNick(s.nick))
		delete(p.byAccount, a)
	}
}

// Clear forgets everyone (after a disconnect nothing seen before holds).
func (p *Presence) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.byAccount = map[string]sighting{}
	p.byNick = map[string]string{}
}
