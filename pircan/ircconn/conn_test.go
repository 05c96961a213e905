package ircconn

import (
	"bufio"
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// scriptedServer is a minimal IRC server that offers only the given caps:
// enough to see what PIRCAN does when a real server lacks account-tag
// (no server package here can be configured without it).
func scriptedServer(t *testing.T, caps string) (addr string, connections *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	connections = &atomic.Int32{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			connections.Add(1)
			go serveScript(c, caps)
		}
	}()
	return l.Addr().String(), connections
}

func serveScript(c net.Conn, caps string) {
	defer c.Close()
	r := bufio.NewScanner(c)
	nick := "*"
	for r.Scan() {
		f := strings.Fields(r.Text())
		if len(f) == 0 {
			continue
		}
		send := func(s string) { _, _ = c.Write([]byte(s + "\r\n")) }
		switch f[0] {
		case "CAP":
			switch {
			case len(f) > 1 && f[1] == "LS":
				send(":srv CAP * LS :" + caps)
			case len(f) > 1 && f[1] == "REQ":
				send(":srv CAP * ACK :" + strings.TrimPrefix(strings.Join(f[2:], " "), ":"))
			}
		case "NICK":
			nick = f[1]
			send(":srv 001 " + nick + " :Welcome")
			send(":srv 422 " + nick + " :No MOTD")
		case "QUIT":
			send("ERROR :Closing link")
			return
		}
	}
}

func TestRefusesToServeWithoutAccountTag(t *testing.T) {
	addr, connections := scriptedServer(t, "message-tags server-time")
	c := New(Config{Server: addr, Nick: "PIRCAN", BackoffMin: 50 * time.Millisecond, BackoffMax: 100 * time.Millisecond},
		zerolog.New(zerolog.NewTestWriter(t)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, "bye") }()
	deadline := time.Now().Add(10 * time.Second)
	for connections.Load() < 3 {
		if c.Registered() {
			t.Fatal("serving without account-tag")
		}
		if time.Now().After(deadline) {
			t.Fatalf("expected repeated attempts, got %d", connections.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	select {
	case e := <-c.Events():
		t.Fatalf("no event may be delivered without account-tag, got %+v", e)
	default:
	}
}

func TestServesWithAccountTag(t *testing.T) {
	addr, _ := scriptedServer(t, "account-tag message-tags server-time")
	c := New(Config{Server: addr, Nick: "PIRCAN"}, zerolog.New(zerolog.NewTestWriter(t)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx, "bye")
	select {
	case e := <-c.Events():
		if e.Kind != Connected || !c.Registered() {
			t.Fatalf("first event: %+v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("never connected")
	}
}
