package transport

import (
	"container/list"
	"sync"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// PresenceTTL is how long a sighting counts (DESIGN: presence rule).
const PresenceTTL = 24 * time.Hour

// MaxSightings bounds the nicks Presence remembers. The bot does not hear
// a nick change of someone it shares no channel with, so a client rotating
// through nicks (NICK, a request or a JOIN and PART, NICK) leaves one
// sighting per nick: without a bound, a flood of distinct nicks would grow
// the table for the whole of PresenceTTL. When full, the sighting seen
// longest ago is forgotten, as by a QUIT: its lines are dropped rather than
// sent, never misaddressed.
const MaxSightings = 50000

// expirePerCall is how many sightings past PresenceTTL one call forgets at
// most: more than a call adds, so they never pile up, and no call sweeps
// the whole table.
const expirePerCall = 4

// Presence remembers who holds which nick, as far as the server has told:
// per account, the nick PIRCAN last saw using it (the only place its
// replies and NOTIFYs may go), and the nicks of unidentified senders. It
// forgets on QUIT, on a nick change or logout that leaves the account, on
// MONITOR's offline, after PresenceTTL (a few per call), and past
// MaxSightings nicks the one seen longest ago. The transport feeds it on its
// read goroutine, before anything else hears of the event, and the pacer
// resolves every line's nick from it at the moment the line is written
// (Conn.writeTo), under the same lock.
type Presence struct {
	mu        sync.Mutex
	now       func() time.Time
	casemap   pircan.Casemapping
	byAccount map[string]sighting // folded account → where it was seen
	// byNick is folded nick → who holds it, an element of order, which
	// keeps them oldest sighting first: expiry and the bound pop its front.
	// Every byAccount entry names a nick whose holder is that account, so
	// byAccount is bounded with it.
	byNick map[string]*list.Element
	order  list.List // of *holder
	max    int       // MaxSightings; tests lower it

	// The server's MONITOR list for queued lines (address.go).
	watches    map[string]*watch // folded nick → its entry
	watchOf    map[string]string // pacer key → folded nick watched for it
	monitorMax int               // entries the server allows; -1: no MONITOR
}

type sighting struct {
	nick string
	at   time.Time
}

// holder is who PIRCAN last saw on a nick: an account (folded), or an
// unidentified sender ("": the nick itself is its only name).
type holder struct {
	key     string // the folded nick, its byNick key
	account string
	nick    string
	at      time.Time
}

// NewPresence builds an empty table; now is the clock (nil: time.Now).
func NewPresence(now func() time.Time) *Presence {
	if now == nil {
		now = time.Now
	}
	return &Presence{now: now, byAccount: map[string]sighting{}, byNick: map[string]*list.Element{}, max: MaxSightings,
		watches: map[string]*watch{}, watchOf: map[string]string{}, monitorMax: -1}
}

// holderOf is who holds the nick folded to n, if anyone was seen on it.
func (p *Presence) holderOf(n string) (holder, bool) {
	el, ok := p.byNick[n]
	if !ok {
		return holder{}, false
	}
	return *el.Value.(*holder), true
}

// put records h as the holder of its nick, the newest sighting; then
// forgets a few expired sightings and, over the bound, the oldest.
func (p *Presence) put(h holder) {
	if el, ok := p.byNick[h.key]; ok { // seen again: the same entry, now the newest
		*el.Value.(*holder) = h
		p.order.MoveToBack(el)
	} else {
		entry := h // only a new entry escapes
		p.byNick[h.key] = p.order.PushBack(&entry)
	}
	for range expirePerCall {
		front := p.order.Front()
		if front == nil || p.now().Sub(front.Value.(*holder).at) <= PresenceTTL {
			break
		}
		p.gone(front.Value.(*holder).key)
	}
	for len(p.byNick) > p.max {
		p.gone(p.order.Front().Value.(*holder).key)
	}
}

// drop forgets the sighting on the nick folded to n, nothing else.
func (p *Presence) drop(n string) {
	if el, ok := p.byNick[n]; ok {
		p.order.Remove(el)
		delete(p.byNick, n)
	}
}

// SetCasemap sets how nicks and accounts are compared (the server's
// CASEMAPPING), forgetting everyone: keys folded otherwise no longer match.
func (p *Presence) SetCasemap(m pircan.Casemapping) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.casemap = m
	p.clear()
}

func (p *Presence) fold(s string) string { return p.casemap.Fold(s) }

// foldAccount: accounts are compared by pircan.FoldAccount, not the nick
// casemapping.
func foldAccount(s string) string { return pircan.FoldAccount(s) }

