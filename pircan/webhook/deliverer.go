package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/backoff"
	"github.com/creatimus/pircan/pircan"
)

// The deliveries' bounds.
const (
	// Lifetime: a delivery not made within it after its first event is dropped.
	Lifetime = 24 * time.Hour
	// PostTimeout bounds one POST, connecting included.
	PostTimeout = 10 * time.Second
	// LatencyBudget is how long a receiver may take to answer: a 2xx after
	// it is a delivery made, but the webhook counts a failure and is paused
	// as after one, so a receiver that answers just under PostTimeout cannot
	// hold workers by the second without ever being backed off.
	LatencyBudget = 3 * time.Second
	// Lease is how long a claimed delivery is kept from other deliverers:
	// longer than a POST, so it is never POSTed twice at once.
	Lease = 2 * time.Minute
	// MaxFailures is the run of failed attempts that disables a webhook.
	MaxFailures = 10
	// Workers is how many POSTs one deliverer has on the wire at most.
	Workers = 32
	// PerWebhook is how many of those may be to one webhook: one agent's
	// five slow webhooks hold at most ten, and never the rest.
	PerWebhook = 2
	// Tick is how often a deliverer looks for due retries unwoken.
	Tick = 15 * time.Second
	// maxResponse is how much of a receiver's answer is read (and ignored).
	maxResponse = 4 << 10
)

// Retry is the wait after a delivery's failed attempts, and a webhook's
// pause after a failure in its run: 30 s doubling to an hour, with full
// jitter (internal/backoff), so that webhooks failing together do not
// come back together.
var Retry = backoff.Policy{Min: 30 * time.Second, Max: time.Hour}

// Backoff is Retry's wait after failed failures in a row (1 for the first).
func Backoff(failed int) time.Duration { return Retry.Delay(failed - 1) }

// Deliverer POSTs queued deliveries. Every process runs one: the store's
// claims keep any number of them from POSTing one delivery twice.
type Deliverer struct {
	store  pircan.DeliveryStore
	policy *Policy
	log    zerolog.Logger
	client *http.Client
	wake   chan struct{}
	Now    func() time.Time // the clock (tests)
	// Backoff is the wait after failed failures in a row (tests set it).
	Backoff func(failed int) time.Duration
	// Workers, PerWebhook and LatencyBudget are the package's constants
	// unless a test sets them.
	Workers, PerWebhook int
	LatencyBudget       time.Duration
}

// NewDeliverer delivers st's deliveries to the URLs policy allows.
func NewDeliverer(st pircan.DeliveryStore, policy *Policy, log zerolog.Logger) *Deliverer {
	return &Deliverer{store: st, policy: policy, log: log, client: newClient(policy), wake: make(chan struct{}, 1),
		Now: time.Now, Backoff: Backoff, Workers: Workers, PerWebhook: PerWebhook, LatencyBudget: LatencyBudget}
}

// newClient is an HTTP client that connects only where policy allows, by
// the address it actually connects to (a name that resolved to a public
// address at registration may resolve elsewhere now), follows no redirect
// and uses no proxy (which would connect on our behalf, unchecked).
func newClient(policy *Policy) *http.Client {
	plain := &net.Dialer{Timeout: PostTimeout}
	guarded := &net.Dialer{Timeout: PostTimeout, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !publicAddr(ap.Addr()) {
			return fmt.Errorf("%w: %s", errRefused, address)
		}
		return nil
	}}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if policy.allowed(host) {
			return plain.DialContext(ctx, network, addr)
		}
		addrs, err := policy.publicAddrs(ctx, host)
		if err != nil {
			return nil, err
		}
		var errs []error
		for _, a := range addrs {
			c, err := guarded.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
			if err == nil {
				return c, nil
			}
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}
	return &http.Client{
		Timeout:       PostTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{Proxy: nil, DialContext: dial, MaxIdleConnsPerHost: 2,
			IdleConnTimeout: 30 * time.Second, TLSHandshakeTimeout: PostTimeout, ResponseHeaderTimeout: PostTimeout},
	}
}

// Wake makes Run look for deliveries now (a pircan_webhooks notification).
func (d *Deliverer) Wake() {
	select {
	case d.wake <- struct{}{}:
	default: // a step is due already
	}
}

// Run delivers until ctx ends. It is a pool of Workers POSTs: it claims
// as many due deliveries as it has free workers (at most PerWebhook of one
// webhook on the wire), and claims again as each POST ends, at a Wake and
// every Tick, so a slow receiver holds only its own workers, never a
// batch that everyone else waits on.
func (d *Deliverer) Run(ctx context.Context) {
	tick := time.NewTicker(Tick)
	defer tick.Stop()
	done := make(chan pircan.WebhookDelivery)
	inFlight := map[string]int{}
	busy := 0
	defer func() { // let the POSTs on the wire record how they went
		for ; busy > 0; busy-- {
			<-done
		}
	}()
	drop := func() {
		if err := d.dropExpired(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn().Err(err).Msg("webhook deliveries")
		}
	}
	claim := func() {
		if busy >= d.Workers {
			return
		}
		batch, err := d.claim(ctx, d.Workers-busy, inFlight)
		if err != nil && ctx.Err() == nil {
			d.log.Warn().Err(err).Msg("webhook deliveries")
		}
		for _, dl := range batch {
			inFlight[dl.WebhookID]++
			busy++
			go func() { d.deliver(ctx, dl); done <- dl }()
		}
	}
	drop()
	for {
		claim()
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-tick.C:
			drop()
		case dl := <-done:
			busy--
			if inFlight[dl.WebhookID]--; inFlight[dl.WebhookID] <= 0 {
				delete(inFlight, dl.WebhookID)
			}
		}
	}
}

