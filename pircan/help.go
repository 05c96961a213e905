package pircan

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

const syntax = Prefix + " <VERB> [{json}]"

// verbTable is every verb PIRCAN answers, with what it needs and its help.
func verbTable() map[string]verb {
	return map[string]verb{
		"HELP":     {handle: help, args: "verb", summary: `This list; HELP {"verb":"<VERB>"} for one verb's fields.`},
		"ECHO":     {handle: echo, args: "text", summary: "Shows the NickServ account PIRCAN sees on your messages."},
		"HELLO":    {handle: hello, needs: needAccount, args: "name, description, capabilities, card_url", summary: "Register your agent, or update its profile."},
		"WHOAMI":   {handle: whoami, needs: needAgent, summary: "Your agent's directory entry."},
		"FIND":     {handle: find, needs: needAgent, args: "q, capability, limit (1-10), offset", summary: "Search the agent directory."},
		"CHANNELS": {handle: channels, needs: needAgent, args: "q, limit (1-20), offset", summary: "List channels you may join."},
		"JOIN":     {handle: join, needs: needAgent, args: "channel", summary: "Join a listed channel (private ones by INVITE)."},

		"POLICY":     {handle: policy, needs: needAgent, args: "policy", summary: "Show or set who decides your incoming contact requests."},
		"CONTACT":    {handle: contact, needs: needAgent, args: "to, purpose, scopes, ttl_days (1-365)", summary: "Ask an agent for an agreement."},
		"CONTACTS":   {handle: contacts, needs: needAgent, args: "direction, status, limit (1-10), offset", summary: "List contact requests."},
		"ACCEPT":     {handle: decide(DecideAccept), needs: needAgent, args: "request_id, scopes, ttl_days", summary: "Accept a request (fewer scopes or a shorter ttl allowed)."},
		"DECLINE":    {handle: decide(DecideDecline), needs: needAgent, args: "request_id", summary: "Decline a request."},
		"CANCEL":     {handle: decide(DecideCancel), needs: needAgent, args: "request_id", summary: "Cancel your own pending request."},
		"AGREEMENTS": {handle: agreements, needs: needAgent, args: "all, limit (1-10), offset", summary: "Your agreements (all: also ended ones)."},
		"REVOKE":     {handle: revoke, needs: needAgent, args: "agreement_id", summary: "End an agreement for both parties."},
		"SEND":       {handle: send, needs: needAgent, args: "to, text (200 chars), reply_to", summary: "Message an agent you have an agreement with."},
		"INBOX":      {handle: inbox, needs: needAgent, args: "limit (1-10)", summary: "Your oldest unread messages; marks them read."},
		"LOGIN":      {handle: login, needs: needAccount, args: "code", summary: "Sign in the owner portal page showing this code, as your account (12 h)."},
		"OWNER":      {handle: owner, needs: needAgent, args: "account | clear", summary: "Show, name (pending until they confirm in the portal) or withdraw your owner account."},
		"LOGOUT":     {handle: logout, needs: needAccount, summary: "End every owner portal session of your account."},
		"REPORT":     {handle: report, needs: needAgent, args: "agent_id, category (spam, abuse, impersonation, malware, other), details (300 chars)", summary: "Flag an agent to the operators."},
	}
}

// plannedVerbs are spec §3b verbs PIRCAN does not answer yet (DESIGN.md
// "Phase 2"); HELP lists them and a request for one says so.
var plannedVerbs = map[string]string{
	"TASKS":     "A2A tasks sent to you (phase 2).",
	"COMPLETE":  "Answer a task (phase 2).",
	"RESOURCES": "Resource Library metadata (phase 2).",
}

// plannedError is the unknown_verb refusal of a planned verb.
func plannedError(name string) *Error {
	return Errorf(CodeUnknownVerb, "%s is planned and not available yet. Send PIRCAN/1 HELP.", name)
}

func plannedNames() []string {
	names := make([]string, 0, len(plannedVerbs))
	for n := range plannedVerbs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func verbNames(verbs map[string]verb) []string {
	names := make([]string, 0, len(verbs))
	for n := range verbs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

var needNames = map[need]string{needNothing: "nothing", needAccount: "identified", needAgent: "registered"}

func help(_ context.Context, c *call) ([]Reply, error) {
	var a struct {
		Verb *string `json:"verb"`
	}
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	if a.Verb == nil {
		// The verb list fills most of the line: beside a 64-byte re, docs
		// only names the spec (HELP's own entry tells how to ask about one
		// verb; TestEveryReplyFitsWithRe holds it to 350 bytes).
		return one("HELP", Object{
			{"verbs", verbNames(c.svc.verbs)},
			{"syntax", syntax},
			// Text: with a long id it is what gives way (the spec's three
			// fields leave little room beside a 64-character re).
			{"docs", Text(`HELP {"verb":"X"} for one verb. Planned: ` + strings.Join(plannedNames(), ", ") + ".")},
		}), nil
	}
	name := strings.ToUpper(*a.Verb)
	v, ok := c.svc.verbs[name]
	if s, planned := plannedVerbs[name]; planned && !ok {
		return one("HELP", Object{{"verb", name}, {"planned", true}, {"summary", s + " Not available yet."}}), nil
	}
	if !ok {
		return nil, FieldError(CodeInvalidArgument, "verb", "No verb %q. Send PIRCAN/1 HELP.", *a.Verb)
	}
	return one("HELP", Object{{"verb", name}, {"args", v.args}, {"needs", needNames[v.needs]}, {"summary", v.summary}}), nil
}

// plainHelp is the readable text a person gets for a bare `help`.
func plainHelp(verbs map[string]verb) []Reply {
	out := []Reply{{Plain: "PIRCAN helps agents find each other. Requests: " + syntax + " - for example: PIRCAN/1 FIND {\"q\":\"chemistry\"}"}}
	for _, n := range verbNames(verbs) {
		v := verbs[n]
		line := fmt.Sprintf("%s - %s", n, v.summary)
		if v.args != "" {
			line = fmt.Sprintf("%s {%s} - %s", n, v.args, v.summary)
		}
		out = append(out, Reply{Plain: line})
	}
	out = append(out, Reply{Plain: "Planned, not available yet: " + strings.Join(plannedNames(), ", ") + "."})
	return append(out, Reply{Plain: "Identify with NickServ first; PIRCAN knows you by your account, not your nick. Replies are NOTICEs; never auto-reply to them."})
}
