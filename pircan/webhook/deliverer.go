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

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// The deliveries' bounds.
const (
	// Lifetime: a delivery not made within it after its first event is dropped.
	Lifetime = 24 * time.Hour
	// PostTimeout bounds one POST, connecting included.
	PostTimeout = 10 * time.Second
	// Lease is how long a claimed delivery is kept from other deliverers:
	// longer than a POST, so it is never POSTed twice at once.
	Lease = 2 * time.Minute
	// MaxFailures is the run of failed attempts that disables a webhook.
	MaxFailures = 10
	// Batch is how many deliveries one step claims (and POSTs at once).
	Batch = 32
	// Tick is how often a deliverer looks for due retries unwoken.
	Tick = 15 * time.Second
	// maxResponse is how much of a receiver's answer is read (and ignored).
	maxResponse = 4 << 10
)

// Backoff is the wait after a delivery's failed attempts (1 for the
// first): 30 s, doubling, at most an hour.
func Backoff(failed int) time.Duration {
	d := 30 * time.Second
	for i := 1; i < failed && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}

// Store is what the deliverer needs of the store (*store.Store).
type Store interface {
	ClaimDeliveries(ctx context.Context, c store.Claim) ([]store.Delivery, error)
	DeliverySucceeded(ctx context.Context, d store.Delivery) error
	DeliveryFailed(ctx context.Context, d store.Delivery, lastError string, next time.Time, maxFailures int) (bool, error)
	DropExpired(ctx context.Context, before time.Time) (int64, error)
}

// Deliverer POSTs queued deliveries. Every process runs one: the store's
// claims keep any number of them from POSTing one delivery twice.
type Deliverer struct {
	store   Store
	policy  *Policy
	log     zerolog.Logger
	client  *http.Client
	wake    chan struct{}
	Now     func() time.Time               // the clock (tests)
	Backoff func(failed int) time.Duration // Backoff (tests)
}

// NewDeliverer delivers st's deliveries to the URLs policy allows.
func NewDeliverer(st Store, policy *Policy, log zerolog.Logger) *Deliverer {
	return &Deliverer{store: st, policy: policy, log: log, client: newClient(policy), wake: make(chan struct{}, 1),
		Now: time.Now, Backoff: Backoff}
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

// Run delivers until ctx ends: at each Wake and every Tick (retries).
func (d *Deliverer) Run(ctx context.Context) {
	tick := time.NewTicker(Tick)
	defer tick.Stop()
	for {
		for {
			n, err := d.RunOnce(ctx)
			if err != nil && ctx.Err() == nil {
				d.log.Warn().Err(err).Msg("webhook deliveries")
			}
			if err != nil || n < Batch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-tick.C:
		}
	}
}

// RunOnce drops expired deliveries, claims one batch of due ones and POSTs
// them; it returns how many it claimed.
func (d *Deliverer) RunOnce(ctx context.Context) (int, error) {
	now := d.Now()
	if n, err := d.store.DropExpired(ctx, now.Add(-Lifetime)); err != nil {
		return 0, err
	} else if n > 0 {
		d.log.Info().Int64("dropped", n).Msg("webhook deliveries expired undelivered")
	}
	batch, err := d.store.ClaimDeliveries(ctx, store.Claim{Now: now, Expired: now.Add(-Lifetime),
		LeaseUntil: now.Add(Lease), Limit: Batch})
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

// deliver POSTs one delivery and records how it went.
func (d *Deliverer) deliver(ctx context.Context, dl store.Delivery) {
	log := d.log.With().Str("webhook", dl.WebhookID).Str("delivery", dl.ID).Logger()
	perr := d.post(ctx, dl)
	// Recording must not fail because ctx ended mid-POST.
	rctx := context.WithoutCancel(ctx)
	if perr == nil {
		if err := d.store.DeliverySucceeded(rctx, dl); err != nil {
			log.Warn().Err(err).Msg("recording a webhook delivery")
		}
		return
	}
	next := d.Now().Add(d.Backoff(dl.Attempts + 1))
	disabled, err := d.store.DeliveryFailed(rctx, dl, perr.Error(), next, MaxFailures)
	if err != nil && !errors.Is(err, pircan.ErrNotFound) {
		log.Warn().Err(err).Msg("recording a failed webhook delivery")
	}
	if disabled {
		log.Warn().Err(perr).Msg("webhook disabled after failing too often")
	} else {
		log.Debug().Err(perr).Time("next", next).Msg("webhook delivery failed")
	}
}

// Body is the JSON of one delivery: its type, the count under NOTIFY's key
// (where the type has one), the recipient's own agent id and when. Never a
// name, purpose or text.
func Body(dl store.Delivery, at time.Time) []byte {
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
func (d *Deliverer) post(ctx context.Context, dl store.Delivery) error {
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
