package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/ircnet"
	"github.com/creatimus/pircan/store"
)

// reconnect opens a new connection for agent's account (the old one closed).
func reconnect(t *testing.T, bot *bottest.Bot, account, base string) *bottest.Agent {
	t.Helper()
	c, err := bot.Net.Dial(t.Context(), bottest.Unique(base))
	must(t, err)
	t.Cleanup(func() { c.Close() })
	must(t, c.Identify(t.Context(), account, "pw-"+account))
	return bot.Adopt(t, c, account)
}

// notices collects NOTIFY lines until none comes for quiet, by type; a
// type that comes twice fails the test (they are coalesced).
func notices(t *testing.T, a *bottest.Agent, quiet time.Duration) map[string]bottest.Reply {
	t.Helper()
	out := map[string]bottest.Reply{}
	for {
		line, ok := a.TryNextLine(quiet)
		if !ok {
			return out
		}
		r, err := bottest.ParseReply(line)
		must(t, err)
		if r.Verb != "NOTIFY" {
			continue
		}
		if prev, dup := out[r.Str("type")]; dup {
			t.Fatalf("NOTIFY %s came twice: %s / %s", r.Str("type"), prev.Raw, r.Raw)
		}
		out[r.Str("type")] = r
	}
}

func joinLobby(t *testing.T, bot *bottest.Bot, a *bottest.Agent) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	must(t, a.Join(ctx, bot.Lobby))
}

// NOTIFY reaches an agent PIRCAN can see, content-free.
func TestNotifyLive(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testNotifyLive)
}

func testNotifyLive(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Kind: kind})
	a, b, aID, bID := pair(t, bot, "live")
	a.Ask(`PIRCAN/1 CONTACT {"to":"` + bID + `","purpose":"Secret purpose"}`)
	n := b.NextNotify()
	if n.Str("type") != "contact_request" || n.Int("pending") != 1 {
		t.Fatalf("NOTIFY: %s", n.Raw)
	}
	for _, leak := range []string{"Secret", aID, a.Nick(), a.Account} {
		if strings.Contains(n.Raw, leak) {
			t.Fatalf("NOTIFY carries %q: %s", leak, n.Raw)
		}
	}
	items, _ := b.AskList(`PIRCAN/1 CONTACTS`)
	b.Ask(`PIRCAN/1 ACCEPT {"request_id":"` + items[0].Str("request_id") + `"}`)
	if n := a.NextNotify(); n.Str("type") != "contact_update" || len(n.Fields) != 1 {
		t.Fatalf("requester's NOTIFY: %s", n.Raw)
	}
	a.Ask(`PIRCAN/1 SEND {"to":"` + bID + `","text":"hello"}`)
	if n := b.NextNotify(); n.Str("type") != "message" || n.Int("unread") != 1 || strings.Contains(n.Raw, "hello") {
		t.Fatalf("message NOTIFY: %s", n.Raw)
	}
}

// While the agent is offline its notifications wait; they arrive, one line
// per type with the current count, when it joins the lobby.
func TestNotifyWaitsForTheAgent(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testNotifyWaitsForTheAgent)
}

func testNotifyWaitsForTheAgent(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Kind: kind, Limits: raised()})
	a, b, _, bID := pair(t, bot, "wait")
	agree(t, a, b, bID)
	b.Close()
	for _, text := range []string{"one", "two", "three"} {
		a.Ask(`PIRCAN/1 SEND {"to":"` + bID + `","text":"` + text + `"}`)
	}
	b2 := reconnect(t, bot, b.Account, "back")
	b2.NoNotify(2 * time.Second) // not visible to PIRCAN yet
	joinLobby(t, bot, b2)
	// Coalesced: one line per type with the current count, not three.
	got := notices(t, b2, 4*time.Second)
	if n := got["message"]; n.Int("unread") != 3 {
		t.Fatalf("waiting NOTIFY: %v", got)
	}
	if items, _ := b2.AskList(`PIRCAN/1 INBOX`); len(bottest.JoinMessages(items)) != 3 {
		t.Fatalf("INBOX after NOTIFY: %v", items)
	}
}

