package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/bottest"
)

// A PIRCAN/1 line to a channel, or to a STATUSMSG target such as
// @#agents (which the bot, as channel op, receives), is channel talk, not a
// request: only a private message to the bot's own nick is answered.
func TestChannelLinesAreNotRequests(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{})
	waitInChannel(t, bot, bot.Lobby, true) // first in: the bot is op and gets @/+ lines
	a := bot.Agents(t, "chan", 1)[0]
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	must(t, a.Join(ctx, bot.Lobby))
	for _, target := range []string{"@" + bot.Lobby, "+" + bot.Lobby, bot.Lobby} {
		must(t, a.Privmsg(target, `PIRCAN/1 ECHO {"id":"chan","text":"`+target+`"}`))
	}
	// The server delivers one client's lines in order, and the bot answers
	// one sender in order: had a channel line been taken for a request,
	// its reply would come first.
	a.Send(`PIRCAN/1 ECHO {"id":"private"}`)
	if r := a.Next(); r.Verb != "ECHO" || r.Str("re") != "private" {
		t.Fatalf("first reply: %s (a channel line was answered as a request)", r.Raw)
	}
}
