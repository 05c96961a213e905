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
	lost chan struct{}
	done chan struct{}
}

// TryLead takes the leader lock if no other process holds it; nil, nil
// means another one does.
func (s *Store) TryLead(ctx context.Context) (*Leadership, error) {
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
	l := &Leadership{conn: conn, lost: make(chan struct{}), done: make(chan struct{})}
	go l.watch()
	return l, nil
}

// watch checks the lock's connection every second; when it fails the lock
// may be anyone's, and Lost says so.
func (l *Leadership) watch() {
	defer close(l.lost)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			err := l.conn.Ping(ctx)
			cancel()
			if err != nil {
				return
			}
		}
	}
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
