//go:build !unix

package nodeclient

// lockFile does not lock where flock is missing: sync.Once still keeps one
// test binary from installing twice.
func lockFile(string) (func(), error) { return func() {}, nil }
