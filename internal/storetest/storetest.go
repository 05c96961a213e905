// Package storetest gives a test binary what a running PIRCAN has: a
// migrated database behind a store.Store, with the agent cache following
// changes. One database serves the whole binary (a fresh migrated one
// costs ~0.6 s); its tests use accounts of their own.
package storetest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/store"
)

// Main opens a fresh migrated database, sets *shared to its store, runs
// m and drops the database: TestMain's body, returning the exit code.
func Main(m *testing.M, shared **store.Store) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	server, err := pgtest.ServerURL(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dsn, cleanup, err := pgtest.NewDatabase(ctx, server)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	s, err := Open(ctx, dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	*shared = s
	follow, stop := context.WithCancel(context.Background())
	defer stop()
	go s.RunAgentCache(follow, zerolog.Nop())
	return m.Run()
}

// Open opens dsn's store and migrates it.
func Open(ctx context.Context, dsn string) (*store.Store, error) {
	s, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if _, err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}
