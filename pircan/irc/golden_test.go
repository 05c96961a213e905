package irc

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// The golden replies (testdata/golden/replies.txt, see testdata/README.md):
// for a fixed set of requests over a small fixed store and a fixed clock,
// the exact NOTICE text the IRC face sends. A change to any wording, field
// order or rendering shows up as a diff of that file, to be reviewed;
// `go test ./pircan/irc -run Golden -update` rewrites it.

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden/replies.txt from the face's replies")

const goldenFile = "../../testdata/golden/replies.txt"

const (
	goldenSelfID  = "11111111-1111-4111-8111-111111111111" // hazmat, the caller
	goldenOtherID = "22222222-2222-4222-8222-222222222222" // chemhelper
	goldenReqID   = "33333333-3333-4333-8333-333333333333"
	goldenAgrID   = "44444444-4444-4444-8444-444444444444"
	goldenMsgID   = "55555555-5555-4555-8555-555555555555"
	goldenConvID  = "66666666-6666-4666-8666-666666666666"
	goldenRepID   = "77777777-7777-4777-8777-777777777777"
	goldenSessID  = "88888888-8888-4888-8888-888888888888"
	goldenResID   = "99999999-9999-4999-8999-999999999999"
	goldenTaskID  = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
)

var goldenAt = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// goldenStore answers every IRC verb with one small fixed row. The owner
// portal's methods come from sizesStore: no IRC verb reaches them. Only the
// policy is kept, so that POLICY shows what it set.
type goldenStore struct {
	sizesStore
	policy *string
}

var goldenAgents = map[string]pircan.Agent{
	"hazmat": {ID: goldenSelfID, Account: "hazmat", Name: "Hazmat Agent", Description: "Chemical release assessment",
		Capabilities: []string{"hazmat", "chemistry"}, CardURL: "https://example.org/hazmat.json", Nick: "hazmat", CreatedAt: goldenAt,
		Owner: &pircan.Owner{Account: "alice", Name: "Alice", Verification: "verified"}},
	"chemhelper": {ID: goldenOtherID, Account: "chemhelper", Name: "Chem Helper", Description: "Answers chemistry questions",
		Capabilities: []string{"chemistry"}, Nick: "chemhelper", CreatedAt: goldenAt.Add(-24 * time.Hour)},
}

func goldenParty() pircan.PartyRef {
	return pircan.PartyRef{AgentID: goldenOtherID, Name: "Chem Helper", IRCAccounts: []string{"chemhelper"}}
}

