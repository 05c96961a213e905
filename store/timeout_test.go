package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// lockedStore opens a store with timeouts t on a fresh database, registers
// two agents and holds the first one's agents row FOR UPDATE from a second
// connection in an open transaction, as a concurrent request would. The
// lock is released when the test ends.
func lockedStore(t *testing.T, to store.Timeouts) (s *store.Store, me, other pircan.Agent, count func() [2]int) {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.Database(t)
	s, err := store.OpenTimeouts(ctx, dsn, to)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"alice", "bob"} {
		a, _, err := s.Hello(ctx, name, name, pircan.Profile{}, 30)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			me = a
		} else {
			other = a
		}
	}
	holder, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Close(context.Background()) })
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	var id string
	if err := tx.QueryRow(ctx, "SELECT id FROM agents WHERE id = $1 FOR UPDATE", me.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	count = func() [2]int {
		t.Helper()
		var c [2]int
		for i, q := range []string{"SELECT count(*) FROM contact_requests", "SELECT count(*) FROM audit_log"} {
			if err := s.Pool().QueryRow(ctx, q).Scan(&c[i]); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	return s, me, other, count
}

// contactAsync runs Contact without a deadline of the caller's and returns
// its error, failing the test if it is still blocked after 30 s (far past
// any bound: this only keeps a regression from hanging the suite).
func contactAsync(t *testing.T, s *store.Store, me, other pircan.Agent) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := s.Contact(context.Background(), pircan.Actor{Account: me.Account, AgentID: me.ID},
			pircan.NewContact{To: other.ID, Purpose: "p", Scopes: []string{pircan.ScopeMessage}, TTLDays: 30}, pircan.ContactRule{Limits: pircan.DefaultLimits})
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Contact still blocked behind the row lock after 30 s: the store timeout does not hold")
		return nil
	}
}

// A transaction blocked behind a row lock fails on the server's lock
// timeout, changes nothing, and is no protocol error (so the agent gets
// internal_error with a ref, spec §2); once the lock is gone the same call
// works.
func TestTransactionBehindRowLockTimesOut(t *testing.T) {
	s, me, other, count := lockedStore(t, store.Timeouts{Query: store.QueryTimeout, Lock: store.LockTimeout})
	before := count()
	err := contactAsync(t, s, me, other)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "55P03" || !store.IsTimeout(err) {
		t.Fatalf("Contact behind a row lock: %v, want lock_not_available (55P03)", err)
	}
	var perr *pircan.Error
	if errors.As(err, &perr) {
		t.Fatalf("a timeout must not look like a protocol error: %v", perr)
	}
	if after := count(); after != before {
		t.Fatalf("contact_requests/audit_log rows %v, want unchanged %v", after, before)
	}
}

// With no lock timeout on the server, the transaction's own deadline
// (derived from a caller's context that has none) bounds the statements
// inside it.
func TestTransactionDeadlineBoundsItsStatements(t *testing.T) {
	s, me, other, count := lockedStore(t, store.Timeouts{Query: 300 * time.Millisecond})
	before := count()
	err := contactAsync(t, s, me, other)
	if !errors.Is(err, context.DeadlineExceeded) || !store.IsTimeout(err) {
		t.Fatalf("Contact behind a row lock: %v, want the store deadline", err)
	}
	if after := count(); after != before {
		t.Fatalf("contact_requests/audit_log rows %v, want unchanged %v", after, before)
	}
	// The connection the deadline broke went back to the pool closed, not
	// stuck in the aborted transaction: the next call works.
	if _, _, err := s.Hello(context.Background(), "carol", "carol", pircan.Profile{}, 30); err != nil {
		t.Fatalf("next call after the timeout: %v", err)
	}
}

// Audit ids are drawn at INSERT but transactions commit in any order: the
// follow holds back a row while a transaction that may still commit a
// lower id is open, then prints both in id order, none skipped.
func TestAuditFollowWaitsForEarlierTransactions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn := pgtest.Database(t)
	s, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan store.AuditEntry, 10)
	followed := make(chan error, 1)
	go func() {
		followed <- s.AuditFollow(ctx, 0, func(e store.AuditEntry) error { got <- e; return nil }, nil)
	}()

	early, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close(context.Background())
	tx, err := early.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, `INSERT INTO audit_log (actor_account, action, subject, details)
		VALUES ('op', 'test.early', '', '{}')`); err != nil {
		t.Fatal(err)
	}
	if err := s.AddChannel(ctx, pircan.Actor{Account: "op"}, "#later", false, ""); err != nil { // a higher id, committed first
		t.Fatal(err)
	}
	select {
	case e := <-got:
		t.Fatalf("printed %s (id %d) while a transaction holding a lower id is open", e.Action, e.ID)
	case <-time.After(time.Second):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var order []string
	for range 2 {
		select {
		case e := <-got:
			order = append(order, e.Action)
		case err := <-followed:
			t.Fatalf("follow ended: %v", err)
		case <-ctx.Done():
			t.Fatalf("printed only %v", order)
		}
	}
	if strings.Join(order, " ") != "test.early channel.add" {
		t.Fatalf("printed %v, want the early transaction's row first", order)
	}
}
