package store

import (
	"context"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/schema"
	"github.com/creatimus/pircan/store/db"
)

// PoolStats is a snapshot of the connection pool, for metrics (pgx types
// stay in this package).
type PoolStats struct {
	Acquired, Idle, Total, Max int32
	// Cumulative since the pool opened.
	AcquireCount         int64
	AcquireDuration      time.Duration
	EmptyAcquireCount    int64 // acquires that had to wait for a connection
	CanceledAcquireCount int64
}

// PoolStats reads the pool's counters; it does not touch the database.
func (s *Store) PoolStats() PoolStats {
	st := s.pool.Stat()
	return PoolStats{
		Acquired: st.AcquiredConns(), Idle: st.IdleConns(), Total: st.TotalConns(), Max: st.MaxConns(),
		AcquireCount: st.AcquireCount(), AcquireDuration: st.AcquireDuration(),
		EmptyAcquireCount: st.EmptyAcquireCount(), CanceledAcquireCount: st.CanceledAcquireCount(),
	}
}

// WaitingNotifications counts notifications waiting for delivery (the last
// 24 hours), stopping at max so that the query stays cheap however large
// the backlog.
func (s *Store) WaitingNotifications(ctx context.Context, max int32) (int64, error) {
	var n int64
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		var err error
		n, err = q.CountWaitingNotifications(ctx, db.CountWaitingNotificationsParams{Lifetime: pircan.NotificationLifetime, MaxRows: max})
		return err
	})
	return n, err
}

// SchemaReady is SchemaCurrent for readiness probes: it reads goose's
// version table directly instead of taking the migration lock, so a probe
// never waits behind a migration (it answers false meanwhile) and probes of
// several processes never wait for one another.
func (s *Store) SchemaReady(ctx context.Context) (bool, error) {
	want, err := newestMigration()
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var have *int64
	if err := s.pool.QueryRow(ctx, "SELECT max(version_id) FROM goose_db_version").Scan(&have); err != nil {
		return false, err
	}
	switch {
	case have == nil:
		return false, nil
	case *have > want:
		return false, fmt.Errorf("database schema version %d is newer than this binary's %d", *have, want)
	}
	return *have == want, nil
}

var newest struct {
	once    sync.Once
	version int64
	err     error
}

// newestMigration is the version of the last embedded migration.
func newestMigration() (int64, error) {
	newest.once.Do(func() {
		names, err := fs.Glob(schema.FS, "*.sql")
		if err != nil || len(names) == 0 {
			newest.err = fmt.Errorf("no embedded migrations: %v", err)
			return
		}
		for _, name := range names {
			v, err := goose.NumericComponent(name)
			if err != nil {
				newest.err = err
				return
			}
			newest.version = max(newest.version, v)
		}
	})
	return newest.version, newest.err
}

// Autovacuum reports whether the server vacuums tables by itself. FIND
// reads agent_capabilities from its index alone, which skips the table only
// for pages a vacuum has marked all-visible: without autovacuum, every
// change to the directory slows FIND until someone runs VACUUM.
func (s *Store) Autovacuum(ctx context.Context) (bool, error) {
	var on string
	err := s.read(ctx, func(ctx context.Context, _ *db.Queries) error {
		return s.pool.QueryRow(ctx, "SELECT current_setting('autovacuum')").Scan(&on)
	})
	return on == "on", err
}
