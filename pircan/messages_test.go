package pircan_test

import (
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// agree gives a an agreement with b (b auto-accepts message requests).
func agree(t *testing.T, svc *pircan.Service, a, b pircan.Caller) string {
	t.Helper()
	_, err := svc.Policy(t.Context(), b, pircan.PolicyArgs{Policy: sp(pircan.PolicyAutoAccept)})
	must(t, err)
	r, err := svc.Contact(t.Context(), a, pircan.ContactArgs{To: &b.Agent.ID, Purpose: sp("talk")})
	if err != nil || r.Status != "accepted" {
		t.Fatalf("agreement: %+v %v", r, err)
	}
	return r.AgreementID
}

// inbox reads the caller's unread messages, settling none.
func inbox(t *testing.T, svc *pircan.Service, c pircan.Caller, limit int) pircan.InboxResult {
	t.Helper()
	r, err := svc.Inbox(t.Context(), c, pircan.InboxArgs{Limit: &limit})
	must(t, err)
	return r
}

func TestSendArguments(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	a, b := agent(t, svc, pircan.FaceIRC), agent(t, svc, pircan.FaceIRC)
	bID := b.Agent.ID
	_, err := svc.Send(ctx, a, pircan.SendArgs{To: &bID, Text: sp("hello")})
	wantErr(t, "SEND without an agreement", err, pircan.CodeNotAuthorized, "")
	agree(t, svc, a, b)
	mcp := caller(t, svc, pircan.FaceMCP, a.Account)

	ircMax := a.Sizes.TextChars
	if ircMax != pircan.MaxIRCText || mcp.Sizes.TextBytes != pircan.MaxStoredText || mcp.Sizes.TextChars != 0 {
		t.Fatalf("sizes: IRC %+v, MCP %+v", a.Sizes, mcp.Sizes)
	}
	bad := []struct {
		name  string
		who   pircan.Caller
		args  pircan.SendArgs
		code  pircan.Code
		field string
	}{
		{"no to", a, pircan.SendArgs{Text: sp("x")}, pircan.CodeInvalidArgument, "to"},
		{"bad to", a, pircan.SendArgs{To: sp("b"), Text: sp("x")}, pircan.CodeInvalidArgument, "to"},
		{"no text", a, pircan.SendArgs{To: &bID}, pircan.CodeInvalidArgument, "text"},
		{"blank", a, pircan.SendArgs{To: &bID, Text: sp("  ")}, pircan.CodeEmpty, "text"},
		{"control", a, pircan.SendArgs{To: &bID, Text: sp("a\x00b")}, pircan.CodeInvalidArgument, "text"},
		{"IRC over", a, pircan.SendArgs{To: &bID, Text: sp(strings.Repeat("x", ircMax+1))}, pircan.CodeTooLong, "text"},
		{"MCP over", mcp, pircan.SendArgs{To: &bID, Text: sp(strings.Repeat("x", pircan.MaxStoredText+1))}, pircan.CodeTooLong, "text"},
		{"MCP over in runes", mcp, pircan.SendArgs{To: &bID, Text: sp(strings.Repeat("é", pircan.MaxStoredText/2) + "x")}, pircan.CodeTooLong, "text"},
		{"MCP blank", mcp, pircan.SendArgs{To: &bID, Text: sp("\t\r\n")}, pircan.CodeEmpty, "text"}, // line breaks and tabs are text there
		{"MCP control", mcp, pircan.SendArgs{To: &bID, Text: sp("a\x00b")}, pircan.CodeInvalidArgument, "text"},
		{"bad reply_to", a, pircan.SendArgs{To: &bID, Text: sp("x"), ReplyTo: sp("m1")}, pircan.CodeInvalidArgument, "reply_to"},
		{"unknown reply_to", a, pircan.SendArgs{To: &bID, Text: sp("x"), ReplyTo: sp(noID)}, pircan.CodeInvalidArgument, "reply_to"},
		{"to myself", a, pircan.SendArgs{To: &a.Agent.ID, Text: sp("me")}, pircan.CodeNotAuthorized, ""},
		{"to nobody", a, pircan.SendArgs{To: sp(noID), Text: sp("x")}, pircan.CodeNotAuthorized, ""},
	}
	for _, c := range bad {
		_, err := svc.Send(ctx, c.who, c.args)
		wantErr(t, c.name, err, c.code, c.field)
	}
	if r := inbox(t, svc, b, 10); len(r.Messages) != 0 || r.Remaining != 0 {
		t.Fatalf("refused SENDs stored %d messages", len(r.Messages)+r.Remaining)
	}

	// IRC: characters, not bytes. MCP: 60,000 bytes, whole.
	irc := strings.Repeat("é", ircMax)
	if _, err := svc.Send(ctx, a, pircan.SendArgs{To: &bID, Text: &irc}); err != nil {
		t.Fatalf("%d two-byte characters over IRC: %v", ircMax, err)
	}
	long := strings.Repeat("Long report. ", pircan.MaxStoredText/13) + strings.Repeat("!", pircan.MaxStoredText%13)
	if len(long) != pircan.MaxStoredText {
		t.Fatalf("long is %d bytes", len(long))
	}
	if _, err := svc.Send(ctx, mcp, pircan.SendArgs{To: &bID, Text: &long}); err != nil {
		t.Fatalf("%d bytes over MCP: %v", len(long), err)
	}
	r := inbox(t, svc, caller(t, svc, pircan.FaceMCP, b.Account), 10)
	if len(r.Messages) != 2 || r.Messages[0].Text != irc || r.Messages[1].Text != long {
		t.Fatalf("INBOX: %v", r.Messages)
	}
	for _, m := range r.Messages {
		m.Settle(true)
	}
}

func TestSendReplyChains(t *testing.T) {
	t.Parallel()
	l := sharedLimits() // the spec's figures: 8 hops, 40 messages per conversation and hour
	svc := newServiceLimits(t, l)
	ctx := t.Context()
	a, b := agent(t, svc, pircan.FaceIRC), agent(t, svc, pircan.FaceMCP)
	agreement := agree(t, svc, a, b)

	first, err := svc.Send(ctx, a, pircan.SendArgs{To: &b.Agent.ID, Text: sp("ping")})
	if err != nil || first.Hop != 0 || first.ConversationID != first.MessageID || first.AgreementID != agreement {
		t.Fatalf("first SEND: %+v %v", first, err)
	}
	// Each answers the last message, as a naive bot would: hop by hop up
	// to MaxHops, then loop_limit.
	last, sender, to := first.MessageID, b, a
	for hop := 1; hop <= l.MaxHops; hop++ {
		m, err := svc.Send(ctx, sender, pircan.SendArgs{To: &to.Agent.ID, Text: sp("pong"), ReplyTo: &last})
		if err != nil || m.Hop != hop || m.ConversationID != first.MessageID {
			t.Fatalf("hop %d: %+v %v", hop, m, err)
		}
		last, sender, to = m.MessageID, to, sender
	}
	_, err = svc.Send(ctx, sender, pircan.SendArgs{To: &to.Agent.ID, Text: sp("pong"), ReplyTo: &last})
	wantErr(t, "a reply past MaxHops", err, pircan.CodeLoopLimit, "")
	// A message of another conversation between others is no reply_to.
	c, d := agent(t, svc, pircan.FaceIRC), agent(t, svc, pircan.FaceIRC)
	agree(t, svc, c, d)
	_, err = svc.Send(ctx, c, pircan.SendArgs{To: &d.Agent.ID, Text: sp("x"), ReplyTo: &first.MessageID})
	wantErr(t, "reply_to of others", err, pircan.CodeInvalidArgument, "reply_to")

	// Replying to the first message again stays at hop 1, until the
	// conversation's hourly budget is spent.
	sent := l.MaxHops + 1
	for ; sent < l.ConversationHour; sent++ {
		m, err := svc.Send(ctx, b, pircan.SendArgs{To: &a.Agent.ID, Text: sp("again"), ReplyTo: &first.MessageID})
		if err != nil || m.Hop != 1 {
			t.Fatalf("message %d: %+v %v", sent+1, m, err)
		}
	}
	_, err = svc.Send(ctx, b, pircan.SendArgs{To: &a.Agent.ID, Text: sp("again"), ReplyTo: &first.MessageID})
	wantErr(t, "over the conversation budget", err, pircan.CodeConversationBudget, "")
}

func TestInbox(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	a, b := agent(t, svc, pircan.FaceIRC), agent(t, svc, pircan.FaceIRC)
	agreement := agree(t, svc, a, b)
	limit := pircan.ArgNamed(pircan.InboxArgs{}, "limit")
	for _, n := range []int{limit.Min - 1, limit.Max + 1} {
		_, err := svc.Inbox(ctx, b, pircan.InboxArgs{Limit: &n})
		wantErr(t, "INBOX limit", err, pircan.CodeInvalidArgument, "limit")
	}
	var ids []string
	for _, text := range []string{"one", "two", "three"} {
		m, err := svc.Send(ctx, a, pircan.SendArgs{To: &b.Agent.ID, Text: sp(text)})
		must(t, err)
		ids = append(ids, m.MessageID)
	}

	r := inbox(t, svc, b, 1)
	if len(r.Messages) != 1 || r.Remaining != 2 {
		t.Fatalf("INBOX 1: %d messages, %d remaining", len(r.Messages), r.Remaining)
	}
	m := r.Messages[0]
	if m.MessageID != ids[0] || m.From.AgentID != a.Agent.ID || m.From.Name != a.Agent.Name || m.Text != "one" ||
		m.AgreementID != agreement || m.ConversationID != ids[0] || m.Hop != 0 || m.At.IsZero() {
		t.Fatalf("message: %+v", m.Message)
	}
	if s := m.String(); strings.Contains(s, "one") {
		t.Errorf("a message logs its text: %s", s)
	}
	// In flight: the next INBOX skips it.
	r2 := inbox(t, svc, b, 5)
	if len(r2.Messages) != 2 || r2.Messages[0].MessageID != ids[1] || r2.Remaining != 0 {
		t.Fatalf("INBOX while one is in flight: %v, %d remaining", r2.Messages, r2.Remaining)
	}
	// Not delivered: it comes back. Delivered: marked read.
	m.Settle(false)
	r3 := inbox(t, svc, b, 5)
	if len(r3.Messages) != 1 || r3.Messages[0].MessageID != ids[0] {
		t.Fatalf("INBOX after a failed delivery: %v", r3.Messages)
	}
	r3.Messages[0].Settle(true)
	r3.Messages[0].Settle(false) // a second fate is ignored
	r2.Messages[0].Settle(true)
	svc.WaitReads()
	r2.Messages[1].Settle(false)
	r4 := inbox(t, svc, b, 5)
	if len(r4.Messages) != 1 || r4.Messages[0].MessageID != ids[2] || r4.Remaining != 0 {
		t.Fatalf("INBOX after two were read: %v", r4.Messages)
	}
	r4.Messages[0].Settle(true)
	svc.WaitReads()
	// Read is kept in the store: another Service sees nothing unread.
	if r := inbox(t, newService(t), b, 5); len(r.Messages) != 0 || r.Remaining != 0 {
		t.Fatalf("INBOX after all were read: %v", r.Messages)
	}
	// The sender's inbox is its own.
	if r := inbox(t, svc, a, 5); len(r.Messages) != 0 {
		t.Fatalf("the sender got its own messages: %v", r.Messages)
	}
}

// A SEND refused for want of an agreement says what is missing: a request,
// or the acceptance of one still pending, and names no face's verbs.
func TestSendRefusalSaysWhatIsMissing(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	a, b := agent(t, svc, pircan.FaceIRC), agent(t, svc, pircan.FaceIRC)
	refusal := func(from, to pircan.Caller, next pircan.Next) string {
		t.Helper()
		_, err := svc.Send(ctx, from, pircan.SendArgs{To: &to.Agent.ID, Text: sp("hello")})
		wantErr(t, "SEND", err, pircan.CodeNotAuthorized, "")
		msg := pircan.AsError(err).Message
		if got := pircan.AsError(err).Next; got != next {
			t.Fatalf("next step %q, want %q (%s)", got, next, msg)
		}
		if strings.Contains(msg, "CONTACT") || strings.Contains(msg, "ACCEPT") {
			t.Fatalf("the core's refusal names a verb: %q", msg)
		}
		return msg
	}
	if msg := refusal(a, b, pircan.NextContact); !strings.Contains(msg, "ask this agent for one first") {
		t.Fatalf("no request yet: %q", msg)
	}
	if _, err := svc.Contact(ctx, a, pircan.ContactArgs{To: &b.Agent.ID, Purpose: sp("talk")}); err != nil {
		t.Fatal(err)
	}
	if msg := refusal(a, b, ""); !strings.Contains(msg, "Your contact request to this agent is still pending") {
		t.Fatalf("the sender's request pending: %q", msg)
	}
	if msg := refusal(b, a, pircan.NextContacts); !strings.Contains(msg, "contact request to you is still pending: accept it") {
		t.Fatalf("the other's request pending: %q", msg)
	}
}