func (goldenStore) AgentByAccount(_ context.Context, account string) (pircan.Agent, error) {
	a, ok := goldenAgents[account]
	if !ok {
		return pircan.Agent{}, pircan.ErrNotFound
	}
	return a, nil
}
func (goldenStore) Hello(_ context.Context, account, nick string, p pircan.Profile, _ int) (pircan.Agent, bool, error) {
	a := pircan.Agent{ID: goldenOtherID, Account: account, Nick: nick, CreatedAt: goldenAt}
	if p.Name != nil {
		a.Name = *p.Name
	}
	if p.Description != nil {
		a.Description = *p.Description
	}
	if p.Capabilities != nil {
		a.Capabilities = *p.Capabilities
	}
	if p.CardURL != nil {
		a.CardURL = *p.CardURL
	}
	return a, true, nil
}
func (goldenStore) SeenNick(context.Context, string, string) error { return nil }
func (goldenStore) FindAgents(context.Context, pircan.FindQuery) ([]pircan.Agent, int, error) {
	return []pircan.Agent{goldenAgents["chemhelper"], goldenAgents["hazmat"]}, 2, nil
}
func (goldenStore) Channels(context.Context, string, string, int, int) ([]pircan.Channel, int, error) {
	return []pircan.Channel{{Name: "#agents", Topic: "Lobby", Members: 12}, {Name: "#chem", Private: true, Topic: "Chemistry", Members: 3}}, 2, nil
}
func (g goldenStore) JoinChannel(ctx context.Context, _, name string) (pircan.Channel, error) {
	list, _, _ := g.Channels(ctx, "", "", 0, 0)
	for _, ch := range list {
		if ch.Name == name {
			ch.Members++
			return ch, nil
		}
	}
	return pircan.Channel{}, pircan.ErrNotFound
}
func (g goldenStore) Policy(context.Context, string) (string, bool, error) {
	return *g.policy, false, nil
}
func (g goldenStore) SetPolicy(_ context.Context, _ pircan.Actor, p string) error {
	*g.policy = p
	return nil
}
func (goldenStore) Contact(context.Context, pircan.Actor, pircan.NewContact, pircan.ContactRule) (pircan.ContactResult, error) {
	return pircan.ContactResult{RequestID: goldenReqID, Status: "pending"}, nil
}
func (goldenStore) Contacts(context.Context, string, bool, string, int, int) ([]pircan.ContactItem, int, error) {
	return []pircan.ContactItem{{RequestID: goldenReqID, Other: goldenParty(), Purpose: "Share spill data",
		Scopes: []string{"message"}, TTLDays: 30, Status: "pending", ExpiresAt: goldenAt.Add(7 * 24 * time.Hour)}}, 1, nil
}
func (goldenStore) Decide(_ context.Context, _ pircan.Actor, d pircan.Decision) (pircan.DecisionResult, error) {
	r := pircan.DecisionResult{RequestID: goldenReqID, Status: "declined"}
	switch d.Kind {
	case pircan.DecideAccept:
		r = pircan.DecisionResult{RequestID: goldenReqID, Status: "accepted", AgreementID: goldenAgrID,
			Scopes: []string{"message"}, ExpiresAt: goldenAt.Add(30 * 24 * time.Hour)}
	case pircan.DecideCancel:
		r.Status = "cancelled"
	}
	return r, nil
}
func (goldenStore) Agreements(context.Context, string, bool, int, int) ([]pircan.AgreementItem, int, error) {
	return []pircan.AgreementItem{{AgreementID: goldenAgrID, With: goldenParty(), Role: "requester",
		Scopes: []string{"message"}, Status: "active", ExpiresAt: goldenAt.Add(30 * 24 * time.Hour)}}, 1, nil
}
func (goldenStore) Revoke(context.Context, pircan.Actor, string) error { return nil }
func (goldenStore) Send(context.Context, pircan.Actor, pircan.NewMessage, pircan.SendRule) (pircan.SentMessage, error) {
	return pircan.SentMessage{MessageID: goldenMsgID, ConversationID: goldenConvID, AgreementID: goldenAgrID, Hop: 1}, nil
}
func (goldenStore) Inbox(context.Context, pircan.Actor, int, []string) ([]pircan.Message, int, error) {
	return []pircan.Message{{MessageID: goldenMsgID, From: goldenParty(), AgreementID: goldenAgrID, ConversationID: goldenConvID,
		Hop: 1, At: goldenAt.Add(-time.Minute), Text: "Chlorine readings attached: 3 ppm at the gate."}}, 0, nil
}
func (goldenStore) MarkRead(context.Context, []pircan.Reads) error { return nil }
func (goldenStore) Login(_ context.Context, account, _ string, _ pircan.Limits) (pircan.LoginResult, error) {
	return pircan.LoginResult{SessionID: goldenSessID, Account: account, Browser: "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0",
		StartedAt: goldenAt.Add(-time.Minute), ExpiresAt: goldenAt.Add(12 * time.Hour)}, nil
}
func (goldenStore) Logout(context.Context, string) (int, error) { return 2, nil }
func (goldenStore) OwnerBinding(context.Context, string) (*pircan.Binding, error) {
	return &pircan.Binding{Account: "alice", Status: pircan.BindingConfirmed, NamedAt: goldenAt.Add(-48 * time.Hour),
		DecidedAt: goldenAt.Add(-47 * time.Hour), Owner: &pircan.Owner{Account: "alice", Name: "Alice", Verification: "verified"}}, nil
}
func (goldenStore) NameOwner(_ context.Context, _ pircan.Actor, account string) (pircan.Binding, error) {
	return pircan.Binding{Account: account, Status: pircan.BindingPending, NamedAt: goldenAt}, nil
}
func (goldenStore) ClearOwner(context.Context, pircan.Actor) (*pircan.Binding, error) {
	return nil, nil
}
func (goldenStore) Report(context.Context, pircan.Actor, pircan.NewReport, pircan.ReportRule) (string, error) {
	return goldenRepID, nil
}
func (goldenStore) Resources(context.Context, pircan.ResourceQuery) ([]pircan.Resource, int, error) {
	return []pircan.Resource{
		{ID: goldenResID, Title: "Chlorine exposure limits", Tags: []string{"chemistry", "safety"}, Access: pircan.AccessAgreement,
			MediaType: "text/markdown", Size: 1834, By: goldenParty(), CreatedAt: goldenAt.Add(-time.Hour), Readable: true},
		{ID: goldenReqID, Title: "Spill kit checklist", Tags: []string{}, Access: pircan.AccessPublic,
			MediaType: pircan.DefaultMediaType, Size: 412, By: goldenParty(), CreatedAt: goldenAt.Add(-2 * time.Hour), Readable: true},
	}, 2, nil
}

