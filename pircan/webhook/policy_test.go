package webhook_test

import (
	"context"
	"errors"
	"math"
	"net/netip"
	"testing"
	"time"

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
		{"https://192.0.2.10/", false}, // documentation
		{"https://198.18.0.1/", false}, // benchmarking
		{"https://240.0.0.1/", false},  // reserved
		{"https://255.255.255.255/", false},
		{"https://[64:ff9b::7f00:1]/", false},     // NAT64 of 127.0.0.1
		{"https://[64:ff9b::a9fe:a9fe]/", false},  // NAT64 of 169.254.169.254
		{"https://[64:ff9b::5db8:d822]/", true},   // NAT64 of 93.184.216.34
		{"https://[64:ff9b:1::1]/", false},        // local-use NAT64
		{"https://[2002:c0a8:0101::1]/", false},   // 6to4 of 192.168.1.1
		{"https://[2002:5db8:d822::1]/", true},    // 6to4 of 93.184.216.34
		{"https://[2001:db8::1]/", false},         // documentation
		{"https://[2001:0:4136:e378::1]/", false}, // Teredo
		{"https://[fec0::1]/", false},             // site-local
		{"https://[2606:4700::1111]/", true},
		// IPv6 outside global unicast 2000::/3, whatever IPv4 it carries.
		{"https://[::127.0.0.1]/", false},         // IPv4-compatible loopback
		{"https://[::7f00:1]/", false},            // the same, written in hex
		{"https://[::a00:1]/", false},             // IPv4-compatible 10.0.0.1
		{"https://[::5db8:d822]/", false},         // IPv4-compatible, even of a public address
		{"https://[::ffff:0:7f00:1]/", false},     // SIIT of 127.0.0.1
		{"https://[::ffff:0:a00:1]/", false},      // SIIT of 10.0.0.1
		{"https://[::ffff:0:5db8:d822]/", false},  // SIIT, even of a public address
		{"https://[::ffff:127.0.0.1]/", false},    // IPv4-mapped loopback
		{"https://[::ffff:93.184.216.34]/", true}, // IPv4-mapped public: the IPv4 address itself
		{"https://[100::1]/", false},              // discard
		{"https://[4000::1]/", false},             // unallocated
		{"https://[5f00::1]/", false},             // SRv6 SIDs
		{"https://[3fff::1]/", false},             // documentation (RFC 9637)
		{"https://[2001:2::1]/", false},           // benchmarking
		{"https://[ff02::1]/", false},             // multicast
		{"https://[64:ff9b::a00:1]/", false},      // NAT64 of 10.0.0.1
		{"https://[2002:7f00:1::1]/", false},      // 6to4 of 127.0.0.1
		{"https://[2a00:1450:4001::200e]/", true},
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

// Retries wait 30 s doubling to an hour, each anywhere from 30 s to its
// ceiling (full jitter: internal/backoff).
func TestWebhookBackoff(t *testing.T) {
	ceilings := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute,
		16 * time.Minute, 32 * time.Minute, time.Hour, time.Hour}
	for _, r := range []float64{0, 0.5, math.Nextafter(1, 0)} {
		p := webhook.Retry
		p.Rand = func() float64 { return r }
		for i, ceil := range ceilings {
			want := p.Min + time.Duration(r*float64(ceil-p.Min))
			if got := p.Delay(i); got != want {
				t.Errorf("rand %v: retry %d in %s, want %s", r, i+1, got, want)
			}
		}
	}
	for i := range 20 {
		if d := webhook.Backoff(i + 1); d < 30*time.Second || d > time.Hour {
			t.Errorf("Backoff(%d) = %s, outside [30s, 1h]", i+1, d)
		}
	}
}
