package pircan_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// CONTACT's rule, from the facts the store reads: each refusal in its
// order, then the target's policy; only a request left pending counts
// against the pending limit.
func TestContactRule(t *testing.T) {
	const me, to = "a", "b"
	l := pircan.DefaultLimits
	rule := pircan.ContactRule{Limits: l}
	msg := []string{pircan.ScopeMessage}
	open := pircan.ContactFacts{TargetPolicy: pircan.PolicyAgentDecides}
	with := func(f func(*pircan.ContactFacts)) pircan.ContactFacts { c := open; f(&c); return c }
	granted := []pircan.AgreementScopes{{Requester: me, Scopes: []string{pircan.ScopeMessage, "task:x"}}}
	for _, c := range []struct {
		name   string
		to     string
		scopes []string
		facts  pircan.ContactFacts
		code   pircan.Code
		status string
	}{
		{"pending", to, msg, open, "", "pending"},
		{"to itself", me, msg, open, pircan.CodeSelfContact, ""},
		{"itself before the hourly limit", me, msg, with(func(f *pircan.ContactFacts) { f.RequestsHour = l.ContactsHour }), pircan.CodeSelfContact, ""},
		{"no such agent", to, msg, pircan.ContactFacts{RequestsHour: l.ContactsHour}, pircan.CodeUnknownAgent, ""},
		{"hourly limit", to, msg, with(func(f *pircan.ContactFacts) { f.RequestsHour, f.Pending = l.ContactsHour, true }), pircan.CodeRateLimited, ""},
		{"just under the hourly limit", to, msg, with(func(f *pircan.ContactFacts) { f.RequestsHour = l.ContactsHour - 1 }), "", "pending"},
		{"duplicate", to, msg, with(func(f *pircan.ContactFacts) { f.Pending, f.DeclinedRecently = true, true }), pircan.CodeDuplicateRequest, ""},
		{"already granted", to, []string{"task:x"}, with(func(f *pircan.ContactFacts) { f.Active = granted }), pircan.CodeAlreadyAgreed, ""},
		{"message goes both ways", to, msg, with(func(f *pircan.ContactFacts) {
			f.Active = []pircan.AgreementScopes{{Requester: to, Scopes: msg}}
		}), pircan.CodeAlreadyAgreed, ""},
		{"a task scope only to the requester", to, []string{"task:x"}, with(func(f *pircan.ContactFacts) {
			f.Active = []pircan.AgreementScopes{{Requester: to, Scopes: []string{"task:x"}}}
		}), "", "pending"},
		{"more than granted", to, []string{pircan.ScopeMessage, "task:y"}, with(func(f *pircan.ContactFacts) { f.Active = granted }), "", "pending"},
		{"cooldown", to, msg, with(func(f *pircan.ContactFacts) { f.DeclinedRecently = true }), pircan.CodeCooldown, ""},
		{"deny declines", to, msg, with(func(f *pircan.ContactFacts) { f.TargetPolicy, f.PendingOutgoing = pircan.PolicyDeny, l.PendingMax }), "", "declined"},
		{"auto-accept takes message alone", to, msg, with(func(f *pircan.ContactFacts) {
			f.TargetPolicy, f.PendingOutgoing = pircan.PolicyAutoAccept, l.PendingMax
		}), "", "accepted"},
		{"auto-accept leaves more pending", to, []string{pircan.ScopeMessage, "task:x"}, with(func(f *pircan.ContactFacts) { f.TargetPolicy = pircan.PolicyAutoAccept }), "", "pending"},
		{"owner-decides waits", to, msg, with(func(f *pircan.ContactFacts) { f.TargetPolicy = pircan.PolicyOwnerDecides }), "", "pending"},
		{"pending limit", to, msg, with(func(f *pircan.ContactFacts) { f.PendingOutgoing = l.PendingMax }), pircan.CodeTooManyPending, ""},
	} {
		out, err := rule.Decide(me, pircan.NewContact{To: c.to, Scopes: c.scopes, TTLDays: 30}, c.facts)
		switch {
		case c.code != "" && (err == nil || err.Code != c.code):
			t.Errorf("%s: %+v %v, want %s", c.name, out, err, c.code)
		case c.code == "" && (err != nil || out.Status != c.status || out.ByPolicy != (c.status != "pending")):
			t.Errorf("%s: %+v %v, want %s", c.name, out, err, c.status)
		}
	}
}

