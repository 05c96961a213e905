package bot_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"github.com/creatimus/pircan/internal/latency"
	"testing"
	"time"

	"github.com/ergochat/irc-go/ircmsg"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/echobot"
	"github.com/creatimus/pircan/internal/ircnet"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/irc/transport"
)

// BenchmarkRoundTrip measures the latency of one request/reply over the
// real loopback IRC network (InspIRCd + Anope, TLS), one round trip at a
// time, from the same registered client:
//
//   - echo-floor: a PRIVMSG to an echo bot (internal/echobot: the same
//     client library, TLS, SASL and OPER as PIRCAN, no work, no pacing),
//     which answers with a NOTICE of the same text. This is the floor: two
//     hops through the IRC server and two TLS links.
//   - pircan-whoami: `PIRCAN/1 WHOAMI` to PIRCAN, which answers with one
//     NOTICE (request limit, parse, one SELECT of the agent, encode, pacer).
//
// Both report p50-ms and p99-ms besides ns/op (the mean).
//
// Raised for this benchmark, so that it measures latency, not throttling:
//
//   - output pacing: the spec's 5-line burst then 2 lines/s per recipient
//     would hold sequential replies to one client at ~500 ms each, so the bot
//     runs with a practically unlimited per-recipient and global pacer;
//
//   - the per-account request limit (spec: 20 per minute) is raised to
//     10^9 per minute.
//
//     go test -run='^$' -bench=RoundTrip -benchtime=3s ./pircan/bot/
func BenchmarkRoundTrip(b *testing.B) {
	limits := pircan.DefaultLimits
	limits.PerCaller = 1_000_000_000
	bot := bottest.Start(b, bottest.Options{
		Limits: limits,
		Pacing: transport.PacerConfig{Burst: 1 << 20, PerSecond: 1e9, GlobalBurst: 1 << 20, GlobalRate: 1e9, MaxQueued: 500},
	})
	agent := bot.Agents(b, "rtt", 1)[0]
	agent.Hello(`{"name":"Round Trip","capabilities":["bench"]}`)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	echoNick := bottest.Unique("echo")
	var pw [8]byte
	_, _ = rand.Read(pw[:])
	password := hex.EncodeToString(pw[:])
	if err := ircnet.RegisterAccount(ctx, bot.Net, echoNick, password); err != nil {
		b.Fatalf("echo bot account: %v", err)
	}
	echo, err := echobot.Start(ctx, bot.Net.TLSAddr(), bot.Net.CertFile, echoNick, echoNick, password,
		bot.Net.BotOperName, bot.Net.BotOperPass)
	if err != nil {
		b.Fatal(err)
	}
	defer echo.Close()

	const request = "PIRCAN/1 WHOAMI" // the same bytes to both bots
	b.Run("echo-floor", func(b *testing.B) {
		roundTrips(b, agent.Client, echo.Nick(), request, func(m ircmsg.Message) string {
			if m.Params[1] != request {
				return "echo changed the text: " + m.Params[1]
			}
			return ""
		})
	})
	b.Run("pircan-whoami", func(b *testing.B) {
		roundTrips(b, agent.Client, bot.Nick, request, func(m ircmsg.Message) string {
			r, err := bottest.ParseReply(m.Params[1])
			if err != nil {
				return err.Error()
			}
			if r.Verb != "WHOAMI" {
				return "not a WHOAMI reply: " + r.Raw
			}
			return ""
		})
	})
}

// roundTrips sends text to target from c and waits for target's NOTICE,
// b.N times in sequence; check says what is wrong with a reply ("" if
// nothing), outside the timed part.
func roundTrips(b *testing.B, c *ircnet.Client, target, text string, check func(ircmsg.Message) string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	me, from := pircan.RFC1459.Fold(c.Nick()), pircan.RFC1459.Fold(target)
	reply := func(m ircmsg.Message) bool {
		return m.Command == "NOTICE" && len(m.Params) == 2 &&
			pircan.RFC1459.Fold(m.Nick()) == from && pircan.RFC1459.Fold(m.Params[0]) == me
	}
	once := func() (time.Duration, ircmsg.Message) {
		start := time.Now()
		if err := c.Privmsg(target, text); err != nil {
			b.Fatal(err)
		}
		m, err := c.Expect(ctx, reply)
		d := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		return d, m
	}
	for range 20 { // warm up: connections, caches, the first plan
		if _, m := once(); check(m) != "" {
			b.Fatal(check(m))
		}
	}
	var durs []time.Duration
	for b.Loop() {
		d, m := once()
		durs = append(durs, d)
		if problem := check(m); problem != "" {
			b.Fatal(problem)
		}
	}
	b.ReportMetric(latency.Millis(latency.Percentile(durs, 50)), "p50-ms")
	b.ReportMetric(latency.Millis(latency.Percentile(durs, 99)), "p99-ms")
}
