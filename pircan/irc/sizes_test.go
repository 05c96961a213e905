package irc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// Every reply of every verb fits its line for the largest inputs the verb
// accepts and the largest data the store may hold, beside the longest id:
// re is on every line, and no field is dropped or emptied (replyOracle).

const (
	sizesUUID  = "0b0e0f4c-1111-4222-8333-944455556666"
	sizesOther = "1c1f1a5d-2222-4333-8444-a55566667777"
)

var sizesAt = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// sizesStore holds the largest rows a store may return, written with fill.
type sizesStore struct {
	pircan.ForumStore    // the IRC face has no forum: never called
	pircan.OperatorStore // nil: no IRC verb reaches the operator's part
	fill                 string
	fail                 error // when set, every call fails with it
}

func (s sizesStore) rep(n int) string { return strings.Repeat(s.fill, n) }

func (s sizesStore) list(n int, item func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = item(i)
	}
	return out
}

func (s sizesStore) scopes() []string {
	return s.list(20, func(i int) string { return fmt.Sprintf("task:%02d%s", i, strings.Repeat("s", 62)) })
}

func (s sizesStore) account(i int) string {
	return fmt.Sprintf("acct%02d", i) + strings.Repeat("a", 58)
}

func (s sizesStore) agent() pircan.Agent {
	return pircan.Agent{ID: sizesUUID, Account: s.account(0), Name: s.rep(80), Description: s.rep(300),
		Capabilities: s.list(20, func(i int) string { return fmt.Sprintf("%02d", i) + s.rep(62) }),
		CardURL:      "https://example.org/" + strings.Repeat("c", 280), Nick: strings.Repeat("n", 64), CreatedAt: sizesAt,
		Owner: &pircan.Owner{Name: s.rep(80), Verification: "unverified"}}
}

func (s sizesStore) party() pircan.PartyRef {
	return pircan.PartyRef{AgentID: sizesOther, Name: s.rep(80), IRCAccounts: s.list(5, s.account)}
}

