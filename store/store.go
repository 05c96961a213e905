// Package store is PIRCAN's PostgreSQL persistence: the sqlc-generated
// queries in store/db, behind a Store that speaks the core's types. Nothing
// above this package imports pgx.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// QueryTimeout bounds every store call, so a stuck database turns into an
// internal_error reply instead of a stuck worker.
const QueryTimeout = 5 * time.Second

// Store implements pircan.Store over a pgx pool.
type Store struct {
	pool *pgxpool.Pool
	q    *db.Queries
}

var _ pircan.Store = (*Store)(nil)

// Open connects a pool to dsn. The pool plans each statement for its actual
// arguments (FIND's optional filters must each use their index).
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", err)
	}
	cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	cfg.ConnConfig.RuntimeParams["application_name"] = "pircan"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Store{pool: pool, q: db.New(pool)}, nil
}

// Close releases the pool.
func (s *Store) Close() { s.pool.Close() }

// Pool exposes the pool to the migration and LISTEN helpers of this module.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	return s.pool.Ping(ctx)
}

// withTx runs fn in one transaction. The rollback is deferred on a fresh
// context: it must run even when ctx was cancelled, or the pool would never
// get the connection back.
func (s *Store) withTx(ctx context.Context, fn func(q *db.Queries) error) error {
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(s.q.WithTx(tx)); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// read runs fn outside a transaction under the query timeout.
func (s *Store) read(ctx context.Context, fn func(ctx context.Context, q *db.Queries) error) error {
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	return fn(ctx, s.q)
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
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	conn := pc.Hijack()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return conn, nil
}
