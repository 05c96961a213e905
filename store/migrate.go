package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/creatimus/pircan/schema"
)

// newProvider builds a goose provider over the embedded migrations, under a
// Postgres session lock so that two processes never migrate at once.
func (s *Store) newProvider() (*goose.Provider, func() error, error) {
	sqlDB := stdlib.OpenDBFromPool(s.pool)
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, nil, err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, schema.FS, goose.WithSessionLocker(locker))
	if err != nil {
		sqlDB.Close()
		return nil, nil, err
	}
	return p, sqlDB.Close, nil
}

// Migrate brings the schema up to date and returns the resulting version.
func (s *Store) Migrate(ctx context.Context) (int64, error) {
	p, closeDB, err := s.newProvider()
	if err != nil {
		return 0, err
	}
	defer closeDB()
	if _, err := p.Up(ctx); err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	return p.GetDBVersion(ctx)
}

// SchemaCurrent reports whether every embedded migration is applied, and
// refuses a database newer than this binary.
func (s *Store) SchemaCurrent(ctx context.Context) (bool, error) {
	p, closeDB, err := s.newProvider()
	if err != nil {
		return false, err
	}
	defer closeDB()
	have, err := p.GetDBVersion(ctx)
	if err != nil {
		return false, err
	}
	sources := p.ListSources()
	want := sources[len(sources)-1].Version
	if have > want {
		return false, fmt.Errorf("database schema version %d is newer than this binary's %d", have, want)
	}
	return have == want, nil
}

// SchemaVersion is the database's schema version (the last migration
// applied) and whether it is this binary's newest.
func (s *Store) SchemaVersion(ctx context.Context) (version int64, current bool, err error) {
	p, closeDB, err := s.newProvider()
	if err != nil {
		return 0, false, err
	}
	defer closeDB()
	if version, err = p.GetDBVersion(ctx); err != nil {
		return 0, false, err
	}
	sources := p.ListSources()
	return version, version == sources[len(sources)-1].Version, nil
}

// ErrSchemaNotCurrent: the database lacks migrations this binary has (it
// was never migrated, or by an older pircan). The words are what an
// operator sees from every command that refuses such a database.
var ErrSchemaNotCurrent = errors.New("the database schema is not up to date for this pircan: run pircan migrate")

// CheckSchema is SchemaCurrent as an error: nil when current,
// ErrSchemaNotCurrent when migrations are missing.
func (s *Store) CheckSchema(ctx context.Context) error {
	current, err := s.SchemaCurrent(ctx)
	if err == nil && !current {
		err = ErrSchemaNotCurrent
	}
	return err
}

func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