func (s sizesStore) AgentByAccount(context.Context, string) (pircan.Agent, error) {
	return s.agent(), s.fail
}
func (s sizesStore) AgentProfile(context.Context, string) (pircan.Agent, error) {
	return s.agent(), s.fail
}
func (s sizesStore) Hello(context.Context, string, string, pircan.Profile, int) (pircan.Agent, bool, error) {
	return s.agent(), true, s.fail
}
func (s sizesStore) SeenNick(context.Context, string, string) error { return s.fail }
func (s sizesStore) FindAgents(context.Context, pircan.FindQuery) ([]pircan.Agent, int, error) {
	out := make([]pircan.Agent, 10)
	for i := range out {
		out[i] = s.agent()
	}
	return out, 1000000, s.fail
}
func (s sizesStore) Channels(context.Context, string, string, int, int) ([]pircan.Channel, int, error) {
	out := make([]pircan.Channel, 20)
	for i := range out {
		out[i] = pircan.Channel{Name: "#" + strings.Repeat("c", 49), Private: true, Topic: s.rep(330), Members: 1000000}
	}
	return out, 1000000, s.fail
}
func (s sizesStore) JoinChannel(context.Context, string, string) (pircan.Channel, error) {
	return pircan.Channel{Name: "#" + strings.Repeat("c", 49), Private: true, Topic: s.rep(330), Members: 1000000}, s.fail
}
func (s sizesStore) Policy(context.Context, string) (string, bool, error) {
	return pircan.PolicyOwnerDecides, true, s.fail
}
func (s sizesStore) SetPolicy(context.Context, pircan.Actor, string) error { return s.fail }
func (s sizesStore) Contact(context.Context, pircan.Actor, pircan.NewContact, pircan.ContactRule) (pircan.ContactResult, error) {
	return pircan.ContactResult{RequestID: sizesUUID, Status: "accepted", AgreementID: sizesOther}, s.fail
}
func (s sizesStore) Contacts(context.Context, string, bool, string, int, int) ([]pircan.ContactItem, int, error) {
	out := make([]pircan.ContactItem, 10)
	for i := range out {
		out[i] = pircan.ContactItem{RequestID: sizesUUID, Other: s.party(), Purpose: s.rep(300), Scopes: s.scopes(),
			TTLDays: 365, Status: "cancelled", ExpiresAt: sizesAt}
	}
	return out, 1000000, s.fail
}
func (s sizesStore) Decide(context.Context, pircan.Actor, pircan.Decision) (pircan.DecisionResult, error) {
	return pircan.DecisionResult{AgreementID: sizesOther, Scopes: s.scopes(), ExpiresAt: sizesAt}, s.fail
}
func (s sizesStore) Agreements(context.Context, string, bool, int, int) ([]pircan.AgreementItem, int, error) {
	out := make([]pircan.AgreementItem, 10)
	for i := range out {
		out[i] = pircan.AgreementItem{AgreementID: sizesUUID, With: s.party(), Role: "requester", Scopes: s.scopes(),
			Status: "expired", ExpiresAt: sizesAt}
	}
	return out, 1000000, s.fail
}
func (s sizesStore) Revoke(context.Context, pircan.Actor, string) error { return s.fail }
func (s sizesStore) Send(context.Context, pircan.Actor, pircan.NewMessage, pircan.SendRule) (pircan.SentMessage, error) {
	return pircan.SentMessage{MessageID: sizesUUID, ConversationID: sizesOther, AgreementID: sizesUUID, Hop: 8}, s.fail
}
func (s sizesStore) Inbox(context.Context, pircan.Actor, int, []string) ([]pircan.Message, int, error) {
	out := make([]pircan.Message, 10)
	for i := range out {
		text := s.rep(15) // a short one, and long ones of 200 and more characters
		if i%2 == 1 {
			text = s.rep(pircan.MaxStoredText / len(s.fill))
		}
		out[i] = pircan.Message{MessageID: sizesUUID, From: s.party(), AgreementID: sizesOther, ConversationID: sizesUUID,
			Hop: 8, At: sizesAt, Text: text}
	}
	return out, 1000000, s.fail
}
func (s sizesStore) MarkRead(context.Context, []pircan.Reads) error { return s.fail }
func (s sizesStore) Login(context.Context, string, string, pircan.Limits) (pircan.LoginResult, error) {
	// A User-Agent is whatever the browser sent: up to 300 bytes of anything.
	ua := strings.Repeat("\u009b"+s.fill+"\u202e", 300)[:300]
	return pircan.LoginResult{SessionID: sizesUUID, Account: s.account(0), Browser: ua, StartedAt: sizesAt, ExpiresAt: sizesAt}, s.fail
}
func (s sizesStore) Logout(context.Context, string) (int, error) { return 1000000, s.fail }
func (s sizesStore) binding() *pircan.Binding {
	return &pircan.Binding{Account: s.account(1), Status: pircan.BindingConfirmed, NamedAt: sizesAt, DecidedAt: sizesAt,
		Owner: &pircan.Owner{Account: s.account(1), Name: s.rep(80), Verification: "verified"}}
}
func (s sizesStore) OwnerBinding(context.Context, string) (*pircan.Binding, error) {
	return s.binding(), s.fail
}
func (s sizesStore) NameOwner(context.Context, pircan.Actor, string) (pircan.Binding, error) {
	b := *s.binding()
	b.Status = pircan.BindingPending
	return b, s.fail
}
func (s sizesStore) ClearOwner(context.Context, pircan.Actor) (*pircan.Binding, error) {
	return s.binding(), s.fail
}
func (s sizesStore) Report(context.Context, pircan.Actor, pircan.NewReport, pircan.ReportRule) (string, error) {
	return sizesUUID, s.fail
}

