package transport

import (
	"strconv"
	"strings"
	"time"

	"github.com/ergochat/irc-go/ircmsg"

	"github.com/creatimus/pircan/pircan"

	"github.com/creatimus/pircan/pircan/irc"
)

// Addressing: every reply is queued for the account that asked (or, for
// an unidentified sender, for its nick, in a key space of its own), and
// its nick is looked up in presence at the moment each line is written,
// under presence's lock, which the read goroutine also takes to record a
// QUIT, NICK, ACCOUNT or MONITOR offline before anyone hears of it. A line
// is therefore never written to a nick after the transport has read that
// the nick left its account. Lines that waited in the queue (a paced list)
// also need the nick to be on PIRCAN's MONITOR list, which reports a quit,
// nick change or (extended-monitor) logout even when the nick shares no
// channel with the bot, and a WHO sent after the MONITOR to have said who
// holds the nick since.

// Notice queues NOTICE lines for to: its account when it has one, else its
// nick.
func (c *Conn) Notice(to irc.Sender, lines ...Line) {
	if to.Account == "" && to.Nick == "" {
		settle(lines, false)
		return
	}
	c.pacer.Enqueue(c.presence.Key(to), lines...)
}

// NoticeText queues plain lines for to (no delivery hooks).
func (c *Conn) NoticeText(to irc.Sender, texts ...string) {
	lines := make([]Line, len(texts))
	for i, t := range texts {
		lines[i] = Line{Text: t}
	}
	c.Notice(to, lines...)
}

// Presence is who holds which nick, as the transport has heard it.
func (c *Conn) Presence() *Presence { return c.presence }

// Casemap is the server's CASEMAPPING (rfc1459 until it has said).
func (c *Conn) Casemap() pircan.Casemapping { return pircan.Casemapping(c.casemap.Load()) }

func (c *Conn) fold(s string) string { return c.Casemap().Fold(s) }

// Key is the pacer's queue key for to: "a:account nick" for an account
// (the nick it asked from, "" for none: a NOTIFY), "n:nick" for an
// unidentified sender. Account keys and nick keys differ in their first
// byte, so no nick can ever stand for an account.
func (p *Presence) Key(to irc.Sender) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if to.Account != "" {
		return "a:" + foldAccount(to.Account) + " " + p.fold(to.Nick)
	}
	return "n:" + p.fold(to.Nick)
}

// resolve is the nick that key's lines may go to now; p.mu is held. An
// account's lines go to the nick that asked while the account holds it,
// else to where the account was seen last (it changed nick), else nowhere.
func (p *Presence) resolve(key string) (string, bool) {
	kind, rest, _ := strings.Cut(key, ":")
	if kind != "a" {
		return p.guest(rest)
	}
	a, n, _ := strings.Cut(rest, " ")
	if nick, ok := p.holds(a, n); ok && n != "" {
		return nick, true
	}
	return p.nickOf(a)
}

// track records what an event says about who holds which nick, on the
// read goroutine, before the event is queued; fresh says an account
// (re)appeared.
func (c *Conn) track(e *Event) {
	e.Sender.Casemap = c.Casemap()
	p := c.presence
	switch e.Kind {
	case Request, Spoke, Joined, Present:
		e.Fresh = p.Seen(e.Sender.Account, e.Sender.Nick)
	case NickChanged:
		e.Sender.Account, e.Fresh = p.NickChanged(e.Sender.Nick, e.Text, e.Sender.Account)
	case AccountChanged:
		if e.Sender.Account == "" {
			p.LoggedOut(e.Sender.Nick)
		} else {
			e.Fresh = p.Seen(e.Sender.Account, e.Sender.Nick)
		}
	case Quit:
		p.Gone(e.Sender.Nick)
	}
	e.Sender = e.Sender.Keyed()
}

// setCasemap adopts the server's CASEMAPPING and MONITOR limit at
// registration ("" when the server has no MONITOR).
func (c *Conn) setCasemap(isupport map[string]string) {
	m := pircan.ParseCasemapping(isupport["CASEMAPPING"])
	c.casemap.Store(int32(m))
	c.presence.SetCasemap(m)
	c.resetLookups()
	p := c.presence
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watches, p.watchOf = map[string]*watch{}, map[string]string{}
	p.monitorMax = -1 // no MONITOR
	if v, ok := isupport["MONITOR"]; ok {
		p.monitorMax = 1 << 30
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			p.monitorMax = n
		}
	}
	c.log.Info().Str("casemapping", m.String()).Int("monitor", p.monitorMax).Msg("server casemapping")
}

// watch is one nick on the server's MONITOR list for queued lines.
type watch struct {
	nick    string
	keys    int  // pacer keys it is watched for
	online  bool // the server has answered that the nick is online
	checked bool // a WHO sent after the MONITOR has said which account holds it
}

// unwatchedFor is how long after the server last showed who holds a nick
// (a request, a line or a join with the account tag) a line may go to it
// without the MONITOR list's confirmation.
const unwatchedFor = time.Second

// connOutput is the pacer's Output over this connection.
type connOutput struct{ c *Conn }

func (o connOutput) Write(key string, held bool, lines []string) error {
	return o.c.writeTo(key, held, lines, o.c.sendNotices)
}

