package pircan_test

import (
	"testing"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// Span says the spec's figures as the spec words them.
func TestSpan(t *testing.T) {
	for d, want := range map[time.Duration]string{
		pircan.DeclineCooldown: "24 hours", pircan.RequestLifetime: "7 days", pircan.SessionLifetime: "12 hours",
		pircan.CodeLifetime: "10 minutes", time.Hour: "1 hour", 48 * time.Hour: "2 days", 90 * time.Minute: "90 minutes",
		time.Minute: "1 minute", 90 * time.Second: "90 seconds", 1500 * time.Millisecond: "1 second",
	} {
		if got := pircan.Span(d); got != want {
			t.Errorf("Span(%v) = %q, want %q", d, got, want)
		}
	}
}
