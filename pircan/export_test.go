package pircan

import "github.com/creatimus/pircan/internal/expiring"

// Hooks into the per-minute leases (admission_test.go).

// SetLeaseLimit empties the lease table and bounds it to n windows.
func (s *Service) SetLeaseLimit(n int) {
	s.admissions.mu.Lock()
	defer s.admissions.mu.Unlock()
	s.admissions.leases = expiring.New[lease](s.cfg.Limits.Window, n)
}

// Leases is how many windows the table holds.
func (s *Service) Leases() int {
	s.admissions.mu.Lock()
	defer s.admissions.mu.Unlock()
	return s.admissions.leases.Len()
}
