//go:build unix

package nodeclient

import (
	"os"
	"syscall"
)

// lockFile holds an exclusive flock on path until the returned func runs;
// the kernel drops it should the process die.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
