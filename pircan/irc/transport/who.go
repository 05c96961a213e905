package transport

import (
	"context"
	"strconv"

	"github.com/ergochat/irc-go/ircmsg"

	"github.com/creatimus/pircan/pircan/irc"
)

// WHOX lookups: which account a nick is logged in to now (asked before a
// NOTIFY goes to it, and after a nick is put on the MONITOR list), and who
// is in a channel (presence after a connect).
//
// RPL_ENDOFWHO names only the mask, not the token, so a lookup knows which
// end is its own by counting: the server answers WHOs in the order they
// were sent, and a lookup skips the ends of the WHOs for the same mask that
// were ahead of it.

type whoWait struct {
	nick     string // folded
	ahead    int    // ends of earlier WHOs for nick still to come before this one's
	answered bool   // its 354 has come
	done     func(account string, online bool)
}

// channelWhoToken marks WHOX replies to a channel-wide WHO (presence).
const channelWhoToken = "1"

// WhoChannel asks who is in channel with which account; the answers come
// as Present events.
func (c *Conn) WhoChannel(channel string) { c.sendRaw("WHO", channel, "%tna,"+channelWhoToken) }

// WhoAccount asks the server which account nick is logged in to now
// (WHOX). online is false when no such nick is on the network.
func (c *Conn) WhoAccount(ctx context.Context, nick string) (account string, online bool, err error) {
	result := make(chan whoResult, 1)
	token, err := c.lookUp(nick, func(account string, online bool) { result <- whoResult{account, online} })
	if err != nil {
		return "", false, err
	}
	defer c.forgetLookup(token)
	select {
	case r := <-result:
		return r.account, r.online, nil
	case <-ctx.Done():
		return "", false, ctx.Err()
	}
}

type whoResult struct {
	account string
	online  bool
}

// lookUp sends a WHOX for nick; done is called once, on the read
// goroutine, with its answer (unless the lookup is forgotten first).
func (c *Conn) lookUp(nick string, done func(account string, online bool)) (token string, err error) {
	n := c.fold(nick)
	c.whoMu.Lock()
	c.whoSeq = c.whoSeq%899 + 1
	token = strconv.Itoa(100 + c.whoSeq)
	c.whoWaits[token] = &whoWait{nick: n, ahead: c.whoAhead[n], done: done}
	c.whoAhead[n]++
	// Sent under the lock: the count and the order on the wire agree.
	err = c.sendWho(nick, token)
	if err != nil {
		c.endLookupLocked(n)
		delete(c.whoWaits, token)
	}
	c.whoMu.Unlock()
	return token, err
}

// sendWhoNow writes a WHOX for nick with token (Conn.sendWho, which tests
// replace to play the server).
func (c *Conn) sendWhoNow(nick, token string) error {
	conn := c.current()
	if conn == nil {
		return errOffline
	}
	return conn.Send("WHO", nick, "%tna,"+token)
}

func (c *Conn) forgetLookup(token string) {
	c.whoMu.Lock()
	delete(c.whoWaits, token)
	c.whoMu.Unlock()
}

// endLookupLocked counts one WHO for the folded nick n as ended.
func (c *Conn) endLookupLocked(n string) {
	if c.whoAhead[n]--; c.whoAhead[n] <= 0 {
		delete(c.whoAhead, n)
	}
}

// resetLookups forgets the WHOs of a connection that is gone: their
// answers will not come.
func (c *Conn) resetLookups() {
	c.whoMu.Lock()
	defer c.whoMu.Unlock()
	c.whoAhead = map[string]int{}
	for token, w := range c.whoWaits {
		w.ahead = 0
		delete(c.whoWaits, token)
	}
}

// whoReply handles RPL_WHOSPCRPL (354: me token nick account).
func (c *Conn) whoReply(m ircmsg.Message) {
	if len(m.Params) < 4 {
		return
	}
	token, nick, account := m.Params[1], m.Params[2], m.Params[3]
	if account == "0" {
		account = ""
	}
	if token == channelWhoToken {
		if account != "" {
			c.emit(Event{Kind: Present, Sender: irc.Sender{Account: account, Nick: nick}})
		}
		return
	}
	c.whoMu.Lock()
	w := c.whoWaits[token]
	if w != nil {
		w.answered = true
	}
	c.whoMu.Unlock()
	if w != nil {
		w.done(account, true) // outside whoMu: done may take presence's lock
	}
}

// whoEnd handles RPL_ENDOFWHO (315: me mask): a lookup whose own end comes
// without a 354 asked for a nick that is not online.
func (c *Conn) whoEnd(m ircmsg.Message) {
	if len(m.Params) < 2 {
		return
	}
	mask := c.fold(m.Params[1])
	var unanswered []*whoWait
	c.whoMu.Lock()
	if c.whoAhead[mask] > 0 {
		c.endLookupLocked(mask)
		for token, w := range c.whoWaits {
			switch {
			case w.nick != mask:
			case w.ahead > 0:
				w.ahead--
			default: // its own end
				delete(c.whoWaits, token)
				if !w.answered {
					unanswered = append(unanswered, w)
				}
			}
		}
	}
	c.whoMu.Unlock()
	for _, w := range unanswered {
		w.done("", false)
	}
}
