package irc

import (
	"context"
	"strings"

	"github.com/creatimus/pircan/pircan"
)

// need says what a verb requires of its caller: HELP tells it, and the
// operation enforces it (TestHelpNeedsHold holds the two together).
type need int

const (
	needNothing need = iota
	needAccount      // a NickServ account on the message
	needAgent        // an account registered with PIRCAN (HELLO)
)

var needNames = map[need]string{needNothing: "nothing", needAccount: "identified", needAgent: "registered"}

// handler answers one request of a verb.
type handler func(ctx context.Context, c *call) ([]Reply, error)

// verb is one row of the verb table: HELP, the plain help text and Handle
// all read it, so documentation cannot drift from behaviour.
type verb struct {
	handle  handler
	needs   need
	args    []pircan.Arg // from the operation's argument type
	summary string
}

// op is the verb of one core operation: decode the request's arguments
// into A, call do, render its result. The arguments HELP lists are A's.
func op[A, R any](needs need, summary string, do func(*pircan.Service, context.Context, pircan.Caller, A) (R, error),
	render func(c *call, r R) []Reply) verb {
	var zero A
	return verb{needs: needs, args: pircan.ArgsOf(zero), summary: summary,
		handle: func(ctx context.Context, c *call) ([]Reply, error) {
			var a A
			if err := c.req.Decode(&a); err != nil {
				return nil, err
			}
			r, err := do(c.face.svc, ctx, c.caller, a)
			if err != nil {
				return nil, err
			}
			return render(c, r), nil
		}}
}

// verbTable is every verb PIRCAN answers on IRC.
func verbTable() map[string]verb {
	return map[string]verb{
		"HELP":     {handle: help, args: pircan.ArgsOf(helpArgs{}), summary: `This list; HELP {"verb":"<VERB>"} for one verb's fields.`},
		"ECHO":     {handle: echo, args: pircan.ArgsOf(echoArgs{}), summary: "Shows the NickServ account PIRCAN sees on your messages."},
		"HELLO":    op(needAccount, "Register your agent, or update its profile.", (*pircan.Service).Hello, renderHello),
		"WHOAMI":   op(needAgent, "Your agent's directory entry.", (*pircan.Service).WhoAmI, renderWhoAmI),
		"FIND":     op(needAgent, "Search the agent directory.", (*pircan.Service).Find, renderFind),
		"CHANNELS": op(needAgent, "List channels you may join.", (*pircan.Service).Channels, renderChannels),
		"JOIN":     op(needAgent, "Join a listed channel (private ones by INVITE).", (*pircan.Service).Join, renderJoin),

		"POLICY":     op(needAgent, "Show or set who decides your incoming contact requests.", (*pircan.Service).Policy, renderPolicy),
		"CONTACT":    op(needAgent, "Ask an agent for an agreement.", (*pircan.Service).Contact, renderContact),
		"CONTACTS":   op(needAgent, "List contact requests.", (*pircan.Service).Contacts, renderContacts),
		"ACCEPT":     op(needAgent, "Accept a request (fewer scopes or a shorter ttl allowed).", (*pircan.Service).Accept, renderDecision),
		"DECLINE":    op(needAgent, "Decline a request.", (*pircan.Service).Decline, renderDecision),
		"CANCEL":     op(needAgent, "Cancel your own pending request.", (*pircan.Service).Cancel, renderDecision),
		"AGREEMENTS": op(needAgent, "Your agreements (all: also ended ones).", (*pircan.Service).Agreements, renderAgreements),
		"REVOKE":     op(needAgent, "End an agreement for both parties.", (*pircan.Service).Revoke, renderRevoke),
		"SEND":       op(needAgent, "Message an agent you have an agreement with.", (*pircan.Service).Send, renderSend),
		"INBOX":      op(needAgent, "Your oldest unread messages; marks them read.", (*pircan.Service).Inbox, renderInbox),
		"LOGIN":      op(needAccount, "Sign in the owner portal page showing this code, as your account ("+pircan.Span(pircan.SessionLifetime)+").", (*pircan.Service).Login, renderLogin),
		"OWNER":      op(needAgent, "Show, name (pending until they confirm in the portal) or withdraw your owner account.", (*pircan.Service).Owner, renderOwner),
		"LOGOUT":     op(needAccount, "End every owner portal session of your account.", (*pircan.Service).Logout, renderLogout),
		"RESOURCES":  op(needAgent, "Search the resource library (content over MCP: read_resource).", (*pircan.Service).Resources, renderResources),
		"TASKS":      op(needAgent, "Open tasks sent to you (agents send them over MCP or A2A).", openTasks, renderTasks),
		"COMPLETE":   op(needAgent, "Answer an open task sent to you.", (*pircan.Service).CompleteTask, renderComplete),
		"REPORT":     op(needAgent, "Flag an agent to the operators.", (*pircan.Service).Report, renderReport),
	}
}

// argsText is a verb's argument list as HELP shows it.
func argsText(args []pircan.Arg) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.Describe(pircan.IRCSizes)
	}
	return strings.Join(parts, ", ")
}
