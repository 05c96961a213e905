package bot_test

import (
	"context"
	"testing"
	"time"

	"github.com/ergochat/irc-go/ircmsg"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/ircnet"
)

// Under the server's case mapping a nick's case is a label too: an agent
// that changes only the case of its nick stays the same agent, and replies
// go to the nick as the server now spells it.
func TestNickCaseIsALabel(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testNickCaseIsALabel)
}

func testNickCaseIsALabel(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{Kind: kind})
	a := bot.Agents(t, "CaseMix", 1)[0]
	id := a.Hello("")
	lower := "casemix" + a.Nick()[len("CaseMix"):]
	if lower == a.Nick() {
		t.Fatalf("nick %s has no upper case to drop", a.Nick())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	must(t, a.SetNick(ctx, lower))
	a.Send(`PIRCAN/1 WHOAMI {"id":"lc"}`)
	m, err := a.Expect(ctx, func(m ircmsg.Message) bool { return m.Command == "NOTICE" && len(m.Params) == 2 })
	must(t, err)
	if m.Params[0] != lower {
		t.Fatalf("reply addressed to %q, want the nick as now spelled, %q", m.Params[0], lower)
	}
	r, err := bottest.ParseReply(m.Params[1])
	must(t, err)
	if r.Str("agent_id") != id || r.Str("re") != "lc" {
		t.Fatalf("WHOAMI after a case-only nick change: %s", r.Raw)
	}
}
