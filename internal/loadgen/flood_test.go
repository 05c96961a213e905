package loadgen_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/loadgen"
)

// TestSmallFlood runs the flood mode briefly against a real PIRCAN: every
// nick is cycled, the probe's WHOAMIs are all answered, and the bot's RSS
// and flood counters are read from its /metrics.
func TestSmallFlood(t *testing.T) {
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0"})
	var pw [8]byte
	_, _ = rand.Read(pw[:])
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := loadgen.RunFlood(ctx, loadgen.FloodConfig{
		Server: bot.Net.TLSAddr(), CAFile: bot.Net.CertFile, BotNick: bot.Nick, Lobby: bot.Lobby,
		Conns: 3, Nicks: 60, Duration: 3 * time.Second, Baseline: time.Second, WhoamiEvery: 500 * time.Millisecond,
		Agent: bottest.Unique("probe"), Password: hex.EncodeToString(pw[:]), Register: true,
		MetricsURL: bot.HTTPURL + "/metrics", Progress: logWriter{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := res.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + table.String())
	if f := res.Failures(); len(f) > 0 {
		t.Errorf("failures: %v", f)
	}
	if res.NicksCycled != 60 {
		t.Errorf("%d nicks cycled, want 60", res.NicksCycled)
	}
	for name, p := range map[string]loadgen.PhaseStats{"baseline": res.Baseline, "flood": res.Flood} {
		if p.Sent == 0 || p.Answered != p.Sent || p.Lost != 0 || p.P50ms <= 0 {
			t.Errorf("%s: %+v", name, p)
		}
	}
	if res.RSSPeakMB <= 0 || res.RSSBeforeMB <= 0 {
		t.Errorf("RSS not read: %+v", res)
	}
	if _, ok := res.BotCounters[`pircan_lobby_welcomes_total{result="sent"}`]; !ok {
		t.Errorf("flood counters not read: %v", res.BotCounters)
	}
}