// goldenTaskText is longer than IRC's 200 characters, and multi-byte: its
// TASK line continues in TASK-MORE lines, the last one truncated.
const goldenTaskText = "Assess the chlorine release at the Östra depot: wind 4 m/s NNE, 3 ppm at the gate, rising ☣. " +
	"Give the evacuation radius, the shelter-in-place zone and the exposure limits for the next hour (metres, ppm) " +
	"with your confidence. Schüler-Straße is closed: use the north road."

func (goldenStore) Tasks(context.Context, pircan.TaskQuery) ([]pircan.Task, int, error) {
	return []pircan.Task{
		{ID: goldenTaskID, Skill: "chemistry", From: goldenParty(), AgreementID: goldenAgrID, At: goldenAt.Add(-2 * time.Minute),
			State: pircan.TaskOpen, Text: goldenTaskText},
		{ID: goldenReqID, Skill: "chemistry", From: goldenParty(), AgreementID: goldenAgrID, At: goldenAt.Add(-time.Hour),
			State: pircan.TaskOpen, Text: "Exposure limit for ammonia?"},
	}, 2, nil
}
func (goldenStore) AnswerTask(_ context.Context, _ pircan.Actor, id, outcome, text string) (pircan.Task, error) {
	return pircan.Task{ID: id, Skill: "chemistry", From: goldenParty(), AgreementID: goldenAgrID, At: goldenAt.Add(-2 * time.Minute),
		State: outcome, Text: goldenTaskText, Answer: text, AnsweredAt: goldenAt}, nil
}

// goldenCase is one request; code is the error code its ERROR carries, ""
// for a verb that succeeds.
type goldenCase struct {
	account string // "" = no NickServ account on the message
	line    string
	code    pircan.Code
}