// A nick can change hands without PIRCAN seeing it: before a NOTIFY goes
// out, the server is asked who holds the nick now.
func TestNotifyNotToANickThatChangedHands(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testNotifyNotToANickThatChangedHands)
}

func testNotifyNotToANickThatChangedHands(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	nickChangesHands(t, kind, true)
}

// The same while the agreement's own NOTIFY is still on its way as b
// leaves: Ergo gives the freed nick to a newcomer within milliseconds, and
// a NOTIFY sent without MONITOR's word (once within a second of seeing b)
// reached it.
func TestNotifyInFlightNotToTheNextHolder(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, func(t *testing.T, kind ircnet.Kind) {
		t.Parallel()
		nickChangesHands(t, kind, false)
	})
}

// nickChangesHands: b's nick is taken by mallory; no NOTIFY for b's
// account reaches mallory. settled: b first had the agreement's NOTIFY.
func nickChangesHands(t *testing.T, kind ircnet.Kind, settled bool) {
	bot := bottest.Start(t, bottest.Options{Kind: kind, Limits: raised()})
	a, b, _, bID := pair(t, bot, "hands")
	agree(t, a, b, bID)
	if settled {
		if n := b.NextNotify(); n.Str("type") != "agreement_update" {
			t.Fatalf("NOTIFY of the agreement: %s", n.Raw)
		}
	}
	oldNick := b.Nick()
	b.Ask(`PIRCAN/1 ECHO`) // PIRCAN has seen b's account on oldNick (no shared channel)
	b.Close()
	// Mallory takes the nick, without b's account.
	var mallory *bottest.Agent
	deadline := time.Now().Add(10 * time.Second)
	for mallory == nil {
		c, err := bot.Net.Dial(t.Context(), oldNick)
		if err == nil {
			t.Cleanup(func() { c.Close() })
			mallory = bot.Adopt(t, c, "")
		} else if time.Now().After(deadline) {
			t.Fatalf("nick %s: %v", oldNick, err)
		}
	}
	a.Ask(`PIRCAN/1 SEND {"to":"` + bID + `","text":"for b only"}`)
	mallory.NoNotify(4 * time.Second)
	// b comes back under another nick and talks to PIRCAN: now it is told.
	b2 := reconnect(t, bot, b.Account, "realb")
	b2.Ask(`PIRCAN/1 ECHO`)
	if n := notices(t, b2, 4*time.Second)["message"]; n.Int("unread") != 1 {
		t.Fatalf("NOTIFY to the account's new nick: %s", n.Raw)
	}
}

// Another process (the future MCP face) writes a notification: LISTEN/NOTIFY
// wakes delivery at once.
func TestNotifyFromAnotherProcess(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testNotifyFromAnotherProcess)
}

func testNotifyFromAnotherProcess(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Kind: kind})
	b := bot.Agents(t, "other", 1)[0]
	bID := b.Hello("")
	other, err := store.Open(t.Context(), bot.DSN)
	must(t, err)
	defer other.Close()
	must(t, other.NotifyAgent(t.Context(), bID, "agreement_update"))
	if n := b.NextNotify(); n.Str("type") != "agreement_update" || len(n.Fields) != 1 {
		t.Fatalf("NOTIFY from another process: %s", n.Raw)
	}
}

// Notifications are kept for 24 hours, not longer.
func TestNotifyExpires(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testNotifyExpires)
}

func testNotifyExpires(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Kind: kind})
	b := bot.Agents(t, "stale", 1)[0]
	bID := b.Hello("")
	b.Close()
	must(t, bot.Store().NotifyAgent(t.Context(), bID, "agreement_update"))
	_, err := bot.Store().Pool().Exec(t.Context(), "UPDATE notifications SET created_at = created_at - interval '25 hours'")
	must(t, err)
	b2 := reconnect(t, bot, b.Account, "late")
	joinLobby(t, bot, b2)
	b2.NoNotify(3 * time.Second)
}