// The owner portal's part of the Store: no IRC verb reaches it.
func (s sizesStore) StartSignIn(context.Context, pircan.NewSignIn, int) (pircan.PortalSession, error) {
	return pircan.PortalSession{}, s.fail
}
func (s sizesStore) PortalSession(context.Context, []byte) (pircan.PortalSession, error) {
	return pircan.PortalSession{}, s.fail
}
func (s sizesStore) Owner(context.Context, string) (*pircan.Owner, error) { return nil, s.fail }
func (s sizesStore) OwnedAgents(context.Context, string) ([]pircan.OwnedAgent, error) {
	return nil, s.fail
}
func (s sizesStore) PortalSessions(context.Context, string) ([]pircan.SessionItem, error) {
	return nil, s.fail
}
func (s sizesStore) OwnerSetPolicy(context.Context, string, string, string, string) error {
	return s.fail
}
func (s sizesStore) OwnerDecide(context.Context, string, string, string, pircan.Decision) (pircan.DecisionResult, error) {
	return pircan.DecisionResult{}, s.fail
}
func (s sizesStore) OwnerRevoke(context.Context, string, string, string, string) error { return s.fail }
func (s sizesStore) EndPortalSession(context.Context, string, string, string) error    { return s.fail }
func (s sizesStore) PendingBindings(context.Context, string) ([]pircan.PendingBinding, error) {
	return nil, s.fail
}
func (s sizesStore) DecideBinding(context.Context, string, string, string, bool) error { return s.fail }
func (s sizesStore) ReleaseAgent(context.Context, string, string, string) error        { return s.fail }

// sizesJSON writes v as a request would carry it.
func sizesJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

// sizesLongest is build(n) for the largest n whose request fits 400 bytes.
func sizesLongest(t *testing.T, build func(n int) string) string {
	t.Helper()
	if len(build(0)) > MaxRequestBytes {
		t.Fatalf("request does not fit even empty: %s", build(0))
	}
	n := 0
	for n < 400 && len(build(n+1)) <= MaxRequestBytes {
		n++
	}
	return build(n)
}

// sizesCase is one request at its largest; want is the verb of its first reply.
type sizesCase struct {
	verb, want string
	line       string
}

