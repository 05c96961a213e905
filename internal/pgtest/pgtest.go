// Package pgtest gives each test a database of its own on a real
// PostgreSQL server, created empty and dropped afterwards, so no test
// depends on what another left behind.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
)

const localURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

var container struct {
	once sync.Once
	url  string
	err  error
}

// ServerURL is the server tests use: PIRCAN_TEST_DATABASE_URL; else the
// local server (every machine here runs one); else, only when neither
// answers and Docker does, a PostgreSQL container started once for the
// test binary (testcontainers-go; its reaper removes it afterwards).
func ServerURL(ctx context.Context) (string, error) {
	if u := os.Getenv("PIRCAN_TEST_DATABASE_URL"); u != "" {
		return u, nil
	}
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if c, err := pgx.Connect(pctx, localURL); err == nil {
		c.Close(pctx)
		return localURL, nil
	}
	container.once.Do(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		pg, err := tcpostgres.Run(cctx, "postgres:16", tcpostgres.WithUsername("postgres"),
			tcpostgres.WithPassword("postgres"), tcpostgres.WithDatabase("postgres"), tcpostgres.BasicWaitStrategies())
		if err != nil {
			container.err = fmt.Errorf("no PostgreSQL: set PIRCAN_TEST_DATABASE_URL, run one on 127.0.0.1:5432, or start Docker (%w)", err)
			return
		}
		container.url, container.err = pg.ConnectionString(cctx, "sslmode=disable")
	})
	return container.url, container.err
}

// NewDatabase creates a fresh database on the server at serverURL and
// returns its URL; cleanup drops it.
func NewDatabase(ctx context.Context, serverURL string) (dsn string, cleanup func(), err error) {
	admin, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return "", nil, fmt.Errorf("connect to test server: %w", err)
	}
	defer admin.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "pircan_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, err
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	cleanup = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, serverURL); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(ctx)
		}
	}
	return u.String(), cleanup, nil
}

// Database is NewDatabase for a test: it fails the test on error and drops
// the database when the test ends.
func Database(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server, err := ServerURL(ctx)
	if err != nil {
		t.Fatalf("test database: %v", err)
	}
	dsn, cleanup, err := NewDatabase(ctx, server)
	if err != nil {
		t.Fatalf("test database: %v", err)
	}
	t.Cleanup(cleanup)
	return dsn
}