var goldenCases = []goldenCase{
	{"hazmat", `PIRCAN/1 HELP {"id":"g01"}`, ""},
	{"hazmat", `PIRCAN/1 HELP {"verb":"send","id":"g02"}`, ""},
	{"", `PIRCAN/1 ECHO {"text":"hello","id":"g03"}`, ""},
	{"newbie", `PIRCAN/1 HELLO {"name":"New Agent","description":"Just arrived","capabilities":["chemistry"],"card_url":"https://example.org/new.json","id":"g04"}`, ""},
	{"hazmat", `PIRCAN/1 WHOAMI {"id":"g05"}`, ""},
	{"hazmat", `PIRCAN/1 FIND {"capability":"chemistry","limit":2,"id":"g06"}`, ""},
	{"hazmat", `PIRCAN/1 CHANNELS {"id":"g07"}`, ""},
	{"hazmat", `PIRCAN/1 JOIN {"channel":"#chem","id":"g08"}`, ""},
	{"hazmat", `PIRCAN/1 POLICY {"id":"g09"}`, ""},
	{"hazmat", `PIRCAN/1 POLICY {"policy":"auto-accept","id":"g10"}`, ""},
	{"hazmat", `PIRCAN/1 CONTACT {"to":"` + goldenOtherID + `","purpose":"Share spill data","scopes":["message"],"id":"g11"}`, ""},
	{"hazmat", `PIRCAN/1 CONTACTS {"direction":"incoming","id":"g12"}`, ""},
	{"hazmat", `PIRCAN/1 ACCEPT {"request_id":"` + goldenReqID + `","id":"g13"}`, ""},
	{"hazmat", `PIRCAN/1 DECLINE {"request_id":"` + goldenReqID + `","id":"g14"}`, ""},
	{"hazmat", `PIRCAN/1 CANCEL {"request_id":"` + goldenReqID + `","id":"g15"}`, ""},
	{"hazmat", `PIRCAN/1 AGREEMENTS {"id":"g16"}`, ""},
	{"hazmat", `PIRCAN/1 REVOKE {"agreement_id":"` + goldenAgrID + `","id":"g17"}`, ""},
	{"hazmat", `PIRCAN/1 SEND {"to":"` + goldenOtherID + `","text":"Readings, please.","id":"g18"}`, ""},
	{"hazmat", `PIRCAN/1 INBOX {"id":"g19"}`, ""},
	{"hazmat", `PIRCAN/1 LOGIN {"code":"BCDF-GHJK","id":"g20"}`, ""},
	{"hazmat", `PIRCAN/1 OWNER {"id":"g21"}`, ""},
	{"hazmat", `PIRCAN/1 OWNER {"account":"bob","id":"g22"}`, ""},
	{"hazmat", `PIRCAN/1 LOGOUT {"id":"g23"}`, ""},
	{"hazmat", `PIRCAN/1 REPORT {"agent_id":"` + goldenOtherID + `","category":"spam","details":"Floods #chem","id":"g24"}`, ""},
	{"hazmat", `PIRCAN/1 RESOURCES {"tag":"chemistry","id":"g25"}`, ""},
	{"hazmat", `PIRCAN/1 TASKS {"limit":2,"id":"g26"}`, ""},
	{"hazmat", `PIRCAN/1 COMPLETE {"task_id":"` + goldenTaskID + `","outcome":"completed","text":"Evacuate 300 m downwind; shelter in place to 1 km.","id":"g27"}`, ""},
	// Errors.
	{"hazmat", `PIRCAN/1 FROB {"id":"e01"}`, pircan.CodeUnknownVerb},
	{"hazmat", `PIRCAN/1 COMPLETE {"task_id":"` + goldenTaskID + `","outcome":"done","text":"x","id":"e02"}`, pircan.CodeInvalidArgument},
	{"hazmat", `PIRCAN/1 FIND {"q":`, pircan.CodeInvalidJSON},
	{"hazmat", `PIRCAN/1 FIND {"limit":1000,"id":"e04"}`, pircan.CodeInvalidArgument},
	{"hazmat", `PIRCAN/1 HELLO {"name":"Alice\u202eecilA","id":"e05"}`, pircan.CodeInvalidArgument},
	{"newbie", `PIRCAN/1 WHOAMI {"id":"e06"}`, pircan.CodeNotRegistered},
	{"", `PIRCAN/1 WHOAMI {"id":"e07"}`, pircan.CodeNotIdentified},
	{"hazmat", `PIRCAN/1 ECHO {"text":"` + strings.Repeat("x", 400) + `","id":"e08"}`, pircan.CodeTooLong},
	{"hazmat", `PIRCAN/1  {"id":"e09"}`, pircan.CodeMissingVerb},
	{"hazmat", `hello PIRCAN`, pircan.CodeNotPircan},
	{"hazmat", `help`, ""}, // the people-facing plain help
}

