package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// listenNotify LISTENs on pircan_notify on a connection of its own and
// returns the next payload each call (the test fails after 10 s).
func listenNotify(t *testing.T, h *hs) func() string {
	t.Helper()
	pc, err := h.s.Pool().Acquire(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn := pc.Hijack()
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(h.ctx, "LISTEN pircan_notify"); err != nil {
		t.Fatal(err)
	}
	return func() string {
		t.Helper()
		ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
		defer cancel()
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			t.Fatalf("no NOTIFY on pircan_notify: %v", err)
		}
		return n.Payload
	}
}

// An agent's first notification since its last delivery wakes the IRC
// process (NOTIFY); the next ones do not (schema 00071: a NOTIFY serialises
// the commits), until a delivery claims them.
func TestNotifyWakesOncePerDelivery(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b := h.agent("alice"), h.agent("bob")
	next := listenNotify(t, h)
	notify := func(agent pircan.Agent) {
		t.Helper()
		if err := h.s.NotifyAgent(h.ctx, agent.ID, pircan.NotifyContactUpdate); err != nil {
			t.Fatal(err)
		}
	}
	notify(a)
	if got := next(); got != a.ID {
		t.Fatalf("first notification woke %q, want alice %s", got, a.ID)
	}
	notify(a) // silent: alice is woken already
	notify(b)
	// NOTIFYs arrive in commit order: had alice's second one notified, it
	// would come before bob's.
	if got := next(); got != b.ID {
		t.Fatalf("after alice's second notification the next wake is %q, want bob %s", got, b.ID)
	}
	ns, err := h.s.ClaimNotices(h.ctx, a.ID)
	if err != nil || len(ns) != 1 || ns[0].Type != pircan.NotifyContactUpdate {
		t.Fatalf("claim: %+v %v", ns, err)
	}
	if n := h.count("SELECT count(*) FROM notifications WHERE agent_id = $1 AND delivered_at IS NULL", a.ID); n != 0 {
		t.Fatalf("%d of alice's notifications still waiting after the claim", n)
	}
	notify(a) // delivered since: wakes again
	if got := next(); got != a.ID {
		t.Fatalf("the notification after a delivery woke %q, want alice %s", got, a.ID)
	}
}

// A notification written while the agent is woken sends no NOTIFY, so the
// delivery that follows must see it: the claim waits for its transaction
// (the wake row's lock) and then takes it, whichever commits first.
func TestClaimWaitsForSilentNotification(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a := h.agent("alice")
	if err := h.s.NotifyAgent(h.ctx, a.ID, pircan.NotifyMessage); err != nil { // wakes
		t.Fatal(err)
	}
	tx, err := h.s.Pool().Begin(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(h.ctx, "INSERT INTO notifications (agent_id, type) VALUES ($1, $2)", a.ID, pircan.NotifyContactUpdate); err != nil {
		t.Fatal(err)
	}
	type claim struct {
		ns  []pircan.Notification
		err error
	}
	done := make(chan claim, 1)
	go func() {
		ns, err := h.s.ClaimNotices(h.ctx, a.ID)
		done <- claim{ns, err}
	}()
	// The claim waits for the open transaction: its delete of the wake row
	// is blocked on the row lock the silent writer holds.
	deadline := time.Now().Add(10 * time.Second)
	for h.count(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
		AND wait_event_type = 'Lock' AND query LIKE '%notify_wakes%'`) == 0 {
		select {
		case c := <-done:
			t.Fatalf("the claim did not wait for the open notification: %+v %v", c.ns, c.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the claim is not waiting on the wake row after 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := tx.Commit(h.ctx); err != nil {
		t.Fatal(err)
	}
	c := <-done
	if c.err != nil {
		t.Fatal(c.err)
	}
	if got := noticeMap(c.ns); len(got) != 2 || got[pircan.NotifyContactUpdate] != -1 {
		t.Fatalf("claim %+v: want the message and the contact_update written meanwhile", c.ns)
	}
	if n := h.count("SELECT count(*) FROM notifications WHERE agent_id = $1 AND delivered_at IS NULL", a.ID); n != 0 {
		t.Fatalf("%d notifications left waiting with no wake", n)
	}
}

// A SEND is two round trips (BEGIN with the agreement's lock and a reply's
// parent, then the insert with COMMIT), a plain message or a reply; a
// refusal for a spent budget writes nothing. One connection, each
// statement prepared on it first, so only the trips of the sends count.
func TestSendRoundTrips(t *testing.T) {
	s, err := store.Open(context.Background(), pgtest.Database(t)+"&pool_max_conns=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := &hs{t: t, s: s, ctx: context.Background()}
	a, b := h.agent("alice"), h.agent("bob")
	h.agree(a, b)
	first := h.mustSend(a, b, "prepares", "")
	h.mustSend(b, a, "prepares", first.MessageID)
	for _, reply := range []bool{false, true} {
		to := ""
		if reply {
			to = first.MessageID
		}
		t0 := s.RoundTrips()
		h.mustSend(b, a, "counted", to)
		if n := s.RoundTrips() - t0; n != 2 {
			t.Errorf("a SEND (reply %v) took %d round trips, want 2", reply, n)
		}
	}
	rule := pircan.SendRule{Limits: pircan.DefaultLimits}
	rule.Limits.MessagesHour = 3 // alice has sent 1, bob 3
	before := h.count("SELECT count(*) FROM messages")
	var pe *pircan.Error
	if _, err := s.Send(h.ctx, act(b), pircan.NewMessage{To: a.ID, Text: "over"}, rule); !errors.As(err, &pe) || pe.Code != pircan.CodeRateLimited {
		t.Fatalf("bob's fourth message within the hour: %v, want rate_limited", err)
	}
	if n := h.count("SELECT count(*) FROM messages"); n != before {
		t.Fatalf("a refused SEND stored %d messages", n-before)
	}
}
