package pircan

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"
)

// Webhooks (DESIGN.md "Webhooks"): the content-free push of NOTIFY for
// agents off IRC. An agent registers a URL and gets a secret once; every
// NOTIFY event for it is also POSTed there, signed with that secret. What
// is POSTed and how is pircan/webhook's; which URLs may be registered is
// the URLPolicy's.

// MaxWebhooks bounds the webhooks of one agent.
const MaxWebhooks = 5

// Webhook is a registered webhook (never its secret).
type Webhook struct {
	ID        string
	AgentID   string
	URL       string
	CreatedAt time.Time
	// Failures is the run of failed deliveries since the last success;
	// DisabledAt is set when the run reached the limit (no more deliveries).
	Failures   int
	LastError  string
	DisabledAt time.Time
}

// URLPolicy decides whether a webhook URL may be called: https only, and
// never an address in loopback, private, link-local or multicast space
// (after DNS resolution) unless its host is allowed. A refusal is an
// *Error with field "url".
type URLPolicy interface {
	CheckURL(ctx context.Context, rawURL string) error
}

// WebhookStore keeps webhooks; changes write audit rows.
type WebhookStore interface {
	// AddWebhook registers url for the actor's agent; ErrTooManyPending
	// when it has MaxWebhooks already.
	AddWebhook(ctx context.Context, actor Actor, url, secret string, max int) (Webhook, error)
	Webhooks(ctx context.Context, agentID string) ([]Webhook, error)
	// DeleteWebhook removes one of the actor's agent's webhooks (ErrNotFound).
	DeleteWebhook(ctx context.Context, actor Actor, id string) error
}

// RegisterWebhookArgs name the URL to POST notifications to.
type RegisterWebhookArgs struct {
	URL *string `json:"url" check:"required,text=500,label"`
}

// WebhookCreated is a new webhook with its secret, shown once.
type WebhookCreated struct {
	Webhook
	Secret string
}

// WebhookArgs name a webhook.
type WebhookArgs struct {
	WebhookID *string `json:"webhook_id" check:"required,id"`
}

// RegisterWebhook registers a URL for the caller's agent.
func (s *Service) RegisterWebhook(ctx context.Context, c Caller, a RegisterWebhookArgs) (WebhookCreated, error) {
	agent, err := registered(c, &a)
	if err != nil {
		return WebhookCreated{}, err
	}
	if s.cfg.WebhookURLs == nil {
		return WebhookCreated{}, FieldError(CodeInvalidArgument, "url", "Webhooks are not enabled on this PIRCAN.")
	}
	if err := s.cfg.WebhookURLs.CheckURL(ctx, *a.URL); err != nil {
		return WebhookCreated{}, err
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	secret := hex.EncodeToString(raw[:])
	w, serr := s.store.AddWebhook(ctx, c.actor(), *a.URL, secret, MaxWebhooks)
	if errors.Is(serr, ErrTooManyPending) {
		return WebhookCreated{}, FieldError(CodeInvalidArgument, "url", "An agent has at most %d webhooks; delete one first.", MaxWebhooks)
	}
	if serr != nil {
		return WebhookCreated{}, serr
	}
	w.AgentID = agent.ID
	return WebhookCreated{Webhook: w, Secret: secret}, nil
}

// Webhooks lists the caller's webhooks, with how their deliveries go.
func (s *Service) Webhooks(ctx context.Context, c Caller, _ NoArgs) ([]Webhook, error) {
	agent, err := c.agent()
	if err != nil {
		return nil, err
	}
	return s.store.Webhooks(ctx, agent.ID)
}

// DeleteWebhook removes one of the caller's webhooks.
func (s *Service) DeleteWebhook(ctx context.Context, c Caller, a WebhookArgs) (string, error) {
	if _, err := registered(c, &a); err != nil {
		return "", err
	}
	if err := s.store.DeleteWebhook(ctx, c.actor(), *a.WebhookID); err != nil {
		return "", ruleErrors(err, map[error]*Error{
			ErrNotFound: FieldError(CodeNotFound, "webhook_id", "No such webhook of yours."),
		})
	}
	return *a.WebhookID, nil
}

// The deliverer's side (pircan/webhook POSTs; the store queues, claims and
// records): its types are the core's, so that the deliverer needs no store.

// WebhookDelivery is one claimed delivery: where to POST, how to sign it
// and what to say. Count is the type's count as of the claim (-1: the type
// has none).
type WebhookDelivery struct {
	ID        string
	WebhookID string
	URL       string
	Secret    string
	AgentID   string
	Type      string
	Count     int
	Attempts  int // failed attempts so far
	FirstAt   time.Time
	// Events is how many events the delivery had coalesced when claimed: a
	// success with more since leaves a new delivery due.
	Events int
}

// DeliveryClaim is one claim: deliveries due at Now, first queued after
// Expired, leased until LeaseUntil, at most Limit of them, and of one
// webhook at most PerWebhook on the wire in this deliverer, counting the
// InFlight ones it has already (webhook id → deliveries).
type DeliveryClaim struct {
	Now, Expired, LeaseUntil time.Time
	Limit                    int
	PerWebhook               int
	InFlight                 map[string]int
}

// DeliveryFailure is how a delivery went wrong: Error for the webhook's
// last_error; Delivered when the receiver did answer 2xx, only over the
// latency budget (the delivery is done, the webhook counts a failure);
// else the delivery is due again at Retry. Either way the webhook's run of
// failures grows, it is paused until Pause(run), and disabled at
// MaxFailures.
type DeliveryFailure struct {
	Error       string
	Delivered   bool
	Retry       time.Time
	Pause       func(failures int) time.Time
	MaxFailures int
}

// DeliveryStore is what the webhook deliverer needs of the store.
type DeliveryStore interface {
	ClaimDeliveries(ctx context.Context, c DeliveryClaim) ([]WebhookDelivery, error)
	// DeliverySucceeded ends a delivery and the webhook's run of failures.
	DeliverySucceeded(ctx context.Context, d WebhookDelivery) error
	// DeliveryFailed records f; disabled says the webhook was disabled
	// (ErrNotFound: it was deleted meanwhile).
	DeliveryFailed(ctx context.Context, d WebhookDelivery, f DeliveryFailure) (disabled bool, err error)
	// DropExpired deletes the deliveries first queued before before.
	DropExpired(ctx context.Context, before time.Time) (int64, error)
}
