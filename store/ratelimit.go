package store

import (
	"context"
	"fmt"
	"time"

	"github.com/creatimus/pircan/store/db"
)

// PruneBatch is the most windows one PruneRequestWindows call deletes: a
// caller that gets PruneBatch back has more to prune and calls again.
const PruneBatch = 10_000

// CountRequest counts n requests of key at once in its fixed window of the
// given length, shared by every process on the database: it returns the
// count so far in the window, these n included (n for the first requests
// of a new or restarted window), and when the window ends, by the database
// clock. The key is opaque; the
// caller namespaces it. window is kept to whole microseconds (the
// database's resolution) and must be at least one.
func (s *Store) CountRequest(ctx context.Context, key string, window time.Duration, n int) (count int, ends time.Time, err error) {
	us := window.Microseconds()
	if us < 1 {
		return 0, time.Time{}, fmt.Errorf("request window %v: shorter than a microsecond", window)
	}
	if n < 1 {
		return 0, time.Time{}, fmt.Errorf("counting %d requests: at least one", n)
	}
	err = s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		row, err := q.CountRequest(ctx, db.CountRequestParams{Key: key, WindowUs: us, N: int32(n)})
		count, ends = int(row.Count), row.Ends
		return err
	})
	return count, ends, err
}

// PruneRequestWindows deletes at most PruneBatch windows that ended before
// before and returns how many it deleted. A window pruned or not counts the
// same: an ended window restarts on its next request either way.
func (s *Store) PruneRequestWindows(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		var err error
		n, err = q.PruneRequestWindows(ctx, db.PruneRequestWindowsParams{Before: before, MaxRows: PruneBatch})
		return err
	})
	return int(n), err
}
