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

// refusedPrefixes are the IPv4 spaces a webhook may not reach besides what
// netip.Addr classifies itself (loopback, private, link-local, multicast,
// unspecified), and the special-purpose blocks inside IPv6's global unicast
// 2000::/3: the rest of IANA's special-purpose registries that is not
// global unicast ("this network", carrier-grade NAT, protocol assignments,
// documentation, benchmarking, reserved, Teredo and its neighbours), which
// are as internal as RFC 1918 or route nowhere.
var refusedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"), // and 255.255.255.255
	netip.MustParsePrefix("2001::/23"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("3fff::/20"), // documentation (RFC 9637)
}

// globalUnicast is the only IPv6 space a webhook may reach (RFC 4291's
// global unicast, what IANA allocates to registries): everything outside
// it is special (loopback, IPv4-compatible ::a.b.c.d, SIIT ::ffff:0:a.b.c.d,
// unique local, link-local, site-local, multicast, discard, local-use
// NAT64) or unallocated, and several of those forms carry an IPv4 address
// a host or gateway would reach on the webhook's behalf.
var globalUnicast = netip.MustParsePrefix("2000::/3")

// IPv6 prefixes that carry an IPv4 address a gateway would reach on the
// webhook's behalf: NAT64's well-known prefix (the last 32 bits, RFC 6052;
// outside 2000::/3, yet routed by a network with a NAT64 gateway) and 6to4
// (bits 16–47, RFC 3056). Such an address is public only if the IPv4
// address in it is.
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// publicAddr reports whether a webhook may connect to a: an IPv4 address
// (or one mapped into IPv6, ::ffff:a.b.c.d) outside the internal and
// special spaces; an IPv6 address only in global unicast outside its
// special blocks, or NAT64 / 6to4 of a public IPv4 address.
func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	b := a.As16()
	switch {
	case a.Is6() && nat64Prefix.Contains(a):
		return publicAddr(netip.AddrFrom4([4]byte(b[12:16])))
	case a.Is6() && sixToFour.Contains(a):
		return publicAddr(netip.AddrFrom4([4]byte(b[2:6])))
	case a.Is6() && !globalUnicast.Contains(a):
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
