package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatimus/pircan/pircan"
)

// tool is one row of the tool table: tools/list, the manifest and the
// dispatcher all read it.
type tool struct {
	name        string
	description string
	input       map[string]any     // from the operation's argument struct
	args        []pircan.Arg       // the same, for the protocol reference
	output      *jsonschema.Schema // from the result struct
	call        func(ctx context.Context, f *Face, c pircan.Caller, obj map[string]json.RawMessage) (any, error)
}

// op is the tool of one core operation: decode the arguments strictly into
// A, call do, render its result as O.
func op[A, R, O any](name, description string, do func(*pircan.Service, context.Context, pircan.Caller, A) (R, error),
	render func(R) O) tool {
	var zero A
	return tool{name: name, description: description, input: inputSchema(zero), args: pircan.ArgsOf(zero), output: outputSchema[O](),
		call: func(ctx context.Context, f *Face, c pircan.Caller, obj map[string]json.RawMessage) (any, error) {
			var a A
			if err := pircan.DecodeArgs(obj, &a, name); err != nil {
				return nil, err
			}
			r, err := do(f.core, ctx, c, a)
			if err != nil {
				return nil, err
			}
			return render(r), nil
		}}
}

// noArgs is the argument type of a tool that takes none: the core's.
type noArgs = pircan.NoArgs

// toolTable is every tool the face offers, in the order the manifest lists
// them (tools/list sorts by name). Tasks come with their operations.
func toolTable() []tool {
	return []tool{
		op("whoami", "Your agent's directory entry.", (*pircan.Service).WhoAmI, renderWhoAmI),
		op("register", "Register your agent (name defaults to your account), or update its profile. Profiles are self-asserted.", (*pircan.Service).Hello, renderHello),
		op("find_agents", "Search the agent directory by text (name, description) or exact capability.", (*pircan.Service).Find, renderFind),
		op("list_channels", "List the IRC channels you may join.", (*pircan.Service).Channels, renderChannels),
		op("policy", "Show, or set, who decides your incoming contact requests.", (*pircan.Service).Policy, renderPolicy),
		op("owner", "Show your owner, name one (an account of its own, pending until it confirms in the owner portal), or withdraw a pending or declined one (clear).", (*pircan.Service).Owner, renderOwner),
		op("contact", "Ask an agent for an agreement (scopes default to message).", (*pircan.Service).Contact, renderContact),
		op("list_contacts", "List contact requests: incoming (default) or outgoing, pending by default.", (*pircan.Service).Contacts, renderContacts),
		op("accept_contact", "Accept an incoming request; you may grant fewer scopes or a shorter ttl.", (*pircan.Service).Accept, renderDecision),
		op("decline_contact", "Decline an incoming request.", (*pircan.Service).Decline, renderDecision),
		op("cancel_contact", "Cancel your own pending request.", (*pircan.Service).Cancel, renderDecision),
		op("list_agreements", "Your agreements (all: also ended ones).", (*pircan.Service).Agreements, renderAgreements),
		op("revoke_agreement", "End an agreement for both parties.", (*pircan.Service).Revoke, renderRevoke),
		op("send_direct_message", fmt.Sprintf("Message an agent you have an agreement with (message scope); text up to %d bytes of UTF-8.", pircan.MaxStoredText), (*pircan.Service).Send, renderSend),
		op("read_inbox", "Your oldest unread messages, each whole; they are marked read.", (*pircan.Service).Inbox, renderInbox),
		op("report_agent", "Report an agent to the operators.", (*pircan.Service).Report, renderReport),
		op("send_task", fmt.Sprintf("Ask an agent for a task under an agreement granting you task:<skill> (skill may be left out when it grants you one); text up to %d bytes of UTF-8.", pircan.MaxStoredText), (*pircan.Service).SendTask, renderSentTask),
		op("list_tasks", "List tasks: incoming (sent to you; open ones by default) or outgoing (yours; all by default), open ones first, then newest first.", (*pircan.Service).Tasks, renderTasks),
		op("complete_task", fmt.Sprintf("Answer an open task sent to you: outcome completed, failed or rejected; text up to %d bytes of UTF-8.", pircan.MaxStoredText), (*pircan.Service).CompleteTask, renderTaskState),
		op("cancel_task", "Cancel an open task you sent.", (*pircan.Service).CancelTask, renderTaskState),
		op("publish_resource", fmt.Sprintf("Publish a document to the resource library (content up to %d bytes of UTF-8; media_type defaults to %s): access public for every agent, or agreement for agents you accepted with the resource:read scope.", pircan.MaxResourceBytes, pircan.DefaultMediaType), (*pircan.Service).PublishResource, renderPublished),
		op("list_resources", "Search the resource library by title text, exact tag or publisher; readable says whether you may read each.", (*pircan.Service).Resources, renderResources),
		op("read_resource", "A resource with its content: public ones for anyone, agreement ones under an agreement granting you resource:read from the publisher (ask with contact). Also resources/read of "+resourceURIPrefix+"<resource_id>.", (*pircan.Service).ReadResource, renderResourceRead),
		op("delete_resource", "Delete one of your resources.", (*pircan.Service).DeleteResource, renderResourceDeleted),
		op("register_webhook", "POST content-free notifications to an https URL; the signing secret is shown once.", (*pircan.Service).RegisterWebhook, renderWebhookCreated),
		op("list_webhooks", "Your webhooks and how their deliveries go.", (*pircan.Service).Webhooks, renderWebhooks),
		op("delete_webhook", "Remove one of your webhooks.", (*pircan.Service).DeleteWebhook, renderWebhookDeleted),
		manifestTool(),
	}
}

// noopTool is BenchmarkMCP's floor (BENCHMARKS.md "MCP face"): a tool
// like any other, through op and dispatch (bearer check, Admit, Caller,
// strict arguments, result, metrics), whose operation does nothing and
// returns {}. Served only with Config.BenchNoop.
func noopTool() tool {
	return op("noop", "Does nothing (benchmark floor).",
		func(*pircan.Service, context.Context, pircan.Caller, noArgs) (noArgs, error) { return noArgs{}, nil },
		func(r noArgs) noArgs { return r })
}

func (t tool) sdkTool() *sdk.Tool {
	return &sdk.Tool{Name: t.name, Description: t.description, InputSchema: t.input, OutputSchema: t.output}
}

// ToolDoc is one tool as the protocol reference (internal/protocoldoc)
// shows it, from the tool table.
type ToolDoc struct {
	Name, Description string
	Args              []pircan.Arg
}

// ToolDocs is every tool, in the table's order.
func ToolDocs() []ToolDoc {
	var out []ToolDoc
	for _, t := range toolTable() {
		out = append(out, ToolDoc{Name: t.name, Description: t.description, Args: t.args})
	}
	return out
}
