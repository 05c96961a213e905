package mcp

import "github.com/creatimus/pircan/pircan"

// Results of the webhook tools: register_webhook, list_webhooks,
// delete_webhook (DESIGN.md "Webhooks"; MCP only).

// WebhookCreated is register_webhook's result: the secret, this once.
type WebhookCreated struct {
	WebhookID string `json:"webhook_id"`
	Secret    string `json:"secret"`
}

func renderWebhookCreated(w pircan.WebhookCreated) WebhookCreated {
	return WebhookCreated{WebhookID: w.ID, Secret: w.Secret}
}

// Webhook is one list_webhooks item: failures is the run of failed
// deliveries since the last success; disabled_at when it reached the limit.
type Webhook struct {
	WebhookID  string `json:"webhook_id"`
	URL        string `json:"url"`
	CreatedAt  string `json:"created_at"`
	Failures   int    `json:"failures"`
	LastError  string `json:"last_error,omitempty"`
	DisabledAt string `json:"disabled_at,omitempty"`
}

func renderWebhooks(list []pircan.Webhook) List[Webhook] {
	out := List[Webhook]{Items: make([]Webhook, 0, len(list)), Total: len(list)}
	for _, w := range list {
		out.Items = append(out.Items, Webhook{WebhookID: w.ID, URL: w.URL, CreatedAt: timeText(w.CreatedAt),
			Failures: w.Failures, LastError: w.LastError, DisabledAt: optTime(w.DisabledAt)})
	}
	out.Returned = len(out.Items)
	return out
}

// WebhookDeleted is delete_webhook's result.
type WebhookDeleted struct {
	WebhookID string `json:"webhook_id"`
	Status    string `json:"status"`
}

func renderWebhookDeleted(id string) WebhookDeleted {
	return WebhookDeleted{WebhookID: id, Status: "deleted"}
}