func sizesCases(t *testing.T, fill, id string) []sizesCase {
	t.Helper()
	idJSON := sizesJSON(id)
	req := func(verb string, fields ...string) string {
		return Prefix + " " + verb + " {" + strings.Join(append(fields, `"id":`+idJSON), ",") + "}"
	}
	text := func(key string, verb string, max int, others ...string) string {
		return sizesLongest(t, func(n int) string {
			r := []rune(strings.Repeat(fill, n))
			return req(verb, append(others, `"`+key+`":`+sizesJSON(string(r[:min(len(r), max)])))...)
		})
	}
	task := func(i int) string { return fmt.Sprintf(`"task:%02d%s"`, i, strings.Repeat("s", 62)) }
	scopes := func(verb string, others ...string) string {
		return sizesLongest(t, func(n int) string {
			list := make([]string, min(n, 20))
			for i := range list {
				list[i] = task(i)
			}
			return req(verb, append(others, `"scopes":[`+strings.Join(list, ",")+`]`)...)
		})
	}
	cases := []sizesCase{
		{"HELP", "HELP", req("HELP")},
		{"ECHO", "ECHO", text("text", "ECHO", 400)},
		{"HELLO", "HELLO", text("name", "HELLO", pircan.ArgNamed(pircan.HelloArgs{}, "name").Text, `"description":`+sizesJSON(strings.Repeat(fill, 5)))},
		{"WHOAMI", "WHOAMI", req("WHOAMI")},
		{"FIND", "FIND-RESULT", text("q", "FIND", pircan.ArgNamed(pircan.FindArgs{}, "q").Text, `"limit":10`, `"offset":10000`)},
		{"CHANNELS", "CHANNEL", text("q", "CHANNELS", pircan.ArgNamed(pircan.ChannelsArgs{}, "q").Text, `"limit":20`, `"offset":10000`)},
		{"JOIN", "JOIN", req("JOIN", `"channel":"#`+strings.Repeat("c", 49)+`"`)},
		{"POLICY", "POLICY", req("POLICY", `"policy":"owner-decides"`)},
		{"CONTACT", "CONTACT", scopes("CONTACT", `"to":"`+sizesOther+`"`, `"purpose":"p"`, `"ttl_days":365`)},
		{"CONTACT", "CONTACT", text("purpose", "CONTACT", pircan.ArgNamed(pircan.ContactArgs{}, "purpose").Text, `"to":"`+sizesOther+`"`)},
		{"CONTACTS", "CONTACT-ITEM", req("CONTACTS", `"direction":"outgoing"`, `"status":"cancelled"`, `"limit":10`, `"offset":10000`)},
		{"ACCEPT", "ACCEPT", scopes("ACCEPT", `"request_id":"`+sizesUUID+`"`, `"ttl_days":365`)},
		{"DECLINE", "DECLINE", req("DECLINE", `"request_id":"`+sizesUUID+`"`)},
		{"CANCEL", "CANCEL", req("CANCEL", `"request_id":"`+sizesUUID+`"`)},
		{"AGREEMENTS", "AGREEMENT", req("AGREEMENTS", `"all":true`, `"limit":10`, `"offset":10000`)},
		{"REVOKE", "REVOKE", req("REVOKE", `"agreement_id":"`+sizesUUID+`"`)},
		{"SEND", "SEND", text("text", "SEND", pircan.MaxIRCText, `"to":"`+sizesOther+`"`, `"reply_to":"`+sizesUUID+`"`)},
		{"INBOX", "MESSAGE", req("INBOX", `"limit":10`)},
		{"LOGIN", "LOGIN", req("LOGIN", `"code":"bcdf-ghjk"`)},
		{"LOGOUT", "LOGOUT", req("LOGOUT")},
		{"OWNER", "OWNER", req("OWNER")},
		{"OWNER", "OWNER", req("OWNER", `"account":"`+strings.Repeat("o", 64)+`"`)},
		{"OWNER", "OWNER", req("OWNER", `"clear":true`)},
		{"REPORT", "REPORT", text("details", "REPORT", pircan.ArgNamed(pircan.ReportArgs{}, "details").Text, `"agent_id":"`+sizesOther+`"`, `"category":"impersonation"`)},
		{"RESOURCES", "RESOURCE", text("q", "RESOURCES", pircan.ArgNamed(pircan.ListResourcesArgs{}, "q").Text,
			`"tag":"`+strings.Repeat("t", pircan.MaxCapability)+`"`, `"by":"`+sizesOther+`"`, `"limit":10`, `"offset":10000`)},
		{"TASKS", "TASK", req("TASKS", `"limit":10`)},
		{"COMPLETE", "COMPLETE", text("text", "COMPLETE", pircan.MaxIRCText, `"task_id":"`+sizesUUID+`"`, `"outcome":"rejected"`)},
		// Errors whose words carry what the caller wrote.
		{"ERROR", "ERROR", sizesLongest(t, func(n int) string { return req("V" + strings.Repeat("X", n)) })},
		{"ERROR", "ERROR", sizesLongest(t, func(n int) string {
			return req("FIND", sizesJSON(strings.Repeat(fill, n))+":1")
		})},
		{"ERROR", "ERROR", sizesLongest(t, func(n int) string {
			return req("HELP", `"verb":`+sizesJSON(strings.Repeat(fill, n)))
		})},
		{"ERROR", "ERROR", req("ECHO", `"text":"`+strings.Repeat("x", 400)+`"`)}, // too_long, re still read
	}
	for _, v := range verbNames(verbTable()) {
		cases = append(cases, sizesCase{"HELP", "HELP", req("HELP", `"verb":"`+strings.ToLower(v)+`"`)})
	}
	return cases
}

// sizesIDs are the longest ids a request may carry, in bytes as written back.
var sizesIDs = []string{strings.Repeat("r", 64), strings.Repeat(`"`, 32), strings.Repeat("é", 32), strings.Repeat("😀", 16),
	"\u202e" + strings.Repeat("i", 58)}

