package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

var errNoRows = pgx.ErrNoRows

// audit appends one row to the audit log inside the caller's transaction.
// details carry ids and sizes, never message text or secrets.
func audit(ctx context.Context, q *db.Queries, actor pircan.Actor, action, subject string, details map[string]any) error {
	if details == nil {
		details = map[string]any{}
	}
	if actor.Session != "" {
		details["session"] = actor.Session
	}
	b, err := json.Marshal(details)
	if err != nil {
		return err
	}
	var agent *string
	if actor.AgentID != "" {
		agent = &actor.AgentID
	}
	return q.AppendAudit(ctx, db.AppendAuditParams{ActorAccount: actor.Account, ActorAgent: agent,
		Action: action, Subject: subject, Details: b})
}

// AuditEntry is one row of the audit log.
type AuditEntry struct {
	ID           int64           `json:"id"`
	At           time.Time       `json:"at"`
	ActorAccount string          `json:"actor_account,omitempty"`
	ActorAgent   *string         `json:"actor_agent,omitempty"`
	Action       string          `json:"action"`
	Subject      string          `json:"subject,omitempty"`
	Details      json.RawMessage `json:"details"`
}

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
// one as it is appended, until ctx ends. It listens on pircan_audit and
// reads by id, so no entry is missed between a notification and the read.
func (s *Store) AuditFollow(ctx context.Context, afterID int64, emit func(AuditEntry) error) error {
	conn, err := s.listenConn(ctx, "pircan_audit")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for {
		rows, err := db.New(conn).AuditAfter(ctx, db.AuditAfterParams{AfterID: afterID, Lim: 500})
		if err != nil {
			return err
		}
		for _, e := range toEntries(rows) {
			if err := emit(e); err != nil {
				return err
			}
			afterID = e.ID
		}
		if len(rows) == 500 {
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err = conn.WaitForNotification(wctx)
		cancel()
		if err != nil && ctx.Err() != nil {
			return nil
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	}
}
