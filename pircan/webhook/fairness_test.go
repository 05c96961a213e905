package webhook_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/webhook"
)

// allTypes are the notification types, each a delivery of its own per
// webhook.
var allTypes = pircan.NotifyTypes

// finishing counts the deliveries to one receiver the deliverer has
// finished (recorded as made or failed), over the real store.
type finishing struct {
	pircan.DeliveryStore
	prefix   string
	finished atomic.Int32
}

func (f *finishing) DeliverySucceeded(ctx context.Context, d pircan.WebhookDelivery) error {
	if strings.HasPrefix(d.URL, f.prefix) {
		f.finished.Add(1)
	}
	return f.DeliveryStore.DeliverySucceeded(ctx, d)
}

func (f *finishing) DeliveryFailed(ctx context.Context, d pircan.WebhookDelivery, fl pircan.DeliveryFailure) (bool, error) {
	if strings.HasPrefix(d.URL, f.prefix) {
		f.finished.Add(1)
	}
	return f.DeliveryStore.DeliveryFailed(ctx, d, fl)
}

// A slow receiver beside a fast one, over real HTTP and the real Run loop:
// one agent's five webhooks hang (their handlers block until the test
// ends) with more deliveries queued first than a deliverer has workers,
// and another agent's deliveries all arrive before the deliverer has
// finished any of the slow ones; no slow webhook ever has more than
// PerWebhook POSTs on the wire.
func TestWebhookSlowReceiverDelaysOnlyItself(t *testing.T) {
	e := newEnv(t, allowLocal())
	release := make(chan struct{})
	var mu sync.Mutex
	onWire, most := map[string]int{}, map[string]int{}
	slowArrived := make(chan struct{}, 100)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		onWire[r.URL.Path]++
		most[r.URL.Path] = max(most[r.URL.Path], onWire[r.URL.Path])
		mu.Unlock()
		slowArrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		mu.Lock()
		onWire[r.URL.Path]--
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) }) // before slow.Close, which waits for its handlers
	rec := &finishing{DeliveryStore: e.st, prefix: slow.URL}
	e.d = webhook.NewDeliverer(rec, allowLocal(), zerolog.Nop())
	fastArrived := make(chan int32, len(allTypes))
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fastArrived <- rec.finished.Load()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(fast.Close)

	slowAgent, fastAgent := e.agent("slowagent"), e.agent("fastagent")
	for i := range pircan.MaxWebhooks {
		e.hook(slowAgent, fmt.Sprintf("%s/hook%d", slow.URL, i))
	}
	e.hook(fastAgent, fast.URL+"/hook")
	for _, typ := range allTypes { // queued first: 40 deliveries, more than Workers
		e.notify(slowAgent, typ)
	}
	if e.pending() <= webhook.Workers {
		t.Fatalf("%d slow deliveries queued, want more than the %d workers", e.pending(), webhook.Workers)
	}
	for _, typ := range allTypes {
		e.notify(fastAgent, typ)
	}

	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { defer close(done); e.d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	for i := range allTypes {
		select {
		case n := <-fastArrived:
			if n != 0 {
				t.Fatalf("fast delivery %d arrived after %d slow deliveries were finished: it waited for them", i+1, n)
			}
		case <-time.After(2 * webhook.PostTimeout):
			t.Fatalf("%d of %d fast deliveries arrived", i, len(allTypes))
		}
	}
	// Each slow webhook has its PerWebhook POSTs on the wire, and no more.
	for range pircan.MaxWebhooks * webhook.PerWebhook {
		<-slowArrived
	}
	mu.Lock()
	defer mu.Unlock()
	for path, n := range most {
		if n > webhook.PerWebhook {
			t.Errorf("%s had %d POSTs on the wire at once, want at most %d", path, n, webhook.PerWebhook)
		}
	}
	if len(most) != pircan.MaxWebhooks {
		t.Errorf("%d of the slow webhooks were POSTed to, want all %d (each has its own workers)", len(most), pircan.MaxWebhooks)
	}
}

// A receiver that answers 2xx, but over the latency budget (by the
// deliverer's clock, which its handler moves on), has had its delivery
// (not POSTed again), yet its webhook counts a failure and is paused as
// after one: nothing of it is claimed until the pause ends; then a quick
// answer ends its run of failures.
func TestWebhookSlowAnswerBacksOff(t *testing.T) {
	e := newEnv(t, allowLocal())
	var clock atomic.Int64
	clock.Store(e.now.UnixNano())
	e.d.Now = func() time.Time { return time.Unix(0, clock.Load()) }
	e.d.Backoff = func(failed int) time.Duration { return time.Duration(failed) * time.Minute }
	r := newReceiver(t, http.StatusOK)
	target := e.agent("target")
	e.hook(target, r.srv.URL)
	e.notify(target, pircan.NotifyMessage)
	r.during = func() { clock.Add(int64(e.d.LatencyBudget + time.Second)) }
	if n := e.runOnce(); n != 1 {
		t.Fatalf("claimed %d, want 1", n)
	}
	w := e.webhook(target)
	if len(r.posts()) != 1 || e.pending() != 0 || w.Failures != 1 || !strings.Contains(w.LastError, "budget") || !w.DisabledAt.IsZero() {
		t.Fatalf("after a slow answer: %d POSTs, %d pending, %+v", len(r.posts()), e.pending(), w)
	}
	e.notify(target, pircan.NotifyContactUpdate)
	if n := e.runOnce(); n != 0 {
		t.Fatalf("claimed %d during the webhook's pause", n)
	}
	clock.Add(int64(time.Minute))
	if n := e.runOnce(); n != 1 || len(r.posts()) != 2 {
		t.Fatalf("after the pause: claimed %d, %d POSTs", n, len(r.posts()))
	}
	if w := e.webhook(target); w.Failures != 0 {
		t.Fatalf("a quick answer after the pause: %+v", w)
	}
}

// A claim passes over the webhooks this deliverer has at their cap, however
// many rows they have queued ahead of everyone else's, and still fills its
// batch from the rest (it ranks a bounded number of the oldest due rows).
func TestWebhookClaimPassesBusyWebhooks(t *testing.T) {
	e := newEnv(t, allowLocal())
	busy := map[string]int{}
	for i := range 4 {
		a := e.agent(fmt.Sprintf("busy%d", i))
		for j := range pircan.MaxWebhooks {
			w, _ := e.hook(a, fmt.Sprintf("http://127.0.0.1:1/busy%d/%d", i, j))
			busy[w.ID] = webhook.PerWebhook
		}
		for _, typ := range allTypes {
			e.notify(a, typ)
		}
	}
	for i := range 8 {
		a := e.agent(fmt.Sprintf("idle%d", i))
		for j := range pircan.MaxWebhooks {
			e.hook(a, fmt.Sprintf("http://127.0.0.1:1/idle%d/%d", i, j))
		}
		e.notify(a, pircan.NotifyMessage)
	}
	got, err := e.st.ClaimDeliveries(e.ctx, pircan.DeliveryClaim{Now: e.now, Expired: e.now.Add(-webhook.Lifetime),
		LeaseUntil: e.now.Add(webhook.Lease), Limit: webhook.Workers, PerWebhook: webhook.PerWebhook, InFlight: busy})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != webhook.Workers {
		t.Fatalf("claimed %d, want a full batch of %d", len(got), webhook.Workers)
	}
	for _, d := range got {
		if _, ok := busy[d.WebhookID]; ok {
			t.Fatalf("claimed a delivery of a webhook at its cap: %s", d.URL)
		}
	}
}
