package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/webhook"
	"github.com/creatimus/pircan/store"
)

// received is one POST a receiver got.
type received struct {
	header http.Header
	body   []byte
}

// receiver is a webhook endpoint on 127.0.0.1 answering status.
type receiver struct {
	srv    *httptest.Server
	status atomic.Int32
	// during, when set, runs before a request is answered.
	during func()

	mu  sync.Mutex
	got []received
}

func newReceiver(t *testing.T, status int) *receiver {
	r := &receiver{}
	r.status.Store(int32(status))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{header: req.Header.Clone(), body: body})
		during := r.during
		r.during = nil
		r.mu.Unlock()
		if during != nil {
			during()
		}
		w.WriteHeader(int(r.status.Load()))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) posts() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// env is a database, a clock and a deliverer.
type env struct {
	t   *testing.T
	ctx context.Context
	st  *store.Store
	now time.Time
	d   *webhook.Deliverer
}

func newEnv(t *testing.T, p *webhook.Policy) *env {
	t.Helper()
	ctx := t.Context()
	st, err := store.Open(ctx, pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	// The clock runs ahead of the database's now(), which queues deliveries.
	e := &env{t: t, ctx: ctx, st: st, now: time.Now().Add(time.Minute)}
	e.d = e.deliverer(p)
	return e
}

func allowLocal() *webhook.Policy { return &webhook.Policy{AllowHosts: []string{"127.0.0.1"}} }

func (e *env) deliverer(p *webhook.Policy) *webhook.Deliverer {
	d := webhook.NewDeliverer(e.st, p, zerolog.Nop())
	d.Now = func() time.Time { return e.now }
	return d
}

func (e *env) agent(account string) pircan.Agent {
	e.t.Helper()
	a, _, err := e.st.Hello(e.ctx, account, account, pircan.Profile{}, 1000)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

func (e *env) hook(a pircan.Agent, url string) (pircan.Webhook, string) {
	e.t.Helper()
	secret := "s3cret-" + a.ID
	w, err := e.st.AddWebhook(e.ctx, pircan.Actor{Account: a.Name, AgentID: a.ID}, url, secret, pircan.MaxWebhooks)
	if err != nil {
		e.t.Fatal(err)
	}
	return w, secret
}

func (e *env) runOnce() int {
	e.t.Helper()
	n, err := e.d.RunOnce(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) webhook(a pircan.Agent) pircan.Webhook {
	e.t.Helper()
	ws, err := e.st.Webhooks(e.ctx, a.ID)
	if err != nil || len(ws) != 1 {
		e.t.Fatalf("webhooks of %s: %v %v", a.ID, ws, err)
	}
	return ws[0]
}

func (e *env) pending() int {
	e.t.Helper()
	var n int
	if err := e.st.Pool().QueryRow(e.ctx, "SELECT count(*) FROM webhook_deliveries").Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) nextAttempt() time.Time {
	e.t.Helper()
	var at time.Time
	if err := e.st.Pool().QueryRow(e.ctx, "SELECT next_attempt_at FROM webhook_deliveries").Scan(&at); err != nil {
		e.t.Fatal(err)
	}
	return at
}

func (e *env) contact(from, to pircan.Agent) {
	e.t.Helper()
	_, err := e.st.Contact(e.ctx, pircan.Actor{Account: from.Name, AgentID: from.ID},
		pircan.NewContact{To: to.ID, Purpose: "secret purpose words", Scopes: []string{pircan.ScopeMessage}, TTLDays: 30},
		pircan.ContactRule{Limits: pircan.DefaultLimits})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) notify(a pircan.Agent, kind string) {
	e.t.Helper()
	if err := e.st.NotifyAgent(e.ctx, a.ID, kind); err != nil {
		e.t.Fatal(err)
	}
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Two contact requests before a delivery: one POST, with the count as of
// its sending, signed with the webhook's secret, and nothing but the
// allowed keys.
func TestWebhookDeliverySignedCoalescedContentFree(t *testing.T) {
	e := newEnv(t, allowLocal())
	r := newReceiver(t, http.StatusNoContent)
	target, alice, bob := e.agent("target"), e.agent("alice"), e.agent("bob")
	_, secret := e.hook(target, r.srv.URL+"/hook?token=abc")
	e.contact(alice, target)
	e.contact(bob, target)
	if n := e.runOnce(); n != 1 {
		t.Fatalf("claimed %d deliveries, want 1 (coalesced)", n)
	}
	posts := r.posts()
	if len(posts) != 1 {
		t.Fatalf("%d POSTs, want 1", len(posts))
	}
	p := posts[0]
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(p.body)
	if got, want := p.header.Get("X-PIRCAN-Signature"), "sha256="+hex.EncodeToString(mac.Sum(nil)); got != want {
		t.Errorf("signature %q, want %q", got, want)
	}
	if ct := p.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if id := p.header.Get("X-PIRCAN-Delivery"); !uuidRE.MatchString(id) {
		t.Errorf("X-PIRCAN-Delivery %q is not a uuid", id)
	}
	var body map[string]any
	if err := json.Unmarshal(p.body, &body); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range body {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "agent_id,at,pending,type" {
		t.Errorf("body keys %v, want exactly agent_id, at, pending, type: %s", keys, p.body)
	}
	if body["type"] != pircan.NotifyContactRequest || body["pending"] != float64(2) || body["agent_id"] != target.ID {
		t.Errorf("body %s", p.body)
	}
	if at, err := time.Parse(time.RFC3339, body["at"].(string)); err != nil || !at.Equal(e.now.Truncate(time.Second)) {
		t.Errorf("at %v (%v), want the clock's %v", body["at"], err, e.now)
	}
	for _, word := range []string{"secret purpose", "alice", "bob", alice.ID, bob.ID} {
		if strings.Contains(string(p.body), word) {
			t.Errorf("body names %q: %s", word, p.body)
		}
	}
	if e.runOnce() != 0 || len(r.posts()) != 1 || e.pending() != 0 {
		t.Errorf("a delivered notification is POSTed again")
	}
	// Only agents with a webhook get deliveries: alice and bob have none.
	e.notify(alice, pircan.NotifyMessage)
	if e.pending() != 0 {
		t.Errorf("a delivery queued for an agent without webhooks")
	}
}

// An event that comes in while its type's delivery is on the wire is not
// lost: a new delivery follows with the count as of then.
func TestWebhookEventDuringDeliveryFollows(t *testing.T) {
	e := newEnv(t, allowLocal())
	r := newReceiver(t, http.StatusOK)
	target, alice, bob := e.agent("target"), e.agent("alice"), e.agent("bob")
	e.hook(target, r.srv.URL)
	e.contact(alice, target)
	r.during = func() { e.contact(bob, target) }
	e.runOnce()
	if e.pending() != 1 {
		t.Fatalf("after a POST during which an event came: %d pending, want 1", e.pending())
	}
	e.runOnce()
	posts := r.posts()
	if len(posts) != 2 {
		t.Fatalf("%d POSTs, want 2", len(posts))
	}
	if posts[0].header.Get("X-PIRCAN-Delivery") == posts[1].header.Get("X-PIRCAN-Delivery") {
		t.Errorf("the follow-up delivery reuses the delivery id")
	}
	if !strings.Contains(string(posts[1].body), `"pending":2`) {
		t.Errorf("follow-up body %s, want pending 2", posts[1].body)
	}
}

// A failing receiver is retried later and later; a success ends the run
// of failures.
func TestWebhookRetryBackoffThenSuccess(t *testing.T) {
	e := newEnv(t, allowLocal())
	e.d.Backoff = func(failed int) time.Duration { return time.Duration(failed) * time.Minute }
	r := newReceiver(t, http.StatusInternalServerError)
	target := e.agent("target")
	e.hook(target, r.srv.URL)
	e.notify(target, pircan.NotifyMessage)
	e.runOnce()
	w := e.webhook(target)
	if w.Failures != 1 || !strings.Contains(w.LastError, "500") || !w.DisabledAt.IsZero() {
		t.Fatalf("after one failure: %+v", w)
	}
	first := e.nextAttempt().Sub(e.now).Round(time.Millisecond) // the database keeps microseconds
	if first != e.d.Backoff(1) {
		t.Errorf("first retry in %s, want %s", first, e.d.Backoff(1))
	}
	if e.runOnce() != 0 {
		t.Errorf("retried before its time")
	}
	e.now = e.now.Add(first)
	e.runOnce()
	second := e.nextAttempt().Sub(e.now).Round(time.Millisecond)
	if len(r.posts()) != 2 || second <= first || e.webhook(target).Failures != 2 {
		t.Fatalf("second attempt: %d POSTs, next in %s (first %s), %+v", len(r.posts()), second, first, e.webhook(target))
	}
	r.status.Store(http.StatusOK)
	e.now = e.now.Add(second)
	e.runOnce()
	if w := e.webhook(target); len(r.posts()) != 3 || w.Failures != 0 || e.pending() != 0 {
		t.Fatalf("after a success: %d POSTs, %+v, %d pending", len(r.posts()), w, e.pending())
	}
}

// A run of MaxFailures disables the webhook: nothing more is queued or POSTed.
func TestWebhookDisabledAfterFailures(t *testing.T) {
	e := newEnv(t, allowLocal())
	e.d.Backoff = func(int) time.Duration { return time.Second }
	r := newReceiver(t, http.StatusBadGateway)
	target := e.agent("target")
	e.hook(target, r.srv.URL)
	e.notify(target, pircan.NotifyMessage)
	for i := 0; i < webhook.MaxFailures+3; i++ {
		e.runOnce()
		e.now = e.now.Add(time.Second)
	}
	w := e.webhook(target)
	if len(r.posts()) != webhook.MaxFailures || w.DisabledAt.IsZero() || w.Failures != webhook.MaxFailures || !strings.Contains(w.LastError, "502") {
		t.Fatalf("%d POSTs, %+v", len(r.posts()), w)
	}
	if e.pending() != 0 {
		t.Errorf("%d deliveries left for a disabled webhook", e.pending())
	}
	e.notify(target, pircan.NotifyContactUpdate)
	e.runOnce()
	if len(r.posts()) != webhook.MaxFailures || e.pending() != 0 {
		t.Errorf("a disabled webhook got a delivery")
	}
}

// A delivery not made within 24 hours is dropped.
func TestWebhookDroppedAfterLifetime(t *testing.T) {
	e := newEnv(t, allowLocal())
	r := newReceiver(t, http.StatusServiceUnavailable)
	target := e.agent("target")
	e.hook(target, r.srv.URL)
	e.notify(target, pircan.NotifyAgreement)
	e.runOnce()
	e.now = e.now.Add(webhook.Lifetime)
	if e.runOnce() != 0 || len(r.posts()) != 1 || e.pending() != 0 {
		t.Fatalf("after 24 h: %d POSTs, %d pending", len(r.posts()), e.pending())
	}
	if w := e.webhook(target); !w.DisabledAt.IsZero() {
		t.Errorf("an expired delivery disabled the webhook")
	}
}

// A name that resolved to a public address at registration and to
// loopback now is refused at connection time: nothing reaches it.
func TestWebhookRebindingRefusedAtDelivery(t *testing.T) {
	var internal atomic.Bool
	p := &webhook.Policy{LookupHost: func(_ context.Context, host string) ([]netip.Addr, error) {
		if internal.Load() {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	}}
	e := newEnv(t, p)
	r := newReceiver(t, http.StatusOK)
	port := r.srv.URL[strings.LastIndex(r.srv.URL, ":")+1:]
	url := "https://rebind.test:" + port + "/hook"
	if err := p.CheckURL(t.Context(), url); err != nil {
		t.Fatalf("registration: %v", err)
	}
	target := e.agent("target")
	e.hook(target, url)
	internal.Store(true)
	e.notify(target, pircan.NotifyMessage)
	e.runOnce()
	w := e.webhook(target)
	if len(r.posts()) != 0 || w.Failures != 1 || !strings.Contains(w.LastError, "refused") {
		t.Fatalf("%d requests reached loopback; %+v", len(r.posts()), w)
	}
}

// Two deliverers on one database share the work: no delivery is POSTed
// twice, neither while another deliverer's POST of it is on the wire nor
// when both claim at once.
func TestWebhookTwoDeliverersNeverPostTwice(t *testing.T) {
	e := newEnv(t, allowLocal())
	r := newReceiver(t, http.StatusOK)
	const agents = 12
	var all []pircan.Agent
	for i := range agents {
		a := e.agent("agent" + string(rune('a'+i)))
		e.hook(a, r.srv.URL)
		all = append(all, a)
	}
	queue := func() {
		for _, a := range all {
			e.notify(a, pircan.NotifyMessage)
			e.notify(a, pircan.NotifyContactUpdate)
		}
	}
	other := e.deliverer(allowLocal())
	queue()
	var during int
	r.during = func() {
		n, err := other.RunOnce(e.ctx)
		if err != nil {
			t.Error(err)
		}
		during = n
	}
	if n := e.runOnce(); n != 2*agents || during != 0 {
		t.Fatalf("claimed %d, and %d more while they were on the wire; want %d and 0", n, during, 2*agents)
	}
	queue()
	for round := 0; ; round++ {
		var wg sync.WaitGroup
		var claimed atomic.Int64
		for _, d := range []*webhook.Deliverer{e.d, other} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := d.RunOnce(e.ctx)
				if err != nil {
					t.Error(err)
				}
				claimed.Add(int64(n))
			}()
		}
		wg.Wait()
		if claimed.Load() == 0 || round > 5 {
			break
		}
	}
	seen := map[string]int{}
	for _, p := range r.posts() {
		seen[p.header.Get("X-PIRCAN-Delivery")]++
	}
	if len(r.posts()) != 4*agents || len(seen) != 4*agents {
		t.Fatalf("%d POSTs of %d deliveries, want %d of %d", len(r.posts()), len(seen), 4*agents, 4*agents)
	}
}

// Run delivers at a pircan_webhooks wake (as pircan/bot wires it), well
// before its Tick.
func TestWebhookRunWakesOnListen(t *testing.T) {
	e := newEnv(t, allowLocal())
	got := make(chan struct{}, 1)
	r := newReceiver(t, http.StatusOK)
	target := e.agent("target")
	e.hook(target, r.srv.URL)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	listening := make(chan struct{})
	go func() {
		_ = e.st.Listen(ctx, "pircan_webhooks", func() { close(listening) }, func(string) { e.d.Wake() })
	}()
	<-listening
	r.during = func() { got <- struct{}{} }
	done := make(chan struct{})
	go func() { defer close(done); e.d.Run(ctx) }()
	defer func() { cancel(); <-done }()
	e.notify(target, pircan.NotifyMessage)
	select {
	case <-got:
	case <-time.After(webhook.Tick / 2):
		t.Fatal("no POST within half a Tick of the notification")
	}
}
