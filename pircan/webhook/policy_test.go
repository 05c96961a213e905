package webhook_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/webhook"
)

func TestWebhookCheckURL(t *testing.T) {
	p := &webhook.Policy{AllowHosts: []string{"127.0.0.1"}, LookupHost: func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "public.test":
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		case "mixed.test": // one internal address among public ones is enough to refuse
			return []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("192.168.1.5")}, nil
		case "localhost":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}, nil
		}
		return nil, errors.New("no such host")
	}}
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://public.test/hook?token=x", true},
		{"https://93.184.216.34/hook", true},
		{"http://127.0.0.1:8080/hook", true}, // allowed host: plain http too
		{"https://127.0.0.1:8443/hook", true},
		{"http://example.com/hook", false}, // not https
		{"ftp://public.test/hook", false},
		{"https://127.0.0.2/", false},
		{"https://10.0.0.1/", false},
		{"https://172.16.3.4/", false},
		{"https://192.168.0.1/", false},
		{"https://169.254.169.254/latest/meta-data", false},
		{"https://[::1]/", false},
		{"https://[fc00::1]/", false},
		{"https://[fe80::1]/", false},
		{"https://[::ffff:10.1.2.3]/", false},
		{"https://224.0.0.1/", false},
		{"https://0.0.0.0/", false},
		{"https://100.64.0.1/", false},
		{"https://localhost/", false},
		{"https://mixed.test/", false},
		{"https://nowhere.test/", false},
		{"https://user:pass@public.test/", false},
		{"https://user@public.test/", false},
		{"/relative", false},
		{"https:opaque", false},
	} {
		err := p.CheckURL(t.Context(), tc.url)
		if tc.ok {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.url, err)
			}
			continue
		}
		var perr *pircan.Error
		if !errors.As(err, &perr) || perr.Code != pircan.CodeInvalidArgument || perr.Field != "url" || perr.Message == "" {
			t.Errorf("%s: got %v, want invalid_argument about url", tc.url, err)
		}
	}
}

// The real resolver: localhost is loopback however it is written.
func TestWebhookCheckURLLocalhostResolved(t *testing.T) {
	err := (&webhook.Policy{}).CheckURL(t.Context(), "https://localhost/hook")
	var perr *pircan.Error
	if !errors.As(err, &perr) || perr.Field != "url" {
		t.Fatalf("https://localhost: got %v, want refused", err)
	}
}

func TestWebhookBackoff(t *testing.T) {
	want := []string{"30s", "1m0s", "2m0s", "4m0s", "8m0s", "16m0s", "32m0s", "1h0m0s", "1h0m0s"}
	for i, w := range want {
		if got := webhook.Backoff(i + 1).String(); got != w {
			t.Errorf("Backoff(%d) = %s, want %s", i+1, got, w)
		}
	}
}
