package pircan_test

import (
	"testing"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
)

// PublicURL is the configured one (without its trailing slash) whatever
// the listener; without one, the listen address once known.
func TestPublicURL(t *testing.T) {
	svc := pircan.NewService(shared, pircan.Config{Limits: sharedLimits(), PublicURL: "https://pircan.example/"}, zerolog.Nop())
	svc.Listening("127.0.0.1:8080")
	if got := svc.PublicURL(); got != "https://pircan.example" {
		t.Errorf("configured: %q", got)
	}
	svc = pircan.NewService(shared, pircan.Config{Limits: sharedLimits()}, zerolog.Nop())
	if got := svc.PublicURL(); got != "" {
		t.Errorf("before listening: %q", got)
	}
	for addr, want := range map[string]string{"127.0.0.1:8080": "http://127.0.0.1:8080", "[::1]:9000": "http://[::1]:9000"} {
		svc.Listening(addr)
		if got := svc.PublicURL(); got != want {
			t.Errorf("listening on %s: %q, want %q", addr, got, want)
		}
	}
	for u, ok := range map[string]bool{"": true, "https://pircan.example": true, "http://10.0.0.5:8080/": true,
		"https://pircan.example/prefix": true, "pircan.example": false, "ftp://pircan.example": false,
		"https://user:pw@pircan.example": false, "https://pircan.example/?q=1": false, "https://": false} {
		if err := pircan.CheckPublicURL(u); (err == nil) != ok {
			t.Errorf("CheckPublicURL(%q) = %v", u, err)
		}
	}
}
