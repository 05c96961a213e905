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
}

// Service is the protocol core.
type Service struct {
	store      Store
	counter    RequestCounter // nil: the store counts no requests (tests)
	admissions *admissions    // the per-minute leases (admission.go)
	cfg        Config
	log        zerolog.Logger
	reads      *reads // INBOX messages in flight (inflight.go)
}

// NewService wires the core to its store.
func NewService(store Store, cfg Config, log zerolog.Logger) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Service{store: store, cfg: cfg, log: log, reads: newReads(store, log, cfg.Now),
		admissions: newAdmissions(cfg.Limits.Window)}
	s.counter, _ = store.(RequestCounter)
	return s
}

// Limits are the limits in force.
func (s *Service) Limits() Limits { return s.cfg.Limits }
