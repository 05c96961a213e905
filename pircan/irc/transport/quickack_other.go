//go:build !linux

package transport

import "syscall"

// quickAck is Linux's TCP_QUICKACK (quickack_linux.go); elsewhere the
// kernel's own acknowledgement policy stands.
func quickAck(syscall.RawConn) {}