// SEND's rule: what a message without an agreement lacks, a reply's hop,
// and which budget refused a message the store did not insert.
func TestSendRule(t *testing.T) {
	l := pircan.DefaultLimits
	rule := pircan.SendRule{Limits: l}
	for _, c := range []struct {
		mine, theirs bool
		want         string
	}{{true, true, "Your contact request"}, {false, true, "This agent's contact request"}, {false, false, "No active agreement"}} {
		if err := rule.NoAgreement(c.mine, c.theirs); err.Code != pircan.CodeNotAuthorized || err.Message[:len(c.want)] != c.want {
			t.Errorf("no agreement, pending %v/%v: %v", c.mine, c.theirs, err)
		}
	}
	for _, c := range []struct {
		between   bool
		parentHop int
		hop       int
		code      pircan.Code
		field     string
	}{
		{true, 0, 1, "", ""},
		{true, l.MaxHops - 1, l.MaxHops, "", ""},
		{true, l.MaxHops, 0, pircan.CodeLoopLimit, ""},
		{false, 0, 0, pircan.CodeInvalidArgument, "reply_to"},
		{false, l.MaxHops, 0, pircan.CodeInvalidArgument, "reply_to"},
	} {
		hop, err := rule.Reply(c.between, c.parentHop)
		if c.code == "" && (err != nil || hop != c.hop) || c.code != "" && (err == nil || err.Code != c.code || err.Field != c.field) {
			t.Errorf("reply between %v after hop %d: %d %v", c.between, c.parentHop, hop, err)
		}
	}
	for _, c := range []struct {
		reply bool
		conv  int
		code  pircan.Code
	}{
		{true, l.ConversationHour, pircan.CodeConversationBudget},
		{true, l.ConversationHour - 1, pircan.CodeRateLimited},
		{false, l.ConversationHour, pircan.CodeRateLimited}, // a new message starts its own conversation
	} {
		if err := rule.OverBudget(c.reply, c.conv); err.Code != c.code {
			t.Errorf("over budget, reply %v, conversation %d: %v, want %s", c.reply, c.conv, err, c.code)
		}
	}
}

// ACCEPT, DECLINE and CANCEL's rule: who may decide, what may still be
// decided, what an acceptance may grant, and who is recorded as deciding.
func TestDecideRequest(t *testing.T) {
	const from, to = "a", "b"
	asked := []string{pircan.ScopeMessage, "task:x"}
	pending := pircan.DecisionFacts{From: from, To: to, Status: "pending", Scopes: asked, TTLDays: 30, TargetPolicy: pircan.PolicyAgentDecides}
	with := func(f func(*pircan.DecisionFacts)) pircan.DecisionFacts { c := pending; f(&c); return c }
	target, requester := pircan.Actor{AgentID: to}, pircan.Actor{AgentID: from}
	owner := pircan.Actor{AgentID: to, ByOwner: true}
	accept := pircan.Decision{Kind: pircan.DecideAccept}
	for _, c := range []struct {
		name      string
		actor     pircan.Actor
		d         pircan.Decision
		facts     pircan.DecisionFacts
		err       error
		status    string
		decidedBy string
		scopes    []string
		ttl       int
	}{
		{"target accepts all", target, accept, pending, nil, "accepted", "agent", asked, 30},
		{"target declines", target, pircan.Decision{Kind: pircan.DecideDecline}, pending, nil, "declined", "agent", asked, 30},
		{"requester cancels", requester, pircan.Decision{Kind: pircan.DecideCancel}, pending, nil, "cancelled", "", asked, 30},
		{"owner accepts", owner, accept, with(func(f *pircan.DecisionFacts) { f.TargetPolicy = pircan.PolicyOwnerDecides }), nil, "accepted", "owner", asked, 30},
		{"fewer scopes, fewer days", target, pircan.Decision{Kind: pircan.DecideAccept, Scopes: []string{"task:x"}, TTLDays: 7}, pending, nil, "accepted", "agent", []string{"task:x"}, 7},
		{"the requester cannot accept", requester, accept, pending, pircan.ErrNotFound, "", "", nil, 0},
		{"the target cannot cancel", target, pircan.Decision{Kind: pircan.DecideCancel}, pending, pircan.ErrNotFound, "", "", nil, 0},
		{"a stranger", pircan.Actor{AgentID: "c"}, accept, pending, pircan.ErrNotFound, "", "", nil, 0},
		{"not its own before decided", requester, accept, with(func(f *pircan.DecisionFacts) { f.Status = "accepted" }), pircan.ErrNotFound, "", "", nil, 0},
		{"decided", target, accept, with(func(f *pircan.DecisionFacts) { f.Status = "declined" }), pircan.ErrNotPending, "", "", nil, 0},
		{"expired", requester, pircan.Decision{Kind: pircan.DecideCancel}, with(func(f *pircan.DecisionFacts) { f.Expired = true }), pircan.ErrNotPending, "", "", nil, 0},
		{"owner-decides: not the agent", target, pircan.Decision{Kind: pircan.DecideDecline}, with(func(f *pircan.DecisionFacts) { f.TargetPolicy = pircan.PolicyOwnerDecides }), pircan.ErrNotAuthorized, "", "", nil, 0},
		{"owner-decides: the requester still cancels", requester, pircan.Decision{Kind: pircan.DecideCancel}, with(func(f *pircan.DecisionFacts) { f.TargetPolicy = pircan.PolicyOwnerDecides }), nil, "cancelled", "", asked, 30},
		{"a scope not asked for", target, pircan.Decision{Kind: pircan.DecideAccept, Scopes: []string{"task:y"}}, pending, pircan.ErrInvalidGrant, "", "", nil, 0},
		{"more days than asked", owner, pircan.Decision{Kind: pircan.DecideAccept, TTLDays: 31}, pending, pircan.ErrInvalidGrant, "", "", nil, 0},
	} {
		out, err := pircan.DecideRequest(c.actor, c.d, c.facts)
		if err != c.err {
			t.Errorf("%s: %v, want %v", c.name, err, c.err)
			continue
		}
		if c.err == nil && (out.Status != c.status || out.DecidedBy != c.decidedBy || !slices.Equal(out.Scopes, c.scopes) || out.TTLDays != c.ttl) {
			t.Errorf("%s: %+v, want %s by %q, %v for %d days", c.name, out, c.status, c.decidedBy, c.scopes, c.ttl)
		}
	}
}

