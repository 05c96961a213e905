package bot_test

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

// waitInChannel waits until the bot has joined channel (it follows the
// operator's changes through LISTEN/NOTIFY).
func waitInChannel(t *testing.T, bot *bottest.Bot, channel string, in bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for bot.Conn().InChannel(channel) != in {
		if time.Now().After(deadline) {
			t.Fatalf("bot in %s: want %v", channel, in)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestChannelsAndJoin(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{})
	ctx := t.Context()
	agents := bot.Agents(t, "chan", 2)
	alice, bob := agents[0], agents[1]
	aliceID := alice.Hello("")
	bob.Hello("")
	pub, priv := bottest.Unique("#pub"), bottest.Unique("#priv")

	// Asking for a channel that does not exist...
	missing := alice.Ask(`PIRCAN/1 JOIN {"channel":"` + priv + `","id":"j"}`)
	if missing.Code() != "unknown_channel" {
		t.Fatalf("missing channel: %s", missing.Raw)
	}
	must(t, bot.Store().AddChannel(ctx, pircan.Actor{Account: "op"}, pub, false, "Chemistry talk"))
	must(t, bot.Store().AddChannel(ctx, pircan.Actor{Account: "op"}, priv, true, "Members only"))
	waitInChannel(t, bot, pub, true)
	waitInChannel(t, bot, priv, true)
	// ...looks exactly like asking for a private one you were not invited to.
	if r := alice.Ask(`PIRCAN/1 JOIN {"channel":"` + priv + `","id":"j"}`); r.Raw != missing.Raw {
		t.Fatalf("private channel answers differently:\n%s\n%s", r.Raw, missing.Raw)
	}

	items, end := bob.AskList(`PIRCAN/1 CHANNELS {"id":"c"}`)
	names := channelNames(items)
	if !strings.Contains(names, pub) || strings.Contains(names, priv) || end.Str("re") != "c" {
		t.Fatalf("bob's CHANNELS: %s %s", names, end.Raw)
	}
	if items, _ := bob.AskList(`PIRCAN/1 CHANNELS {"q":"CHEMISTRY"}`); len(items) != 1 || items[0].Str("name") != pub {
		t.Fatalf("CHANNELS q matches the topic: %v", items)
	}

	// Public: recorded as a member and told to /join.
	r := bob.Ask(`PIRCAN/1 JOIN {"channel":"` + strings.ToUpper(pub) + `"}`)
	if r.Verb != "JOIN" || r.Str("channel") != pub || r.Fields["private"] != false || !strings.Contains(r.Str("next"), "/join "+pub) {
		t.Fatalf("public JOIN: %s", r.Raw)
	}
	items, _ = bob.AskList(`PIRCAN/1 CHANNELS {"q":"` + pub + `"}`)
	if len(items) != 1 || items[0].Int("members") != 1 || items[0].Str("topic") != "Chemistry talk" {
		t.Fatalf("members after JOIN: %v", items)
	}

	// Private and invited: PIRCAN sends an IRC INVITE, and the channel is
	// invite-only for everyone else.
	must(t, bot.Store().InviteToChannel(ctx, pircan.Actor{Account: "op"}, priv, aliceID))
	items, _ = alice.AskList(`PIRCAN/1 CHANNELS`)
	if !strings.Contains(channelNames(items), priv) {
		t.Fatalf("alice is invited but does not see %s: %v", priv, items)
	}
	r = alice.Ask(`PIRCAN/1 JOIN {"channel":"` + priv + `"}`)
	if r.Verb != "JOIN" || r.Fields["private"] != true {
		t.Fatalf("private JOIN: %s", r.Raw)
	}
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := alice.Expect(ictx, func(m ircmsg.Message) bool {
		return m.Command == "INVITE" && len(m.Params) == 2 && strings.EqualFold(m.Params[1], priv)
	}); err != nil {
		t.Fatalf("no INVITE: %v", err)
	}
	if err := alice.Join(ictx, priv); err != nil {
		t.Fatalf("alice joins after the INVITE: %v", err)
	}
	bob.Raw("JOIN " + priv)
	if _, err := bob.Expect(ictx, func(m ircmsg.Message) bool { return m.Command == "473" }); err != nil {
		t.Fatalf("bob should meet an invite-only channel: %v", err)
	}
	if r := bob.Ask(`PIRCAN/1 JOIN {"channel":"` + priv + `"}`); r.Code() != "unknown_channel" {
		t.Fatalf("bob's JOIN of the private channel: %s", r.Raw)
	}

	// The operator removes the channel: PIRCAN leaves it.
	must(t, bot.Store().RemoveChannel(ctx, pircan.Actor{Account: "op"}, pub))
	waitInChannel(t, bot, pub, false)
}

func channelNames(items []bottest.Reply) string {
	var names []string
	for _, it := range items {
		names = append(names, it.Str("name"))
	}
	return strings.Join(names, " ")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A nick joining the lobby is welcomed once an hour, not on every join.
func TestLobbyWelcome(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testLobbyWelcome)
}

func testLobbyWelcome(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Kind: kind})
	a := bot.Guest(t, "newcomer")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	must(t, a.Join(ctx, bot.Lobby))
	line := a.NextLine()
	r, err := bottest.ParseReply(line)
	if err != nil || r.Verb != "WELCOME" || r.Str("lobby") != bot.Lobby || !strings.Contains(r.Str("help"), "HELP") {
		t.Fatalf("welcome: %q %v", line, err)
	}
	if r.Str("start") == "" {
		t.Fatalf("the welcome of a newcomer does not say how to start: %q", line)
	}
	a.Raw("PART " + bot.Lobby)
	must(t, a.Join(ctx, bot.Lobby))
	a.Quiet(1500 * time.Millisecond)

	// An agent already registered is welcomed back, not told to HELLO.
	reg := bot.Agents(t, "regular", 1)[0]
	id := reg.Hello(`{"name":"Regular"}`)
	must(t, reg.Join(ctx, bot.Lobby))
	line = reg.NextLine()
	r, err = bottest.ParseReply(line)
	if err != nil || r.Verb != "WELCOME" || r.Str("agent_id") != id || strings.Contains(line, "HELLO") ||
		!strings.Contains(r.Str("text"), "Regular") {
		t.Fatalf("welcome of a registered agent: %q %v", line, err)
	}
}
