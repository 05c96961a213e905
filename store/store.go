// Package store is PIRCAN's PostgreSQL persistence: the sqlc-generated
// queries in store/db, behind a Store that speaks the core's types. Nothing
// above this package imports pgx.
package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// QueryTimeout bounds every store call, a whole transaction included, so a
// stuck database turns into an internal_error reply (or a failed portal
// page or operator command) instead of a stuck caller.
const QueryTimeout = 5 * time.Second

// LockTimeout is the server-side bound on any one lock wait. It is shorter
// than QueryTimeout so that a call blocked behind a row lock fails with a
// clear lock_not_available (55P03) while its deadline still has room, and
// because the server enforces it even when the client has gone: a backend
// whose client hung up at the deadline would otherwise wait on for the lock
// while still holding the ones its transaction took before.
const LockTimeout = 3 * time.Second

// DefaultPoolConns is the pool's size when the database URL does not set
// pool_max_conns (pgxpool's own default is 4 on two cores): as many as the
// bot's request workers, so that concurrent writers share their commits'
// flushes; with 4, SEND → INBOX at 50 pairs queued for a connection
// (BENCHMARKS.md "Target 5"). Connections are opened as needed.
const DefaultPoolConns = 16

// Timeouts are a store's bounds; the zero value means the defaults above.
// Lock 0 leaves the server's lock_timeout alone (tests of the deadline).
type Timeouts struct {
	Query, Lock time.Duration
}

// Store implements pircan.Store over a pgx pool.
type Store struct {
	pool    *pgxpool.Pool
	q       *db.Queries
	planned *db.Queries // the lists with optional filters: see perCallPlans
	timeout time.Duration
	agents  *agentCache
	tokens  *tokenCache  // on the agent cache's listener (tokencache.go)
	rights  *rightsCache // the same (rightscache.go)
	// findCounts: how FIND's totals for a text were counted (find.go).
	findCounts *findCounts
	trips      *tripCounter // the pool's tracer (pipe.go)
}

var _ pircan.Store = (*Store)(nil)

// Open connects a pool to dsn with the default timeouts.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return OpenTimeouts(ctx, dsn, Timeouts{Query: QueryTimeout, Lock: LockTimeout})
}

// OpenTimeouts connects a pool to dsn. Statements are prepared once per
// connection and Postgres may keep a generic plan for them (planning was a
// fifth of SEND → INBOX's cost), but for the lists with optional filters,
// which are planned for their arguments on every call (perCallPlans).
// lock_timeout is a connection parameter rather than a SET LOCAL per
// transaction: no extra round trip, and it covers every statement, the
// migrations' DDL included (which then cannot queue, with every query behind
// it, for a lock a running transaction holds).
func OpenTimeouts(ctx context.Context, dsn string, t Timeouts) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", err)
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "pircan"
	if t.Lock > 0 {
		cfg.ConnConfig.RuntimeParams["lock_timeout"] = strconv.FormatInt(t.Lock.Milliseconds(), 10)
	}
	if t.Query <= 0 {
		t.Query = QueryTimeout
	}
	trips := &tripCounter{}
	cfg.ConnConfig.Tracer = trips
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = DefaultPoolConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s := newStore(pool, t.Query)
	s.trips = trips
	return s, nil
}

// newStore is a store over pool, its caches empty.
func newStore(pool *pgxpool.Pool, timeout time.Duration) *Store {
	return &Store{pool: pool, q: db.New(pool), planned: db.New(perCallPlans{pool}), timeout: timeout,
		agents: newAgentCache(), tokens: newTokenCache(), rights: newRightsCache(), findCounts: &findCounts{}, trips: &tripCounter{}}
}

// perCallPlans runs statements unnamed (pgx's QueryExecModeCacheDescribe:
// still one round trip), and Postgres plans an unnamed statement for the
// values it is given, every time. The lists with optional filters need
// that: FIND with q, with a capability, with both or with neither wants a
// different index each, and a generic plan, made without the values, would
// serve every case with one of them (or none). Those store methods read
// through readPlanned.
type perCallPlans struct{ pool *pgxpool.Pool }

func (p perCallPlans) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return p.pool.Exec(ctx, sql, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...)
}

func (p perCallPlans) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return p.pool.Query(ctx, sql, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...)
}

func (p perCallPlans) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return p.pool.QueryRow(ctx, sql, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...)
}

// IsTimeout reports whether err is a store call that ran out of time: its
// deadline, or the server's lock_timeout. Both are worth a retry.
func IsTimeout(err error) bool {
	var pe *pgconn.PgError
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &pe) && pe.Code == "55P03")
}

