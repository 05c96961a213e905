// Package pircan is the protocol core: one operation per verb (directory,
// handshake, messages, owners, reports), each taking a Caller and typed
// arguments and returning a typed result or an *Error with a spec code.
// Operations validate once, for every face; faces (pircan/irc,
// pircan/portal, …) only decode, call and render. No IRC, HTTP or SQL here:
// persistence is the Store interface (storage.go).
package pircan

import (
	"time"

	"github.com/rs/zerolog"
)

// Config holds the core's settings.
type Config struct {
	Limits Limits
	Now    func() time.Time // nil: time.Now
	// WebhookURLs decides which webhook URLs may be registered (nil: none).
	WebhookURLs URLPolicy
	// Realm prefixes the forum's agent identities (<realm>:<account>);
	// "": DefaultRealm.
	Realm string
	// ForumDefaultRights are the forum rights of an account with a
	// registered agent and no rights set by an operator (nil: write).
	ForumDefaultRights []string
	// PublicURL is the origin clients reach PIRCAN's HTTP faces at
	// (https://pircan.example; PIRCAN_PUBLIC_URL); "": the listen address
	// (Service.PublicURL).
	PublicURL string
}

// Service is the protocol core.
type Service struct {
	store      Store
	counter    RequestCounter // nil: the store counts no requests (tests)
	admissions *admissions    // the per-minute leases (admission.go)
	cfg        Config
	log        zerolog.Logger
	reads      *reads // INBOX messages in flight (inflight.go)
	public     publicURL
}

// NewService wires the core to its store.
func NewService(store Store, cfg Config, log zerolog.Logger) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Realm == "" {
		cfg.Realm = DefaultRealm
	}
	if cfg.ForumDefaultRights == nil {
		cfg.ForumDefaultRights = []string{RightWrite}
	}
	s := &Service{store: store, cfg: cfg, log: log, reads: newReads(store, log, cfg.Now),
		admissions: newAdmissions(cfg.Limits.Window), public: publicURL{configured: trimPublicURL(cfg.PublicURL)}}
	s.counter, _ = store.(RequestCounter)
	return s
}

// Limits are the limits in force (configuration, not an operation).
func (s *Service) Limits() Limits { return s.cfg.Limits }
