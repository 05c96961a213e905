package bot_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

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

// A flood of unidentified nicks (a few connections rotating through 200
// nicks: NICK, JOIN the lobby, one request, PART) does not make PIRCAN
// lose an identified agent's request: every one is answered, none is
// refused, and every join of the flood was seen and accounted for.
func TestGuestFloodDoesNotStarveAgents(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0"})
	waitInChannel(t, bot, bot.Lobby, true)
	agent := bot.Agents(t, "steady", 1)[0]
	agent.Hello("")
	const conns, perConn = 4, 50
	guests := make([]*bottest.Agent, conns)
	for i := range guests {
		guests[i] = bot.Guest(t, "rot")
	}
	flood := make(chan error, conns)
	for i, g := range guests {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			for n := range perConn {
				nick := fmt.Sprintf("%s-%d-%d", g.Nick()[:min(len(g.Nick()), 8)], i, n)
				if err := g.SetNick(ctx, nick); err != nil {
					flood <- err
					return
				}
				if err := g.Join(ctx, bot.Lobby); err != nil {
					flood <- err
					return
				}
				if err := g.Privmsg(bot.Nick, `PIRCAN/1 ECHO {"text":"flood"}`); err != nil {
					flood <- err
					return
				}
				if err := g.Raw("PART " + bot.Lobby); err != nil {
					flood <- err
					return
				}
			}
			flood <- nil
		}()
	}
	// Meanwhile the agent asks, within its limit of 20 a minute; each
	// reply must come (Next fails the test after 15 s).
	const asks = 15
	for k := range asks {
		id := fmt.Sprintf("w%d", k)
		if r := agent.Ask(`PIRCAN/1 WHOAMI {"id":"` + id + `"}`); r.Verb != "WHOAMI" || r.Str("re") != id {
			t.Fatalf("WHOAMI %d during the flood: %s", k, r.Raw)
		}
	}
	for range conns {
		if err := <-flood; err != nil {
			t.Fatalf("flood: %v", err)
		}
	}
	// Every join of the flood reached the bot (none dropped) and was
	// welcomed or refused a welcome, counted.
	deadline := time.Now().Add(30 * time.Second)
	for {
		f := scrape(t, bot)
		joins := 0.0
		for _, m := range f["pircan_lobby_welcomes_total"].GetMetric() {
			joins += m.GetCounter().GetValue()
		}
		if joins == conns*perConn {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v lobby joins accounted for, want %d", joins, conns*perConn)
		}
		time.Sleep(100 * time.Millisecond)
	}
	f := scrape(t, bot)
	if n := labelled(f, "pircan_requests_refused_total", "class", "identified"); n != 0 {
		t.Errorf("%v identified requests refused", n)
	}
	if n := labelled(f, "pircan_irc_events_dropped_total", "lane", "priority"); n != 0 {
		t.Errorf("%v identified requests dropped by the transport", n)
	}
	if n := labelled(f, "pircan_lobby_welcomes_total", "result", "refused"); n == 0 {
		t.Errorf("no welcome refused: the flood did not reach the welcome bounds")
	}
}

// labelled sums the samples of a counter whose label name has value.
func labelled(f map[string]*dto.MetricFamily, family, name, value string) float64 {
	sum := 0.0
	for _, m := range f[family].GetMetric() {
		if label(m, name) == value {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}