// goldenRender runs every case and returns the file's text: each request
// as "> [account] line", then each reply line as "< line", then a blank line.
func goldenRender(t *testing.T) string {
	t.Helper()
	limits := pircan.DefaultLimits
	limits.PerCaller, limits.Unidentified = 1<<30, 1<<30 // one caller sends them all within the minute
	policy := pircan.PolicyAgentDecides
	face := newTestFace(goldenStore{policy: &policy}, Config{Limits: limits, Now: func() time.Time { return goldenAt }})
	var b strings.Builder
	b.WriteString("# Golden replies of the IRC face: written by `go test ./pircan/irc -run Golden -update`\n")
	b.WriteString("# (pircan/irc/golden_test.go). \"> [account]\" is a request, \"< \" each NOTICE line it gets.\n\n")
	succeeded := map[string]bool{}
	for _, c := range goldenCases {
		nick := c.account
		if nick == "" {
			nick = "guest"
		}
		replies, out := face.Handle(context.Background(), Sender{Account: c.account, Nick: nick}, c.line)
		if out.Code != c.code {
			t.Errorf("%s: code %q, want %q", c.line, out.Code, c.code)
		}
		if out.Code == "" {
			succeeded[out.Verb] = true
		}
		req, _ := Parse(c.line)
		account := c.account
		if account == "" {
			account = "-"
		}
		fmt.Fprintf(&b, "> [%s] %s\n", account, c.line)
		if len(replies) == 0 {
			t.Errorf("%s: no reply", c.line)
		}
		for _, r := range replies {
			line, err := Encode(r)
			if err != nil {
				t.Fatalf("%s: %s does not fit: %v", c.line, r.Verb, err)
			}
			goldenCheckLine(t, c.line, req, r, line)
			fmt.Fprintf(&b, "< %s\n", line)
		}
		b.WriteString("\n")
	}
	for _, v := range verbNames(verbTable()) {
		if !succeeded[v] {
			t.Errorf("verb %s has no successful request in the golden cases", v)
		}
	}
	return b.String()
}

// goldenCheckLine holds each line to what every NOTICE promises
// (replyOracle: its length, MESSAGE lines at most MaxReplyBytes without re,
// no raw controls), and to the request's id as re, the last field, whenever
// the request could be read.
func goldenCheckLine(t *testing.T, request string, req *Request, r Reply, line string) {
	t.Helper()
	if r.Plain != "" {
		if len(line) > MaxReplyBytes || strings.ContainsAny(line, "\r\n\x00") {
			t.Errorf("%s: %d bytes or a line break: %q", request, len(line), line)
		}
		return
	}
	replyOracle(t, r, line)
	if req == nil || !req.HasID {
		return
	}
	if want := `"re":` + sizesJSON(req.ID) + `}`; !strings.HasSuffix(line, want) {
		t.Errorf("%s: re is not the last field: %s", request, line)
	}
}

func TestGoldenReplies(t *testing.T) {
	got := goldenRender(t)
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(goldenFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("%v (write it with -update)", err)
	}
	if got == string(want) {
		return
	}
	gl, wl := strings.Split(got, "\n"), bytes.Split(want, []byte("\n"))
	for i := 0; i < max(len(gl), len(wl)); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = string(wl[i])
		}
		if g != w {
			t.Fatalf("%s:%d differs (review, then rewrite with -update):\n got: %s\nwant: %s", goldenFile, i+1, g, w)
		}
	}
}
