package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// leaderLockKey is the advisory lock that decides which of several
// `pircan serve` processes on one database holds the IRC nick.
const leaderLockKey = 7340002

// Leadership is a held leader lock. It lives on a connection of its own,
// taken out of the pool: the lock is the connection's, so it ends when the
// process dies, however it dies.
type Leadership struct {
	conn *pgx.Conn
	pid  uint32 // the lock's backend: a holder with this pid is still us
	lost chan struct{}
	done chan struct{}
}

// TryLead takes the leader lock if no other process holds it; nil, nil
// means another one does.
func (s *Store) TryLead(ctx context.Context) (*Leadership, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	conn := pc.Hijack()
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", leaderLockKey).Scan(&got); err != nil || !got {
		conn.Close(context.Background())
		return nil, err
	}
	l := &Leadership{conn: conn, pid: conn.PgConn().PID(), lost: make(chan struct{}), done: make(chan struct{})}
	go l.watch()
	return l, nil
}

// watch checks the lock's connection every second. A busy database may be
// slow to answer, so it takes three failed checks in a row (or a closed
// connection) to give the lock up: then the connection is closed, so the
// session, and the lock with it, surely ends, and Lost says so.
func (l *Leadership) watch() {
	defer close(l.lost)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	failures := 0
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			err := l.conn.Ping(ctx)
			cancel()
			switch {
			case err == nil:
				failures = 0
			case l.conn.IsClosed():
				return
			default:
				if failures++; failures >= 3 {
					l.conn.Close(context.Background())
					return
				}
			}
		}
	}
}

// HeldBySelf reports whether the lock's current holder is this
// Leadership's own (perhaps dying) session, or nobody: after Lost, only
// another holder means another process leads.
func (s *Store) HeldBySelf(ctx context.Context, l *Leadership) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var pids []uint32
	rows, err := s.pool.Query(ctx, `SELECT pid FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND classid = 0 AND objid = $1`, leaderLockKey)
	if err != nil {
		return false, err
	}
	for rows.Next() {
		var pid int32
		if err := rows.Scan(&pid); err != nil {
			rows.Close()
			return false, err
		}
		pids = append(pids, uint32(pid))
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	for _, pid := range pids {
		if pid != l.pid {
			return false, nil
		}
	}
	return true, nil
}

// Lost is closed when the lock can no longer be trusted (or was released).
func (l *Leadership) Lost() <-chan struct{} { return l.lost }

// Release gives the lock up.
func (l *Leadership) Release() {
	select {
	case <-l.done:
		return
	default:
		close(l.done)
	}
	<-l.lost
	l.conn.Close(context.Background()) // closing the session releases the lock
}
