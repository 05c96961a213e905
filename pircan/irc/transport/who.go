package transport

import (
	"context"
	"strconv"

	"github.com/ergochat/irc-go/ircmsg"

	"github.com/creatimus/pircan/pircan/irc"
)

// WHOX lookups: which account a nick is logged in to now (asked before a
// NOTIFY goes to it), and who is in a channel (presence after a connect).

type whoWait struct {
	nick   string // folded
	result chan whoResult
}

type whoResult struct {
	account string
	online  bool
}

// channelWhoToken marks WHOX replies to a channel-wide WHO (presence),
// watchWhoToken those to the WHO that follows a new MONITOR entry.
const (
	channelWhoToken = "1"
	watchWhoToken   = "2"
)

// WhoChannel asks who is in channel with which account; the answers come
// as Present events.
func (c *Conn) WhoChannel(channel string) { c.sendRaw("WHO", channel, "%tna,"+channelWhoToken) }

// WhoAccount asks the server which account nick is logged in to now
// (WHOX). online is false when no such nick is on the network.
func (c *Conn) WhoAccount(ctx context.Context, nick string) (account string, online bool, err error) {
	irc := c.current()
	if irc == nil {
		return "", false, errOffline
	}
	c.whoMu.Lock()
	c.whoSeq = c.whoSeq%899 + 1
	token := strconv.Itoa(100 + c.whoSeq)
	w := &whoWait{nick: c.fold(nick), result: make(chan whoResult, 1)}
	c.whoWaits[token] = w
	c.whoMu.Unlock()
	defer func() {
		c.whoMu.Lock()
		delete(c.whoWaits, token)
		c.whoMu.Unlock()
	}()
	if err := irc.Send("WHO", nick, "%tna,"+token); err != nil {
		return "", false, err
	}
	select {
	case r := <-w.result:
		return r.account, r.online, nil
	case <-ctx.Done():
		return "", false, ctx.Err()
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
	if token == watchWhoToken {
		c.watchChecked(nick, account)
		return
	}
	c.whoMu.Lock()
	defer c.whoMu.Unlock()
	if w := c.whoWaits[token]; w != nil {
		select {
		case w.result <- whoResult{account: account, online: true}:
		default:
		}
	}
}

// whoEnd handles RPL_ENDOFWHO (315: me mask): a lookup that got no 354 is
// a nick that is not online.
func (c *Conn) whoEnd(m ircmsg.Message) {
	if len(m.Params) < 2 {
		return
	}
	mask := c.fold(m.Params[1])
	c.watchAnswered(mask)
	c.whoMu.Lock()
	defer c.whoMu.Unlock()
	for _, w := range c.whoWaits {
		if w.nick == mask {
			select {
			case w.result <- whoResult{}:
			default: // the 354 came first
			}
		}
	}
}
