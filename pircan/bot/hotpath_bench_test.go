package bot_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/internal/ircscript"
	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	pircanbot "github.com/creatimus/pircan/pircan/bot"
	"github.com/creatimus/pircan/pircan/irc/transport"
)

// BenchmarkWhoamiPath is the bot's own CPU and allocations per WHOAMI on
// the IRC path, end to end and in process: a scripted IRC server
// (internal/ircscript, plain TCP on loopback) writes PRIVMSG lines with the
// account tag, irc-go reads and parses them, the transport queues them in
// its lanes, the dispatcher runs them per sender, the face parses, reads
// the caller's agent (the agent cache) and encodes, the pacer writes the
// NOTICE, and the server reads it. No IRC server, no TLS and no database
// round trip on the way (the agent cache holds every caller): what is left
// is PIRCAN's work per request (issue 24 target 1, "CPU per request").
//
// Each op is one request and its reply; `agents` registered senders ask in
// turn, with up to `window` requests outstanding (1: one at a time; 64: a
// flood from many senders, as at the knee). Per-recipient pacing is lifted
// as in the knee runs (PIRCAN_REPLY_RATE=1000) and the per-account limit
// raised. allocs/op and cpu-ns/op (CPU time used by the process, all
// threads, per op: wall time is noise on a shared machine) count the whole
// process, the scripted server's reading and this loop included.
//
//	go test -run='^$' -bench=WhoamiPath -benchmem ./pircan/bot/
func BenchmarkWhoamiPath(b *testing.B) {
	const agents = 256
	limits := pircan.DefaultLimits
	limits.PerCaller = 1_000_000_000
	limits.RegistrationsHour = 1_000_000
	srv := ircscript.Start(b, ircscript.Script{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := pircanbot.Config{DatabaseURL: pgtest.Database(b), Limits: limits, IRC: transport.Config{
		Server: srv.Addr, Nick: ircscript.Nick, SASLAccount: ircscript.Account, SASLPassword: ircscript.Password,
		Lobby: "#agents", OutputExempt: true,
		Pacing: transport.PacerConfig{Burst: 1000, PerSecond: 1000, GlobalBurst: 1 << 20, GlobalRate: 1e9, MaxQueued: 1000},
	}}
	bot, err := pircanbot.New(ctx, cfg, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx) }()
	defer func() { cancel(); <-done }()
	peer := srv.Next(b)
	lines := peer.Lines()
	// The bot's replies to the agents, counted; anything else it writes
	// (CAP, JOIN, MODE) is skipped.
	timer := time.NewTimer(time.Hour) // one for the whole run: time.After would allocate per reply
	replies := func(n int, want string) {
		timer.Reset(30 * time.Second)
		timeout := timer.C
		for n > 0 {
			select {
			case l, ok := <-lines:
				if !ok {
					b.Fatal("the bot left")
				}
				if strings.HasPrefix(l, "NOTICE ") {
					if !strings.Contains(l, want) {
						b.Fatalf("reply %q, want %s", l, want)
					}
					n--
				}
			case <-timeout:
				b.Fatalf("%d replies missing", n)
			}
		}
	}
	for !bot.Conn().Online() {
		time.Sleep(10 * time.Millisecond)
	}
	requests := make([]string, agents)
	for i := range agents {
		id := fmt.Sprintf("hp%d", i)
		peer.Send(fmt.Sprintf(`@account=%s :%s!u@h PRIVMSG %s :PIRCAN/1 HELLO {"name":"Hot Path %d","capabilities":["bench"]}`,
			id, id, ircscript.Nick, i))
		requests[i] = fmt.Sprintf("@account=%s :%s!u@h PRIVMSG %s :PIRCAN/1 WHOAMI\r\n", id, id, ircscript.Nick)
	}
	replies(agents, "PIRCAN/1 HELLO ")
	for _, window := range []int{1, 64} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) {
			send := func(i int) {
				if _, err := peer.Conn.Write([]byte(requests[i%agents])); err != nil {
					b.Fatal(err)
				}
			}
			for i := range 2 * agents { // warm: every agent in the cache, drainers started
				send(i)
			}
			replies(2*agents, "PIRCAN/1 WHOAMI ")
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU(b)
			sent, got := 0, 0
			for got < b.N {
				for sent < b.N && sent-got < window {
					send(sent)
					sent++
				}
				replies(1, "PIRCAN/1 WHOAMI ")
				got++
			}
			b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the CPU time this process has used (user and system, every
// thread): on a shared machine, a request's cost where wall time is noise.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
