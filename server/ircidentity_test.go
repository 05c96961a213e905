package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ergochat/irc-go/ircmsg"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/ircnet"
	"github.com/creatimus/pircan/pircan"
)

// Another client holds PIRCAN's nick when it comes up (as after a crash):
// PIRCAN reclaims it through NickServ (Anope RECOVER) and serves under it.
func TestReclaimsItsNick(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var squatter *ircnet.Client
	bot := bottest.Start(t, bottest.Options{BeforeStart: func(nick string) {
		c, err := bottest.Network(t).Dial(ctx, nick)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		squatter = c
	}})
	// Serving means under its own nick (the transport refuses any other).
	a := bot.Agents(t, "reclaim", 1)[0]
	if r := a.Ask(`PIRCAN/1 ECHO {"id":"x"}`); r.Str("re") != "x" {
		t.Fatalf("ECHO: %s", r.Raw)
	}
	// Services moved the other client off the nick.
	if _, err := squatter.Expect(ctx, func(m ircmsg.Message) bool {
		return m.Command == "NICK" && len(m.Params) > 0 && pircan.FoldNick(m.Params[0]) != pircan.FoldNick(bot.Nick)
	}); err != nil {
		t.Fatalf("the other client kept the nick: %v", err)
	}
	if strings.EqualFold(squatter.Nick(), bot.Nick) {
		t.Fatalf("the other client is still %s", squatter.Nick())
	}
}