// A new task's rule: each refusal in its order, and which agreement and
// skill a task goes under.
func TestTaskRule(t *testing.T) {
	const me, to = "a", "b"
	l := pircan.DefaultLimits
	rule := pircan.TaskRule{Limits: l}
	chem := pircan.TaskGranting{ID: "g1", Scopes: []string{pircan.ScopeMessage, "task:chemistry"}}
	both := pircan.TaskGranting{ID: "g2", Scopes: []string{"task:chemistry", "task:physics"}}
	open := pircan.TaskFacts{TargetExists: true, Active: []pircan.TaskGranting{chem}}
	for _, c := range []struct {
		name      string
		to, skill string
		facts     pircan.TaskFacts
		code      pircan.Code
		field     string
		agreement string
		granted   string
	}{
		{"the one skill granted", to, "", open, "", "", "g1", "chemistry"},
		{"a named skill", to, "chemistry", open, "", "", "g1", "chemistry"},
		{"the first agreement granting it", to, "physics", pircan.TaskFacts{TargetExists: true, Active: []pircan.TaskGranting{chem, both}}, "", "", "g2", "physics"},
		{"to itself", me, "", open, pircan.CodeSelfContact, "", "", ""},
		{"no such agent", to, "", pircan.TaskFacts{Active: open.Active}, pircan.CodeUnknownAgent, "to", "", ""},
		{"no agreement", to, "chemistry", pircan.TaskFacts{TargetExists: true}, pircan.CodeNotAuthorized, "", "", ""},
		{"a skill not granted", to, "physics", open, pircan.CodeNotAuthorized, "", "", ""},
		{"several skills, none named", to, "", pircan.TaskFacts{TargetExists: true, Active: []pircan.TaskGranting{both}}, pircan.CodeInvalidArgument, "skill", "", ""},
		{"the hourly limit after the grant", to, "", pircan.TaskFacts{TargetExists: true, Active: open.Active, TasksHour: l.TasksHour}, pircan.CodeRateLimited, "", "", ""},
		{"no grant before the hourly limit", to, "", pircan.TaskFacts{TargetExists: true, TasksHour: l.TasksHour}, pircan.CodeNotAuthorized, "", "", ""},
		{"just under the hourly limit", to, "", pircan.TaskFacts{TargetExists: true, Active: open.Active, TasksHour: l.TasksHour - 1}, "", "", "g1", "chemistry"},
	} {
		g, err := rule.Decide(me, pircan.NewTask{To: c.to, Skill: c.skill, Text: "t"}, c.facts)
		switch {
		case c.code != "" && (err == nil || err.Code != c.code || err.Field != c.field):
			t.Errorf("%s: %+v %v, want %s on %q", c.name, g, err, c.code, c.field)
		case c.code == "" && (err != nil || g.AgreementID != c.agreement || g.Skill != c.granted):
			t.Errorf("%s: %+v %v, want %s under %s", c.name, g, err, c.granted, c.agreement)
		}
	}
}

