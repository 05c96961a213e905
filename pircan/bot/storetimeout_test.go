package bot_test

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/creatimus/pircan/internal/bottest"
)

// A request whose transaction waits behind a row lock held elsewhere gets
// internal_error with a ref once the store's lock timeout passes (the
// request changes nothing), and the same request works once the lock is
// gone: the worker was not stuck.
func TestRequestBehindRowLockGetsInternalError(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{})
	a, _, aID, bID := pair(t, bot, "locked")

	holder, err := pgx.Connect(t.Context(), bot.DSN)
	must(t, err)
	defer holder.Close(t.Context())
	tx, err := holder.Begin(t.Context())
	must(t, err)
	var id string
	must(t, tx.QueryRow(t.Context(), "SELECT id FROM agents WHERE id = $1 FOR UPDATE", aID).Scan(&id))

	contact := `PIRCAN/1 CONTACT {"to":"` + bID + `","purpose":"behind a lock","id":"c"}`
	if r := a.Ask(contact); r.Code() != "internal_error" || len(r.Str("ref")) < 6 || r.Str("re") != "c" {
		t.Fatalf("CONTACT behind a row lock: %s", r.Raw)
	}
	var n int
	must(t, bot.Store().Pool().QueryRow(t.Context(), "SELECT count(*) FROM contact_requests").Scan(&n))
	if n != 0 {
		t.Fatalf("%d contact requests after the timed-out CONTACT, want 0", n)
	}
	must(t, tx.Rollback(t.Context()))
	if r := a.Ask(contact); r.Verb != "CONTACT" || r.Str("status") != "pending" {
		t.Fatalf("CONTACT once the lock is gone: %s", r.Raw)
	}
}
