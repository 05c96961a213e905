package pircan

import (
	"context"
	"time"
)

// Per-minute request limits of the HTTP faces: the portal's, and one
// window per account that MCP and A2A share (an account is one client of
// the HTTP API whichever protocol it speaks, so speaking both does not
// double its share). Those faces run as many replicas as needed, so the
// window of a caller lives in the database, where every replica counts it
// (Store.CountRequest).
// The IRC face keeps its windows in memory (pircan/irc/limits.go): exactly
// one process holds the IRC connection (the leader lock), so every IRC
// request passes through the one table.

// RequestCounter counts one request of key in its fixed window, shared by
// every process: the count so far in the window and when it ends.
type RequestCounter interface {
	CountRequest(ctx context.Context, key string, window time.Duration) (count int, ends time.Time, err error)
}

// Admit counts one request of the caller in its face's window and refuses
// it (rate_limited, with RetryAfter) over that window's per-minute limit.
func (s *Service) Admit(ctx context.Context, c Caller) error {
	limit, window := s.cfg.Limits.perMinute(c.Face)
	if limit <= 0 || s.counter == nil {
		return nil
	}
	n, ends, err := s.counter.CountRequest(ctx, window+":a:"+FoldAccount(c.Account), s.cfg.Limits.Window)
	if err != nil {
		return err
	}
	if n <= limit {
		return nil
	}
	e := Errorf(CodeRateLimited, "At most %d requests per minute; try again in a moment.", limit)
	e.RetryAfter = max(time.Until(ends), 0)
	return e
}

// perMinute is the per-minute request limit of a face (0: none here) and
// the name of the window it counts in: MCP and A2A count in one, "http".
func (l Limits) perMinute(f Face) (int, string) {
	switch f {
	case FacePortal:
		return l.PortalPerMinute, string(FacePortal)
	case FaceMCP, FaceA2A:
		return l.HTTPPerMinute, "http"
	}
	return 0, ""
}
