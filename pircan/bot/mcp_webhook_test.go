package bot_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/pircan"
)

// hookPost is one POST a webhook receiver got.
type hookPost struct {
	body      []byte
	signature string
	delivery  string
}

// An MCP agent's webhook, on a local receiver, hears of an IRC agent's
// message: content-free, signed with the secret register_webhook gave.
func TestMCPWebhookDelivery(t *testing.T) {
	t.Parallel()
	posts := make(chan hookPost, 64) // never fills: a handful of events
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method == http.MethodPost && r.URL.Path == "/hook" {
			posts <- hookPost{body: body, signature: r.Header.Get("X-PIRCAN-Signature"), delivery: r.Header.Get("X-PIRCAN-Delivery")}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(recv.Close)
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0", WebhookAllowHosts: []string{"127.0.0.1"}})
	a := bot.Agents(t, "wh", 1)[0]
	a.Hello(`{"name":"` + a.Nick() + `"}`)
	m := newMCPAgent(t, bot, "mcpwh")
	hookURL := recv.URL + "/hook"

	out := m.run(t,
		call("register", args{"name": "Hooked agent"}),
		call("policy", args{"policy": "auto-accept"}),
		call("register_webhook", args{"url": hookURL}),
		call("list_webhooks", nil),
	)
	mID, _ := result(t, "register", out[0])["agent_id"].(string)
	created := result(t, "register_webhook", out[2])
	hasKeys(t, "register_webhook", created, "webhook_id", "secret")
	secret, _ := created["secret"].(string)
	hooks := listItems(t, "list_webhooks", result(t, "list_webhooks", out[3]), 1)
	hasKeys(t, "webhook", hooks[0], "webhook_id", "url", "created_at", "failures")
	if hooks[0]["webhook_id"] != created["webhook_id"] || hooks[0]["url"] != hookURL || hooks[0]["failures"] != float64(0) || secret == "" {
		t.Fatalf("list_webhooks: %s", out[3].Line)
	}

	const text = "Confidential findings for the hook"
	if r := a.Ask(`PIRCAN/1 CONTACT {"to":"` + mID + `","purpose":"Private purpose"}`); r.Str("status") != "accepted" {
		t.Fatalf("CONTACT: %s", r.Raw)
	}
	if r := a.Ask(`PIRCAN/1 SEND {"to":"` + mID + `","text":"` + text + `"}`); r.Verb != "SEND" {
		t.Fatalf("SEND: %s", r.Raw)
	}

	// Other types may come first (the agreement); each is checked, and the
	// message's must come within the deadline.
	deadline := time.After(20 * time.Second)
	for {
		var p hookPost
		select {
		case p = <-posts:
		case <-deadline:
			t.Fatal("no webhook POST of type message within 20 s")
		}
		if !hmac.Equal([]byte(p.signature), []byte(signature(secret, p.body))) {
			t.Fatalf("X-PIRCAN-Signature %q does not sign %s", p.signature, p.body)
		}
		if !pircan.ValidID(p.delivery) {
			t.Fatalf("X-PIRCAN-Delivery %q", p.delivery)
		}
		for _, leak := range []string{"Confidential", "Private purpose", a.Nick(), "Hooked agent", m.Account} {
			if strings.Contains(string(p.body), leak) {
				t.Fatalf("webhook body carries %q: %s", leak, p.body)
			}
		}
		var body map[string]any
		must(t, json.Unmarshal(p.body, &body))
		if body["agent_id"] != mID {
			t.Fatalf("webhook body for another agent: %s", p.body)
		}
		if body["type"] != "message" {
			continue
		}
		hasKeys(t, "message webhook", body, "type", "unread", "agent_id", "at")
		at, err := time.Parse(time.RFC3339, body["at"].(string))
		if body["unread"] != float64(1) || err != nil || time.Since(at) > time.Minute {
			t.Fatalf("message webhook: %s", p.body)
		}
		return
	}
}

// signature is X-PIRCAN-Signature as DESIGN.md defines it, computed here
// rather than by the code under test: sha256=<hex HMAC-SHA256 of the raw
// body, keyed with the secret string's bytes>.
func signature(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}
