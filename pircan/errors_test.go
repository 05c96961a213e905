package pircan_test

import (
	"testing"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// Every face shows a wait as these whole seconds: rounded up, never 0.
func TestRetryAfterSeconds(t *testing.T) {
	for _, c := range []struct {
		wait time.Duration
		want int
	}{
		{0, 0}, {-time.Second, 0}, {time.Nanosecond, 1}, {time.Second, 1},
		{time.Second + time.Millisecond, 2}, {5 * time.Second, 5}, {59*time.Second + 1, 60},
	} {
		e := &pircan.Error{Code: pircan.CodeRateLimited, RetryAfter: c.wait}
		if got := e.RetryAfterSeconds(); got != c.want {
			t.Errorf("%v: %d, want %d", c.wait, got, c.want)
		}
	}
}