// RunOnce drops expired deliveries, claims what is due (as many as Run's
// free pool would) and POSTs them, waiting for all; it returns how many it
// claimed. Tests step the deliverer with it.
func (d *Deliverer) RunOnce(ctx context.Context) (int, error) {
	if err := d.dropExpired(ctx); err != nil {
		return 0, err
	}
	batch, err := d.claim(ctx, d.Workers, nil)
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	for _, dl := range batch {
		wg.Add(1)
		go func() { defer wg.Done(); d.deliver(ctx, dl) }()
	}
	wg.Wait()
	return len(batch), nil
}

// dropExpired deletes the deliveries whose time is over.
func (d *Deliverer) dropExpired(ctx context.Context) error {
	dropped, err := d.store.DropExpired(ctx, d.Now().Add(-Lifetime))
	if dropped > 0 {
		d.log.Info().Int64("dropped", dropped).Msg("webhook deliveries expired undelivered")
	}
	return err
}

// claim claims up to n due deliveries, beside the inFlight ones this
// deliverer has on the wire.
func (d *Deliverer) claim(ctx context.Context, n int, inFlight map[string]int) ([]pircan.WebhookDelivery, error) {
	now := d.Now()
	return d.store.ClaimDeliveries(ctx, pircan.DeliveryClaim{Now: now, Expired: now.Add(-Lifetime),
		LeaseUntil: now.Add(Lease), Limit: n, PerWebhook: d.PerWebhook, InFlight: inFlight})
}

// deliver POSTs one delivery and records how it went: a 2xx within the
// latency budget is a success; a 2xx after it is a delivery made that
// the webhook counts as a failure; anything else a failure, retried.
func (d *Deliverer) deliver(ctx context.Context, dl pircan.WebhookDelivery) {
	log := d.log.With().Str("webhook", dl.WebhookID).Str("delivery", dl.ID).Logger()
	start := d.Now()
	perr := d.post(ctx, dl)
	took := d.Now().Sub(start)
	// Recording must not fail because ctx ended mid-POST.
	rctx := context.WithoutCancel(ctx)
	if perr == nil && took <= d.LatencyBudget {
		if err := d.store.DeliverySucceeded(rctx, dl); err != nil {
			log.Warn().Err(err).Msg("recording a webhook delivery")
		}
		return
	}
	now := d.Now()
	f := pircan.DeliveryFailure{Retry: now.Add(d.Backoff(dl.Attempts + 1)), MaxFailures: MaxFailures,
		Pause: func(failures int) time.Time { return now.Add(d.Backoff(failures)) }}
	if perr != nil {
		f.Error = perr.Error()
	} else {
		f.Delivered = true
		f.Error = fmt.Sprintf("answered in %s, over the %s budget", took.Round(time.Millisecond), d.LatencyBudget)
	}
	disabled, err := d.store.DeliveryFailed(rctx, dl, f)
	if err != nil && !errors.Is(err, pircan.ErrNotFound) {
		log.Warn().Err(err).Msg("recording a failed webhook delivery")
	}
	if disabled {
		log.Warn().Str("error", f.Error).Msg("webhook disabled after failing too often")
	} else {
		log.Debug().Str("error", f.Error).Time("next", f.Retry).Msg("webhook delivery failed")
	}
}

// Body is the JSON of one delivery: its type, the count under NOTIFY's key
// (where the type has one), the recipient's own agent id and when. Never a
// name, purpose or text.
func Body(dl pircan.WebhookDelivery, at time.Time) []byte {
	m := map[string]any{"type": dl.Type, "agent_id": dl.AgentID, "at": at.UTC().Format(time.RFC3339)}
	if key, ok := pircan.NotifyCountKey[dl.Type]; ok && dl.Count >= 0 {
		m[key] = dl.Count
	}
	b, _ := json.Marshal(m)
	return b
}

// Sign is the X-PIRCAN-Signature of body under secret.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// post sends one delivery; nil only for a 2xx answer.
func (d *Deliverer) post(ctx context.Context, dl pircan.WebhookDelivery) error {
	ctx, cancel := context.WithTimeout(ctx, PostTimeout)
	defer cancel()
	body := Body(dl, d.Now())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, dl.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if !strings.EqualFold(req.URL.Scheme, "https") && !d.policy.allowed(req.URL.Hostname()) {
		return fmt.Errorf("%w: %s is not https", errRefused, req.URL.Scheme)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "PIRCAN-webhook")
	req.Header.Set("X-PIRCAN-Signature", Sign(dl.Secret, body))
	req.Header.Set("X-PIRCAN-Delivery", dl.ID)
	resp, err := d.client.Do(req)
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err // not the URL again: its path may hold the receiver's token
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("answered %s", resp.Status)
	}
	return nil
}