// sizesFills are what user text and stored rows are made of: ASCII, RTL
// and ZWJ emoji, and the characters the encoder writes longest (escaped).
var sizesFills = []string{"x", "😀", "ش", "👩\u200d👩\u200d👧", `"`, "\u2028", "\u009b", "\u202e"}

func TestEveryReplyFitsWithRe(t *testing.T) {
	limits := pircan.DefaultLimits
	limits.PerCaller, limits.Unidentified = 1<<30, 1<<30
	covered := map[string]bool{}
	for _, fill := range sizesFills {
		for _, id := range sizesIDs {
			for _, fail := range []error{nil, errors.New("store down")} {
				st := sizesStore{fill: fill, fail: fail}
				svc := newTestFace(st, Config{Limits: limits, Now: func() time.Time { return sizesAt }})
				sender := Sender{Account: st.account(0), Nick: strings.Repeat("n", 64)}
				for _, c := range sizesCases(t, fill, id) {
					replies, _ := svc.Handle(context.Background(), sender, c.line)
					if len(replies) == 0 {
						t.Fatalf("%s: no reply", c.line)
					}
					first := replies[0].Verb
					if fail == nil && first != c.want && !(c.want != "ERROR" && first == "ERROR" && refusedFill(fill)) {
						t.Fatalf("fill %q: %s answered %s, want %s: %v", fill, c.line, first, c.want, replies[0].Fields)
					}
					if fail == nil && first == c.want {
						covered[c.verb] = true
					}
					texts := sizesCheck(t, replies, id, c.line)
					var sent []string // the texts the lines carry, as stored
					switch {
					case fail != nil:
					case c.verb == "INBOX":
						msgs, _, _ := st.Inbox(context.Background(), pircan.Actor{}, 10, nil)
						for _, m := range msgs {
							sent = append(sent, m.Text)
						}
					case c.verb == "TASKS":
						tasks, _, _ := st.Tasks(context.Background(), pircan.TaskQuery{Incoming: true, Status: pircan.TaskOpen, Limit: 10})
						for _, tk := range tasks {
							sent = append(sent, tk.Text)
						}
					}
					for i, s := range sent {
						want := replySanitize(string([]rune(s)[:min(len([]rune(s)), pircan.MaxIRCText)]))
						if i >= len(texts) || texts[i] != want {
							t.Fatalf("fill %q id %q: %s text %d arrives as %q, want %q", fill, id, c.verb, i, texts, want)
						}
					}
				}
			}
		}
	}
	for _, v := range verbNames(verbTable()) {
		if !covered[v] {
			t.Errorf("verb %s has no case at its largest inputs here", v)
		}
	}
}

// refusedFill: what some fields refuse (controls, bidi; U+2028 alone is
// blank): then the ERROR is the reply to hold to its line.
func refusedFill(fill string) bool { return fill == "\u009b" || fill == "\u202e" || fill == "\u2028" }

// sizesCheck encodes every reply and holds it to Encode's promise, with re
// on every line; it returns the text of each message or task, joined
// across its MESSAGE and MESSAGE-MORE (TASK, TASK-MORE) lines.
func sizesCheck(t *testing.T, replies []Reply, id, request string) []string {
	t.Helper()
	var texts []string
	for i, r := range replies {
		line, err := Encode(r)
		if err != nil {
			t.Fatalf("%s: reply %d (%s) does not fit: %v", request, i, r.Verb, err)
		}
		replyOracle(t, r, line)
		_, obj := replySplit(t, line)
		if obj["re"] != id {
			t.Fatalf("%s: reply %d without re: %s", request, i, line)
		}
		switch r.Verb {
		case "MESSAGE", "TASK":
			if from, _ := obj["from"].(map[string]any); from["name"] == "" {
				t.Fatalf("%s: %s without from.name: %s", request, r.Verb, line)
			}
			if obj["continues"] == true && obj["truncated"] != true {
				t.Fatalf("%s: %s continues without truncated: %s", request, r.Verb, line)
			}
			texts = append(texts, obj["text"].(string))
		case "MESSAGE-MORE", "TASK-MORE":
			texts[len(texts)-1] += obj["text"].(string)
		}
	}
	return texts
}