// writeTo sends key's lines with send to the nick key resolves to now,
// all under presence's lock: a QUIT, NICK, ACCOUNT or MONITOR offline the
// read goroutine has read is either recorded before (no write) or waits
// for the write to be handed to the connection.
func (c *Conn) writeTo(key string, held bool, lines []string, send func(nick string, lines []string) error) error {
	p := c.presence
	p.mu.Lock()
	defer p.mu.Unlock()
	nick, ok := p.resolve(key)
	if !ok {
		return ErrGone
	}
	if unsolicited(key) || p.now().Sub(p.seenAt(p.fold(nick))) > unwatchedFor {
		held = true // a NOTIFY (no request vouches for the nick), or a slow reply
	}
	if held && p.monitorMax >= 0 {
		switch w := c.watchLocked(key, nick); {
		case w == nil:
			return ErrNoRoom
		case !w.online || !w.checked:
			return ErrNotYet
		}
	}
	return send(nick, lines)
}

// unsolicited reports whether key's lines answer no request (a NOTIFY:
// an account key without the nick that asked).
func unsolicited(key string) bool { return strings.HasPrefix(key, "a:") && strings.HasSuffix(key, " ") }

// Watch puts nick on the MONITOR list for to's unsolicited lines (a
// NOTIFY) before the caller asks the server by WHO whether nick still
// holds to's account: a QUIT or a hand-over after that answer then
// arrives as MONITOR offline before any line is written, and one before
// it shows in the answer. release takes the entry back when no line
// follows (the pacer releases it once it has written them).
func (c *Conn) Watch(to irc.Sender, nick string) (release func()) {
	key := c.presence.Key(irc.Sender{Account: to.Account})
	p := c.presence
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.monitorMax >= 0 {
		c.watchLocked(key, nick)
	}
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		c.unwatchLocked(key) // a line queued meanwhile watches again as it is written
	}
}

func (o connOutput) Hold(key string) {
	p := o.c.presence
	p.mu.Lock()
	defer p.mu.Unlock()
	if nick, ok := p.resolve(key); ok && p.monitorMax >= 0 {
		o.c.watchLocked(key, nick)
	}
}

func (o connOutput) Release(key string) {
	p := o.c.presence
	p.mu.Lock()
	defer p.mu.Unlock()
	o.c.unwatchLocked(key)
}

// watchLocked puts nick on the MONITOR list for key (once), moving key's
// watch from an older nick; nil when the list is full.
func (c *Conn) watchLocked(key, nick string) *watch {
	p := c.presence
	n := p.fold(nick)
	if old, ok := p.watchOf[key]; ok && old != n {
		c.unwatchLocked(key)
	}
	if w := p.watches[n]; w != nil {
		if _, ok := p.watchOf[key]; !ok {
			p.watchOf[key] = n
			w.keys++
		}
		return w
	}
	if len(p.watches) >= p.monitorMax {
		return nil
	}
	w := &watch{nick: nick, keys: 1}
	p.watches[n] = w
	p.watchOf[key] = n
	// MONITOR (with extended-monitor) reports what changes from now on,
	// and its RPL_MONONLINE names no account: a logout or hand-over
	// between the last sighting and the server's reading of this MONITOR
	// would go unheard. The WHO after it says who holds the nick since.
	c.sendRaw("MONITOR", "+", nick)
	_, _ = c.lookUp(nick, func(account string, online bool) { c.watchChecked(w, account, online) }) // offline: nothing to check
	return w
}

func (c *Conn) unwatchLocked(key string) {
	p := c.presence
	n, ok := p.watchOf[key]
	if !ok {
		return
	}
	delete(p.watchOf, key)
	if w := p.watches[n]; w != nil {
		if w.keys--; w.keys <= 0 { // not watched for another key either
			delete(p.watches, n)
			c.sendRaw("MONITOR", "-", w.nick)
		}
	}
}

// monitorCallbacks follow the MONITOR list's answers.
func (c *Conn) monitorCallbacks(add func(string, func(ircmsg.Message))) {
	targets := func(m ircmsg.Message) []string {
		if len(m.Params) < 2 {
			return nil
		}
		return strings.Split(m.Params[1], ",")
	}
	p := c.presence
	add("730", func(m ircmsg.Message) { // RPL_MONONLINE nick!user@host,...
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, t := range targets(m) {
			nick, _, _ := strings.Cut(t, "!")
			if w := p.watches[p.fold(nick)]; w != nil {
				w.online = true
			}
		}
	})
	add("731", func(m ircmsg.Message) { // RPL_MONOFFLINE nick,...: quit or renamed
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, nick := range targets(m) {
			n := p.fold(nick)
			p.gone(n)
			if w := p.watches[n]; w != nil {
				w.online = false
			}
		}
	})
	add("734", func(m ircmsg.Message) { // ERR_MONLISTFULL limit targets
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(m.Params) < 3 {
			return
		}
		for _, nick := range strings.Split(m.Params[2], ",") {
			n := p.fold(nick)
			delete(p.watches, n)
			for k, v := range p.watchOf {
				if v == n {
					delete(p.watchOf, k)
				}
			}
		}
		p.monitorMax = len(p.watches)
		c.log.Warn().Int("monitor", p.monitorMax).Msg("MONITOR list full: paced lines wait for a free entry")
	})
}

// watchChecked records what the WHO after w's MONITOR entry showed: the
// account on w's nick ("" for none), or the nick offline. From then on the
// watch's ACCOUNT and offline notices keep it current, and lines may go.
// An answer for a watch since replaced changes nothing.
func (c *Conn) watchChecked(w *watch, account string, online bool) {
	p := c.presence
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.fold(w.nick)
	if p.watches[n] != w {
		return
	}
	if online {
		p.seen(account, w.nick) // "": nobody's account (a guest's lines may go)
	} else {
		p.gone(n)
	}
	w.checked = true
}
