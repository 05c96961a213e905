//go:build linux

package transport

import (
	"net"
	"syscall"
	"testing"
)

// quickAck sets TCP_QUICKACK on the socket (until the kernel next clears
// it: here, before anything was read).
func TestQuickAckSetsTheOption(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	get := func() int {
		v := -1
		if err := rc.Control(func(fd uintptr) {
			v, err = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK)
		}); err != nil {
			t.Fatal(err)
		}
		return v
	}
	_ = rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 0) })
	if v := get(); v != 0 {
		t.Fatalf("TCP_QUICKACK %d after clearing it", v)
	}
	quickAck(rc)
	if v := get(); v != 1 {
		t.Fatalf("TCP_QUICKACK %d after quickAck, want 1", v)
	}
}
