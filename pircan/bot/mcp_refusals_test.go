package bot_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/mcpclient"
	"github.com/creatimus/pircan/pircan"
)

// mcpTools is every tool the MCP face offers today: tasks come with their
// operations.
var mcpTools = []string{"whoami", "register", "find_agents", "list_channels", "policy", "owner", "contact", "list_contacts",
	"accept_contact", "decline_contact", "cancel_contact", "list_agreements", "revoke_agreement",
	"send_direct_message", "read_inbox", "report_agent", "send_task", "list_tasks", "complete_task", "cancel_task", "publish_resource", "list_resources", "read_resource",
	"delete_resource", "register_webhook", "list_webhooks", "delete_webhook", "get_manifest"}

// Refusals, tokens and webhook URLs over the TypeScript client, on a bot
// whose webhooks may reach no internal host; then the calls' metrics.
func TestMCPRefusals(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0"})
	t.Run("each", func(t *testing.T) {
		t.Run("arguments", func(t *testing.T) { t.Parallel(); testMCPArguments(t, bot) })
		t.Run("tokens", func(t *testing.T) { t.Parallel(); testMCPTokens(t, bot) })
		t.Run("webhook_urls", func(t *testing.T) { t.Parallel(); testMCPWebhookURLs(t, bot) })
	})

	// Every call above is counted by tool and code (register_webhook's
	// only calls are webhook_urls' five refusals).
	resp, err := http.Get(bot.HTTPURL + "/metrics")
	must(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	must(t, err)
	for _, series := range []string{
		`pircan_mcp_calls_total{code="invalid_argument",tool="register_webhook"} 5`,
		`pircan_mcp_calls_total{code="not_registered",tool="contact"} 1`,
		`pircan_mcp_calls_total{code="invalid_argument",tool="register"} 2`,
		`pircan_mcp_call_seconds_count{tool="register"}`,
	} {
		if !strings.Contains(string(body), "\n"+series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
}

func testMCPArguments(t *testing.T, bot *bottest.Bot) {
	m := newMCPAgent(t, bot, "mcparg")
	out := mcpclient.Run(t, m.url, m.Token,
		mcpclient.ListTools(),
		call("contact", args{"to": "00000000-0000-4000-8000-000000000000", "purpose": "before register"}),
		call("register", args{"nmae": "typo"}),
		call("register", args{"name": 5}),
		call("register", nil),
		call("find_agents", args{"limit": "ten"}),
		call("read_inbox", args{"limit": 1.5}),
		call("no_such_tool", nil),
		call("whoami", nil),
	)

	var list struct {
		Tools []struct {
			Name         string         `json:"name"`
			InputSchema  map[string]any `json:"inputSchema"`
			OutputSchema map[string]any `json:"outputSchema"`
		} `json:"tools"`
	}
	must(t, out[0].Decode(&list))
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema["type"] != "object" || tool.OutputSchema["type"] != "object" {
			t.Errorf("tool %s: input schema %v, output schema %v", tool.Name, tool.InputSchema, tool.OutputSchema)
		}
	}
	want := slices.Sorted(slices.Values(mcpTools)) // the go-sdk lists tools by name
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("tools/list: %v, want %v", names, want)
	}

	refused(t, "contact before register", out[1], "not_registered", "")
	refused(t, "unknown argument", out[2], "invalid_argument", "nmae")
	refused(t, "name of the wrong type", out[3], "invalid_argument", "name")
	if h := result(t, "register", out[4]); h["name"] != m.Account {
		t.Errorf("register: %s", out[4].Line)
	}
	refused(t, "limit of the wrong type", out[5], "invalid_argument", "limit")
	refused(t, "limit not a whole number", out[6], "invalid_argument", "limit")
	// An unknown tool is the one call that stays a JSON-RPC error.
	if o := out[7]; o.OK || o.Err == nil || o.Err.Code == 0 || o.Err.HTTPStatus != 0 {
		t.Errorf("unknown tool: want a JSON-RPC error: %s", o.Line)
	}
	if w := result(t, "whoami", out[8]); w["name"] != m.Account {
		t.Errorf("whoami: %s", out[8].Line)
	}
	// Every other step completed: the SDK found each result on its schema.
	for i, o := range out {
		if i != 7 && !o.OK {
			t.Errorf("step %d: %s", i, o.Line)
		}
	}
}

// A token works until revoked; a revoked, expired or unknown one is HTTP
// 401 at connect, before any tool.
func testMCPTokens(t *testing.T, bot *bottest.Bot) {
	core := bot.Core()
	tok, err := core.IssueToken(t.Context(), pircan.OperatorCaller("operator:test"), pircan.IssueTokenArgs{Account: ptr(bottest.Unique("mcptok")), Label: ptr("revoked soon"), ExpiresIn: ptr(time.Hour)})
	must(t, err)
	url := bot.HTTPURL + "/mcp"
	if out := mcpclient.Run(t, url, tok.Secret, mcpclient.ConnectFails(), mcpclient.ListTools()); !out[0].OK || !out[1].OK {
		t.Fatalf("a live token: %s / %s", out[0].Line, out[1].Line)
	}
	_, err = core.RevokeToken(t.Context(), pircan.OperatorCaller("operator:test"), pircan.TokenArgs{TokenID: ptr(tok.ID)})
	must(t, err)
	// A lifetime of 1 ns has ended by the time the token is used: expired
	// without waiting.
	expired, err := core.IssueToken(t.Context(), pircan.OperatorCaller("operator:test"), pircan.IssueTokenArgs{Account: ptr(bottest.Unique("mcpexp")), Label: ptr("expired"), ExpiresIn: ptr(time.Nanosecond)})
	must(t, err)
	for what, secret := range map[string]string{
		"revoked": tok.Secret,
		"expired": expired.Secret,
		"unknown": tok.Secret[:len(tok.Secret)-4] + "AAAA",
		"none":    "",
	} {
		t.Run(what, func(t *testing.T) {
			t.Parallel()
			out := mcpclient.Run(t, url, secret, mcpclient.ConnectFails(), mcpclient.ListTools())
			if o := out[0]; o.OK || o.Err == nil || o.Err.HTTPStatus != http.StatusUnauthorized {
				t.Errorf("%s token: want HTTP 401 at connect: %s", what, o.Line)
			}
		})
	}
}

// Webhook URLs the policy refuses, through the tool: not https, or a
// loopback, private or link-local host (this bot allows none).
func testMCPWebhookURLs(t *testing.T, bot *bottest.Bot) {
	m := newMCPAgent(t, bot, "mcpurl")
	urls := []string{"http://example.com/x", "https://127.0.0.1/x", "https://10.0.0.1/x",
		"https://169.254.169.254/latest", "https://localhost/x"}
	steps := []mcpclient.Step{call("register", nil)}
	for _, u := range urls {
		steps = append(steps, call("register_webhook", args{"url": u}))
	}
	steps = append(steps, call("list_webhooks", nil))
	out := m.run(t, steps...)
	for i, u := range urls {
		refused(t, u, out[1+i], "invalid_argument", "url")
	}
	listItems(t, "list_webhooks", result(t, "list_webhooks", out[len(out)-1]), 0)
}