// Seen records account using nick now; account "" records an unidentified
// sender on nick (whoever held it with an account has left it). It reports
// whether this is news (the account was not present, or used another
// nick): the moment to deliver what waits for it.
func (p *Presence) Seen(account, nick string) bool {
	if nick == "" {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen(account, nick)
}

func (p *Presence) seen(account, nick string) bool {
	a, n, now := foldAccount(account), p.fold(nick), p.now()
	if prev, taken := p.holderOf(n); taken && prev.account != a {
		p.leave(prev.account, n) // the nick changed hands, or logged out
	}
	p.put(holder{key: n, account: a, nick: nick, at: now})
	if account == "" {
		return false
	}
	// An account may be on several nicks at once (several connections):
	// the other nicks keep it until they are seen to leave it; this one is
	// where it was seen last, where what is not for a given nick goes.
	old, ok := p.byAccount[a]
	moved := ok && p.fold(old.nick) != n
	p.byAccount[a] = sighting{nick: nick, at: now}
	return !ok || moved || now.Sub(old.at) > PresenceTTL
}

// leave records that account a (folded; "" for nobody) is no longer on
// nick n: where it was seen last is no longer known.
func (p *Presence) leave(a, n string) {
	if s, ok := p.byAccount[a]; ok && a != "" && p.fold(s.nick) == n {
		delete(p.byAccount, a)
	}
}

// NickChanged follows a NICK. account is the account tag on the NICK line
// ("" when the server sent none): the new nick keeps the old nick's account
// only when the tag confirms it, or when no tag was available at all. An
// unidentified sender's nick is its name: under a new nick it is someone
// new, and what was queued for the old nick is not sent to it.
func (p *Presence) NickChanged(oldNick, newNick, account string) (acct string, fresh bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.holderOf(p.fold(oldNick))
	if ok {
		p.drop(p.fold(oldNick))
		p.leave(h.account, p.fold(oldNick))
	}
	switch {
	case account != "":
		return account, p.seen(account, newNick)
	case ok && h.account != "":
		return h.account, p.seen(h.account, newNick)
	}
	return "", false
}

// Gone forgets whoever used nick (QUIT, MONITOR offline).
func (p *Presence) Gone(nick string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gone(p.fold(nick))
}

func (p *Presence) gone(n string) {
	if h, ok := p.holderOf(n); ok {
		p.leave(h.account, n)
		p.drop(n)
	}
}

// LoggedOut follows ACCOUNT *: the account is no longer on nick, and what
// was queued for either is not sent (the same client, but not the one the
// account's lines were for).
func (p *Presence) LoggedOut(nick string) { p.Gone(nick) }

// Nick returns where account was last seen, if within PresenceTTL.
func (p *Presence) Nick(account string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.nickOf(foldAccount(account))
}

func (p *Presence) nickOf(a string) (string, bool) {
	s, ok := p.byAccount[a]
	if !ok || p.now().Sub(s.at) > PresenceTTL {
		return "", false
	}
	return s.nick, true
}

// holds reports the nick folded to n, if account a (folded) holds it.
func (p *Presence) holds(a, n string) (string, bool) {
	h, ok := p.holderOf(n)
	if !ok || h.account != a || p.now().Sub(h.at) > PresenceTTL {
		return "", false
	}
	return h.nick, true
}

// guest reports the nick an unidentified sender folded to n still holds.
func (p *Presence) guest(n string) (string, bool) { return p.holds("", n) }

// Forget drops account's sighting on nick, which turned out to belong to
// someone else (or no one). A sighting of the account on another nick
// since (it renamed, and spoke) stands: the caller asked about nick.
func (p *Presence) Forget(account, nick string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, n := foldAccount(account), p.fold(nick)
	if h, ok := p.holderOf(n); ok && h.account == a {
		p.drop(n)
	}
	if s, ok := p.byAccount[a]; ok && p.fold(s.nick) == n {
		delete(p.byAccount, a)
	}
}

// Clear forgets everyone and the MONITOR list (after a disconnect nothing
// seen before holds).
func (p *Presence) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	p.watches, p.watchOf = map[string]*watch{}, map[string]string{}
}

func (p *Presence) clear() {
	p.byAccount = map[string]sighting{}
	p.byNick = map[string]*list.Element{}
	p.order.Init()
}

// seenAt is when the nick folded to n was last seen (zero: not known).
func (p *Presence) seenAt(n string) time.Time {
	h, _ := p.holderOf(n)
	return h.at
}

// Len is how many nicks are remembered (a flood's cost; tests).
func (p *Presence) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byNick)
}