// Close releases the pool.
func (s *Store) Close() { s.pool.Close() }

// Pool exposes the pool to the migration and LISTEN helpers of this module.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.pool.Ping(ctx)
}

// withTx runs fn in one transaction, the whole of it under one deadline
// (the query timeout, or the caller's, if sooner): fn must run its
// statements on the ctx it is given. The rollback is deferred on a fresh,
// bounded context: it must run even when ctx ran out, or the pool would
// never get the connection back.
func (s *Store) withTx(ctx context.Context, fn func(ctx context.Context, q *db.Queries) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
		defer cancel()
		_ = tx.Rollback(rctx)
	}()
	if err := fn(ctx, s.q.WithTx(tx)); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// readPlanned is read with statements planned for their arguments on every
// call (perCallPlans): for the lists with optional filters.
func (s *Store) readPlanned(ctx context.Context, fn func(ctx context.Context, q *db.Queries) error) error {
	return s.readWith(ctx, s.planned, fn)
}

// read runs fn outside a transaction under the query timeout.
func (s *Store) read(ctx context.Context, fn func(ctx context.Context, q *db.Queries) error) error {
	return s.readWith(ctx, s.q, fn)
}

func (s *Store) readWith(ctx context.Context, q *db.Queries, fn func(ctx context.Context, q *db.Queries) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return fn(ctx, q)
}

// notFound maps pgx's no-rows to the core's ErrNotFound at this boundary.
func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return pircan.ErrNotFound
	}
	return err
}

// foldAccount is the key NickServ account names are compared by.
func foldAccount(account string) string { return pircan.FoldAccount(account) }

// Listen calls fn with the payload of every notification on channel until
// ctx ends or the connection fails. ready is called once listening.
func (s *Store) Listen(ctx context.Context, channel string, ready func(), fn func(payload string)) error {
	conn, err := s.listenConn(ctx, channel)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	ready()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		fn(n.Payload)
	}
}

// listenConn takes a connection out of the pool for LISTEN: it is closed,
// never returned, so no later user inherits the subscription.
func (s *Store) listenConn(ctx context.Context, channel string) (*pgx.Conn, error) {
	conn, err := s.ownConn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return conn, nil
}

// ownConn takes a connection out of the pool for the caller to keep (and
// close).
func (s *Store) ownConn(ctx context.Context) (*pgx.Conn, error) {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return pc.Hijack(), nil
}

// A query is one sqlc statement named by its method expression
// ((*db.Queries).ListWebhooks), so that a read helper runs it on the
// Queries of its choice with the caller's argument.
type query[A, R any] func(q *db.Queries, ctx context.Context, arg A) (R, error)

// noArg is a query of a statement without parameters.
func noArg[R any](stmt func(q *db.Queries, ctx context.Context) (R, error)) query[struct{}, R] {
	return func(q *db.Queries, ctx context.Context, _ struct{}) (R, error) { return stmt(q, ctx) }
}

// readPlannedPage is readRows for a page of a list with optional filters:
// planned per call (not a generic plan), each row carrying the total of
// the whole list.
func readPlannedPage[A, R, T any](ctx context.Context, s *Store, list query[A, []R], arg A, conv func(R) (T, int64)) ([]T, int, error) {
	var out []T
	total := 0
	err := s.readPlanned(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := list(q, ctx, arg)
		for _, r := range rows {
			t, n := conv(r)
			out = append(out, t)
			total = int(n)
		}
		return err
	})
	return out, total, err
}

// foldedOrAll is an optional account filter: folded, or "" for all.
func foldedOrAll(account string) string {
	if account == "" {
		return ""
	}
	return foldAccount(account)
}

// readRows is a list read: the rows one query returns for arg, each
// turned into the core's type, in one read.
func readRows[A, R, T any](ctx context.Context, s *Store, list query[A, []R], arg A, conv func(R) T) ([]T, error) {
	var out []T
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := list(q, ctx, arg)
		for _, r := range rows {
			out = append(out, conv(r))
		}
		return err
	})
	return out, err
}

// readOne is a read of one row: the row one query returns for arg, turned
// into the core's type, or pircan.ErrNotFound when there is none.
func readOne[A, R, T any](ctx context.Context, s *Store, one query[A, R], arg A, conv func(R) T) (T, error) {
	var out T
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		r, err := one(q, ctx, arg)
		if err != nil {
			return notFound(err)
		}
		out = conv(r)
		return nil
	})
	return out, err
}