// Lines PIRCAN sends on its own (no request, so no re) fit as well.
func TestUnsolicitedRepliesFit(t *testing.T) {
	svc := newTestFace(sizesStore{fill: "x"}, Config{Lobby: "#" + strings.Repeat("l", 49)})
	replies, _ := svc.Welcome(Sender{Account: "a", Nick: strings.Repeat("n", 64)}, "")
	if len(replies) == 0 {
		t.Fatal("no welcome")
	}
	replies = append(replies, NotifyReplies([]pircan.Notification{{Type: "contact_request", Count: 1 << 30}, {Type: "message", Count: 1 << 30},
		{Type: "task_request", Count: 1 << 30}, {Type: "contact_update", Count: -1}, {Type: "agreement_update", Count: -1}, {Type: "task_update", Count: -1}})...)
	for _, r := range replies {
		line, err := Encode(r)
		if err != nil {
			t.Fatalf("%s: %v", r.Verb, err)
		}
		replyOracle(t, r, line)
	}
	for _, r := range plainHelp(verbTable()) {
		if line, _ := Encode(r); len(line) > MaxReplyBytes || line != r.Plain {
			t.Errorf("plain help line shortened or over %d bytes: %q", MaxReplyBytes, line)
		}
	}
}

// Names, capabilities, card URLs and channels refuse the bidi controls
// that could make one read as another's; right-to-left scripts and emoji
// sequences stay welcome.
func TestLabelsRefuseBidiControls(t *testing.T) {
	svc := newTestFace(sizesStore{fill: "x"}, Config{Limits: pircan.DefaultLimits})
	sender := Sender{Account: "alice", Nick: "alice"}
	for _, c := range []struct{ line, field string }{
		{`PIRCAN/1 HELLO {"name":"Alice\u202eecilA"}`, "name"},
		{`PIRCAN/1 HELLO {"name":"\u2066Bob\u2069"}`, "name"},
		{`PIRCAN/1 HELLO {"name":"x\u202a"}`, "name"},
		{`PIRCAN/1 HELLO {"capabilities":["chem","ab\u202dc"]}`, "capabilities"},
		{`PIRCAN/1 HELLO {"capabilities":["\u2067x"]}`, "capabilities"},
		{`PIRCAN/1 HELLO {"card_url":"https://example.org/\u202egpj.exe"}`, "card_url"},
		{`PIRCAN/1 JOIN {"channel":"#chem\u2068"}`, "channel"},
		{`PIRCAN/1 JOIN {"channel":"#` + strings.Repeat(`\"`, 25) + `"}`, "channel"}, // 51 bytes as written back
	} {
		replies := svc.handle(context.Background(), sender, c.line)
		if len(replies) != 1 || replies[0].Verb != "ERROR" {
			t.Fatalf("%s: %v, want one ERROR", c.line, replies)
		}
		f := replies[0].Fields
		if f[keyIndex(f, "code")].Value != string(pircan.CodeInvalidArgument) || f[keyIndex(f, "field")].Value != Text(c.field) {
			t.Errorf("%s: %v, want invalid_argument for %s", c.line, f, c.field)
		}
	}
	for _, line := range []string{
		`PIRCAN/1 HELLO {"name":"مساعد الكيمياء","description":"עוזר כימיה","capabilities":["كيمياء","כימיה"]}`,
		`PIRCAN/1 HELLO {"name":"Lab 👩‍🔬 family 👩‍👩‍👧","capabilities":["👩‍🔬"]}`,
		`PIRCAN/1 HELLO {"name":"שלום\u200fAgent"}`, // a mark, not an override
		`PIRCAN/1 JOIN {"channel":"#כימיה"}`,
	} {
		if replies := svc.handle(context.Background(), sender, line); len(replies) != 1 || replies[0].Verb == "ERROR" {
			t.Errorf("%s: %v, want it accepted", line, replies)
		}
	}
	if err := pircan.CheckChannelName("#ops\u202e"); err == nil || err.Field != "channel" {
		t.Errorf("operator channel names: %v, want bidi refused", err)
	}
}

