package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/store"
)

// What the tests of the listening caches (agent, token, rights) share:
// two processes on one database, the listener, the forgets awaited.

// twoProcesses opens two stores on one fresh migrated database: this
// process's and another's. ctx ends with the test.
func twoProcesses(t *testing.T) (ctx context.Context, here, there *store.Store) {
	t.Helper()
	dsn := pgtest.Database(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	open := func() *store.Store {
		s, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	here, there = open(), open()
	if _, err := here.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return ctx, here, there
}

// listen runs s's listener (RunAgentCache) until the test ends.
func listen(t *testing.T, ctx context.Context, s *store.Store) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { s.RunAgentCache(ctx, zerolog.Nop()) })
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// forgetting is a channel for a cache's forget hook to tell, and await,
// which reads it until it tells want (10 s at most).
func forgetting(t *testing.T) (forgotten chan string, await func(what, want string)) {
	forgotten = make(chan string, 100)
	return forgotten, func(what, want string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case id := <-forgotten:
				if id == want {
					return
				}
			case <-deadline:
				t.Fatalf("%s: %q never forgotten", what, want)
			}
		}
	}
}
