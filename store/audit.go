package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/creatimus/pircan/internal/backoff"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

var errNoRows = pgx.ErrNoRows

// audit appends one row to the audit log inside the caller's transaction.
// details carry ids and sizes, never message text or secrets.
func audit(ctx context.Context, q *db.Queries, actor pircan.Actor, action, subject string, details map[string]any) error {
	p, err := auditEntry(actor, action, subject, details)
	if err != nil {
		return err
	}
	return q.AppendAudit(ctx, p)
}

// auditEntry is the row audit appends, for the statements that write their
// audit entry themselves (SendMessage, MarkRead) in one round trip.
func auditEntry(actor pircan.Actor, action, subject string, details map[string]any) (db.AppendAuditParams, error) {
	if details == nil {
		details = map[string]any{}
	}
	if actor.Session != "" {
		details["session"] = actor.Session
	}
	b, err := json.Marshal(details)
	if err != nil {
		return db.AppendAuditParams{}, err
	}
	var agent *string
	if actor.AgentID != "" {
		agent = &actor.AgentID
	}
	return db.AppendAuditParams{ActorAccount: actor.Account, ActorAgent: agent,
		Action: action, Subject: subject, Details: b}, nil
}

// AuditEntry is one row of the audit log (the core's type).
type AuditEntry = pircan.AuditEntry

func toEntries(rows []db.AuditLog) []AuditEntry {
	out := make([]AuditEntry, len(rows))
	for i, r := range rows {
		out[i] = AuditEntry{ID: r.ID, At: r.At, ActorAccount: r.ActorAccount, ActorAgent: r.ActorAgent,
			Action: r.Action, Subject: r.Subject, Details: r.Details}
	}
	return out
}

// AuditLatest returns the last n entries, oldest first.
func (s *Store) AuditLatest(ctx context.Context, n int) ([]AuditEntry, error) {
	var out []AuditEntry
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.AuditLatest(ctx, int32(n))
		out = toEntries(rows)
		return err
	})
	return out, err
}

// AuditFollow calls emit for every entry after afterID, then for each new
// one as it is appended, until ctx ends (then it returns nil). It reads by
// id every auditPoll (schema 00070: a NOTIFY per entry serialised every
// audited commit), and it emits a row only once no transaction that may
// still commit a lower id is open (auditSettle), so a late commit is not
// skipped. A lost database connection (a restart: 57P01, a network
// error) does not end it: it reports the error to lost (if not nil), waits
// (backoff), connects again and then catches up by id from the last entry it
// emitted, so a restart leaves no gap and no duplicate. Other errors (emit's,
// or the database refusing the query) end it.
func (s *Store) AuditFollow(ctx context.Context, afterID int64, emit func(AuditEntry) error,
	lost func(err error, retryIn time.Duration)) error {
	b := backoff.New(200*time.Millisecond, 5*time.Second)
	for {
		connected, err := s.auditFollowOnce(ctx, &afterID, emit)
		switch {
		case ctx.Err() != nil:
			return nil
		case !retryable(err):
			return err
		}
		if connected {
			b.Reset()
		}
		wait := b.Next()
		if lost != nil {
			lost(err, wait)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// auditPoll is how often audit --follow looks for new entries.
const auditPoll = 250 * time.Millisecond

// auditFollowOnce follows on one connection until it fails; connected says
// whether the connection worked.
func (s *Store) auditFollowOnce(ctx context.Context, afterID *int64, emit func(AuditEntry) error) (connected bool, err error) {
	conn, err := s.ownConn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.Background())
	q := db.New(conn)
	for {
		rows, err := q.AuditAfter(ctx, db.AuditAfterParams{AfterID: *afterID, Lim: 500})
		if err != nil {
			return true, err
		}
		if len(rows) > 0 {
			// Everything up to top is final once the transactions that may
			// still commit a lower id have ended; read again, then emit.
			top := rows[len(rows)-1].ID
			if err := auditSettle(ctx, conn); err != nil {
				return true, err
			}
			if rows, err = q.AuditAfter(ctx, db.AuditAfterParams{AfterID: *afterID, Lim: 500}); err != nil {
				return true, err
			}
			for _, e := range toEntries(rows) {
				if e.ID > top {
					break
				}
				if err := emit(e); err != nil {
					return true, emitError{err}
				}
				*afterID = e.ID
			}
			continue // until a read finds nothing new
		}
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-time.After(auditPoll):
		}
	}
}

// auditSettle waits until every transaction that holds audit_log's insert
// lock now has ended. Ids are drawn at INSERT but transactions commit in
// any order, so a row can become visible after one with a higher id; a
// follow by "id > last printed" would skip it for good. A transaction that
// takes the lock after this call draws a higher id than any row visible
// before it, so once the ones seen here are gone, every id below the rows
// already read is final. They end within the store's timeout.
func auditSettle(ctx context.Context, conn *pgx.Conn) error {
	const holders = `SELECT coalesce(array_agg(virtualtransaction), '{}') FROM pg_locks
		WHERE locktype = 'relation' AND relation = 'audit_log'::regclass AND mode = 'RowExclusiveLock'
		AND granted AND pid <> pg_backend_pid() AND ($1::text[] IS NULL OR virtualtransaction = ANY($1))`
	var open []string
	if err := conn.QueryRow(ctx, holders, nil).Scan(&open); err != nil {
		return err
	}
	for len(open) > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if err := conn.QueryRow(ctx, holders, open).Scan(&open); err != nil {
			return err
		}
	}
	return nil
}

// emitError marks a failure of the caller's emit: never retried.
type emitError struct{ error }

func (e emitError) Unwrap() error { return e.error }

// retryable tells a lost or refused connection (worth reconnecting for)
// from an error that would only repeat: the caller's own, or the database
// refusing the query itself.
func retryable(err error) bool {
	if err == nil {
		return false
	}
	var ee emitError
	if errors.As(err, &ee) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code[:2] {
		case "08", "57", "53": // connection exception, operator intervention (restart), resources
			return true
		}
		return false
	}
	return true // no answer from the server at all: network, closed connection, dial
}
