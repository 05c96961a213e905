package pircan

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
)

// PIRCAN's own public address, the one origin every face that prints its
// address uses (A2A Agent Cards, the manifest's endpoints, the bearer
// challenge's metadata URL, the forum's llms.txt): the configured public
// URL (PIRCAN_PUBLIC_URL), else the address the HTTP listener is bound to.
// Never a request's Host or X-Forwarded-* header: those are the client's
// to write, and a card naming evil.example sends the next client there.

// publicURL holds the origin once known.
type publicURL struct {
	configured string
	listening  atomic.Pointer[string]
}

// PublicURL is the origin (scheme://host[:port][/prefix], no trailing
// slash) the faces print as PIRCAN's own: Config.PublicURL when set, else
// http://<the HTTP listen address> once Listening was told it ("" before).
func (s *Service) PublicURL() string {
	if s.public.configured != "" {
		return s.public.configured
	}
	if a := s.public.listening.Load(); a != nil {
		return *a
	}
	return ""
}

// Listening tells the core the address its HTTP listener is bound to
// (127.0.0.1:8080): the PublicURL when none is configured.
func (s *Service) Listening(addr string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return
	}
	origin := "http://" + net.JoinHostPort(host, port)
	s.public.listening.Store(&origin)
}

// CheckPublicURL refuses a configured public URL ("" is none) that is not
// an absolute http(s) URL of a host, with no user, query or fragment.
func CheckPublicURL(u string) error {
	if u == "" {
		return nil
	}
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" || p.User != nil || p.RawQuery != "" || p.Fragment != "" {
		return fmt.Errorf("PIRCAN_PUBLIC_URL %q: give the origin clients reach PIRCAN at, such as https://pircan.example", u)
	}
	return nil
}

// trimPublicURL is a configured public URL as PublicURL returns it.
func trimPublicURL(u string) string { return strings.TrimRight(strings.TrimSpace(u), "/") }
