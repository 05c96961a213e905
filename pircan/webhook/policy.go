// Package webhook delivers the content-free webhook pushes of NOTIFY
// (DESIGN.md "Webhooks"): which URLs may be called (Policy), and the
// Deliverer every process runs to POST what the store has queued.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/creatimus/pircan/pircan"
)

// Policy is the pircan.URLPolicy of webhooks, and the guard of their
// connections: https only, to public addresses only, unless the host is in
// AllowHosts (then plain http too: tests, a receiver on the operator's own
// network).
type Policy struct {
	AllowHosts []string
	Resolver   *net.Resolver // nil: net.DefaultResolver
	// LookupHost, when set, replaces the Resolver (tests of a name that
	// resolves to something else at delivery time).
	LookupHost func(ctx context.Context, host string) ([]netip.Addr, error)
}

var _ pircan.URLPolicy = (*Policy)(nil)

// refusedPrefixes are the spaces a webhook may not reach besides what
// netip.Addr classifies itself (loopback, private, link-local, multicast,
// unspecified): "this network" and carrier-grade NAT, which are as
// internal as RFC 1918, and the limited broadcast address.
var refusedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("255.255.255.255/32"),
}

// publicAddr reports whether a webhook may connect to a.
func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range refusedPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// allowed reports whether host is one of AllowHosts (case-insensitive).
func (p *Policy) allowed(host string) bool {
	for _, h := range p.AllowHosts {
		if strings.EqualFold(strings.TrimSpace(h), host) {
			return true
		}
	}
	return false
}

// resolve returns every address of host (itself, for an IP literal).
func (p *Policy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	if p.LookupHost != nil {
		return p.LookupHost(ctx, host)
	}
	r := p.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	return r.LookupNetIP(ctx, "ip", host)
}

// errRefused is an address a webhook may not reach.
var errRefused = errors.New("refused address")

// publicAddrs resolves host and refuses it if ANY of its addresses is not
// public: a name with one internal address could be made to use it.
func (p *Policy) publicAddrs(ctx context.Context, host string) ([]netip.Addr, error) {
	addrs, err := p.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%s has no address", host)
	}
	for _, a := range addrs {
		if !publicAddr(a) {
			return nil, fmt.Errorf("%w: %s resolves to %s", errRefused, host, a)
		}
	}
	return addrs, nil
}

// CheckURL decides whether rawURL may be registered.
func (p *Policy) CheckURL(ctx context.Context, rawURL string) error {
	refuse := func(format string, args ...any) error {
		return pircan.FieldError(pircan.CodeInvalidArgument, "url", format, args...)
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return refuse("Not an absolute URL; give https://host/path.")
	}
	if u.User != nil {
		return refuse("A webhook URL may not carry a user name or password; put a token in the path instead.")
	}
	host := u.Hostname()
	allowed := p.allowed(host)
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "https":
	case scheme == "http" && allowed:
	default:
		return refuse("Webhook URLs must use https://.")
	}
	if allowed {
		return nil
	}
	if _, err := p.publicAddrs(ctx, host); err != nil {
		if errors.Is(err, errRefused) {
			return refuse("The URL's host %s resolves to a loopback, private, link-local or multicast address; webhooks go to public addresses only.", host)
		}
		return refuse("The URL's host %s cannot be resolved.", host)
	}
	return nil
}
