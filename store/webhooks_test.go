package store_test

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

func TestWebhookStoreLimitAuditDelete(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := t.Context()
	a, _, err := s.Hello(ctx, "hooked", "hooked", pircan.Profile{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := s.Hello(ctx, "other", "other", pircan.Profile{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	actA := pircan.Actor{Account: "hooked", AgentID: a.ID}
	// Racing registrations cannot pass the limit.
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, full := 0, 0
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.AddWebhook(ctx, actA, "https://hooks.example/in/path-token?key=q", "secret", 5)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, pircan.ErrTooManyPending):
				full++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok != 5 || full != 7 {
		t.Fatalf("%d registered, %d refused; want 5 and 7", ok, full)
	}
	hooks, err := s.Webhooks(ctx, a.ID)
	if err != nil || len(hooks) != 5 || hooks[0].URL != "https://hooks.example/in/path-token?key=q" || hooks[0].AgentID != a.ID {
		t.Fatalf("list: %+v %v", hooks, err)
	}
	// The audit log keeps the host, never the path or query (a token may be there).
	entries, err := s.AuditLatest(ctx, 20)
	if err != nil {
		t.Fatal(err)
	}
	registered := 0
	for _, e := range entries {
		if e.Action == "webhook.registered" {
			registered++
			var d map[string]any
			if err := json.Unmarshal(e.Details, &d); err != nil || len(d) != 1 || d["host"] != "hooks.example" {
				t.Errorf("audit details %s", e.Details)
			}
		}
	}
	if registered != 5 {
		t.Errorf("%d webhook.registered rows, want 5", registered)
	}

	// A notification queues a delivery per webhook in its own transaction:
	// one rolled back queues none.
	count := func() int {
		var n int
		if err := s.Pool().QueryRow(ctx, "SELECT count(*) FROM webhook_deliveries").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO notifications (agent_id, type) VALUES ($1, 'message')", a.ID); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Fatalf("a rolled-back notification queued %d deliveries", n)
	}
	for range 2 {
		if err := s.NotifyAgent(ctx, a.ID, pircan.NotifyMessage); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(); n != 5 {
		t.Fatalf("two notifications for 5 webhooks queued %d deliveries, want 5 (coalesced)", n)
	}

	// Another agent's webhook is not found; the owner's delete takes its deliveries.
	if err := s.DeleteWebhook(ctx, pircan.Actor{Account: "other", AgentID: b.ID}, hooks[0].ID); !errors.Is(err, pircan.ErrNotFound) {
		t.Fatalf("another agent's delete: %v", err)
	}
	if err := s.DeleteWebhook(ctx, actA, hooks[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteWebhook(ctx, actA, hooks[0].ID); !errors.Is(err, pircan.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if n := count(); n != 4 {
		t.Errorf("%d deliveries after a delete, want 4", n)
	}
	entries, _ = s.AuditLatest(ctx, 1)
	if len(entries) != 1 || entries[0].Action != "webhook.deleted" || entries[0].Subject != hooks[0].ID {
		t.Errorf("audit of the delete: %+v", entries)
	}
}
