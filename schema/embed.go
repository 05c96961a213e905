// Package schema holds the goose migrations, embedded into the binary.
package schema

import "embed"

// FS holds the numbered migration files.
//
//go:embed *.sql
var FS embed.FS