func (s sizesStore) IssueToken(context.Context, pircan.Actor, pircan.NewToken) (pircan.Token, error) {
	return pircan.Token{}, s.fail
}
func (s sizesStore) Tokens(context.Context, string) ([]pircan.Token, error) { return nil, s.fail }
func (s sizesStore) RevokeToken(context.Context, pircan.Actor, string) (pircan.Token, error) {
	return pircan.Token{}, s.fail
}
func (s sizesStore) TokenBySecret(context.Context, []byte) (pircan.Token, error) {
	return pircan.Token{}, s.fail
}
func (s sizesStore) AddWebhook(context.Context, pircan.Actor, string, string, int) (pircan.Webhook, error) {
	return pircan.Webhook{}, s.fail
}
func (s sizesStore) Webhooks(context.Context, string) ([]pircan.Webhook, error) { return nil, s.fail }
func (s sizesStore) DeleteWebhook(context.Context, pircan.Actor, string) error  { return s.fail }

func (s sizesStore) AddResource(context.Context, pircan.Actor, pircan.NewResource, pircan.Limits) (pircan.Resource, error) {
	return s.resource(), s.fail
}
func (s sizesStore) Resources(context.Context, pircan.ResourceQuery) ([]pircan.Resource, int, error) {
	out := make([]pircan.Resource, 10)
	for i := range out {
		out[i] = s.resource()
	}
	return out, 1000000, s.fail
}
func (s sizesStore) Resource(context.Context, string, string) (pircan.Resource, error) {
	return s.resource(), s.fail
}
func (s sizesStore) DeleteResource(context.Context, pircan.Actor, string) error { return s.fail }
func (s sizesStore) RemoveResource(context.Context, pircan.Actor, string, string) (pircan.Resource, error) {
	return s.resource(), s.fail
}

// resource is the largest resource row a store may return.
func (s sizesStore) resource() pircan.Resource {
	return pircan.Resource{ID: sizesUUID, Title: s.rep(300), Access: pircan.AccessAgreement, MediaType: "text/plain",
		Tags: s.list(20, func(i int) string { return fmt.Sprintf("%02d", i) + s.rep(62) }), Size: pircan.MaxResourceBytes,
		By: s.party(), CreatedAt: sizesAt, Readable: true}
}

func (s sizesStore) AddTask(context.Context, pircan.Actor, pircan.NewTask, pircan.TaskRule) (pircan.Task, error) {
	return s.task(), s.fail
}
func (s sizesStore) Tasks(context.Context, pircan.TaskQuery) ([]pircan.Task, int, error) {
	out := make([]pircan.Task, 10)
	for i := range out {
		out[i] = s.task()
	}
	return out, 1000000, s.fail
}
func (s sizesStore) Task(context.Context, string, string) (pircan.Task, error) {
	return s.task(), s.fail
}
func (s sizesStore) AnswerTask(context.Context, pircan.Actor, string, string, string) (pircan.Task, error) {
	return s.task(), s.fail
}
func (s sizesStore) CancelTask(context.Context, pircan.Actor, string) (pircan.Task, error) {
	return s.task(), s.fail
}

// task is the largest task row a store may return.
func (s sizesStore) task() pircan.Task {
	return pircan.Task{ID: sizesUUID, Skill: strings.Repeat("s", 64), From: s.party(), To: s.party(), AgreementID: sizesOther,
		At: sizesAt, State: pircan.TaskFailed, Text: s.rep(pircan.MaxStoredText / 4), Answer: s.rep(pircan.MaxStoredText / 4), AnsweredAt: sizesAt}
}