// REPORT's rule: each refusal in its order.
func TestReportRule(t *testing.T) {
	const me, on = "a", "b"
	l := pircan.DefaultLimits
	rule := pircan.ReportRule{Limits: l}
	open := pircan.ReportFacts{TargetExists: true}
	for _, c := range []struct {
		name     string
		reported string
		resource string
		facts    pircan.ReportFacts
		code     pircan.Code
		field    string
	}{
		{"filed", on, "", open, "", ""},
		{"about one of its resources", on, "r", pircan.ReportFacts{TargetExists: true, ResourceFound: true}, "", ""},
		{"itself", me, "", open, pircan.CodeSelfReport, ""},
		{"no such agent", on, "", pircan.ReportFacts{ReportsHour: l.ReportsHour}, pircan.CodeUnknownAgent, "agent_id"},
		{"a resource not the agent's", on, "r", pircan.ReportFacts{TargetExists: true, ReportsHour: l.ReportsHour}, pircan.CodeNotFound, "resource_id"},
		{"the hourly limit", on, "", pircan.ReportFacts{TargetExists: true, ReportsHour: l.ReportsHour, OpenReport: true}, pircan.CodeRateLimited, ""},
		{"one open report per agent", on, "", pircan.ReportFacts{TargetExists: true, ReportsHour: l.ReportsHour - 1, OpenReport: true}, pircan.CodeDuplicateReport, ""},
	} {
		err := rule.Decide(me, pircan.NewReport{Reported: c.reported, Resource: c.resource, Category: "spam"}, c.facts)
		switch {
		case c.code == "" && err != nil:
			t.Errorf("%s: %v, want it filed", c.name, err)
		case c.code != "" && (err == nil || err.Code != c.code || err.Field != c.field):
			t.Errorf("%s: %v, want %s on %q", c.name, err, c.code, c.field)
		}
	}
}

// OWNER's rules over the agent's binding: a confirmed owner holds the
// agent, and an account that declined is not asked again within 24 hours.
func TestOwnerRules(t *testing.T) {
	confirmed := pircan.BindingFacts{Account: "Alice", Status: pircan.BindingConfirmed}
	declined := pircan.BindingFacts{Account: "Alice", Status: pircan.BindingDeclined, DecidedRecently: true}
	for _, c := range []struct {
		name    string
		account string
		facts   pircan.BindingFacts
		code    pircan.Code
	}{
		{"no binding", "alice", pircan.BindingFacts{}, ""},
		{"another pending", "bob", pircan.BindingFacts{Account: "Alice", Status: pircan.BindingPending}, ""},
		{"confirmed holds", "bob", confirmed, pircan.CodeNotAuthorized},
		{"declined, asked again at once", "ALICE", declined, pircan.CodeCooldown},
		{"declined, another account", "bob", declined, ""},
		{"declined long ago", "alice", pircan.BindingFacts{Account: "Alice", Status: pircan.BindingDeclined}, ""},
	} {
		err := pircan.NameOwnerRule(c.account, c.facts)
		if (c.code == "" && err != nil) || (c.code != "" && (err == nil || err.Code != c.code)) {
			t.Errorf("name %s: %v, want %q", c.name, err, c.code)
		}
	}
	if err := pircan.NameOwnerRule("bob", confirmed); err == nil || !strings.HasPrefix(err.Message, "Alice confirmed") {
		t.Errorf("the refusal names the owner that holds the agent: %v", err)
	}
	if err := pircan.ClearOwnerRule(confirmed); err == nil || err.Code != pircan.CodeNotAuthorized {
		t.Errorf("clear past a confirmed owner: %v", err)
	}
	for _, f := range []pircan.BindingFacts{{}, declined, {Account: "Alice", Status: pircan.BindingPending}} {
		if err := pircan.ClearOwnerRule(f); err != nil {
			t.Errorf("clear %+v: %v", f, err)
		}
	}
}
