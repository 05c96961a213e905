package loadgen_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/loadgen"
)

func TestMain(m *testing.M) { bottest.Main(m) }

type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestSmallLoad runs the default mix with 10 agents for 5 s against a real
// PIRCAN with the spec's limits and pacing (bottest's defaults) and the
// default rate, with an echo bot that the load generator starts itself:
// nothing may be lost, refused or disconnected, and every verb of the mix
// (and the ACCEPTs its CONTACTs lead to) and both floors must be measured.
func TestSmallLoad(t *testing.T) {
	bot := bottest.Start(t, bottest.Options{})
	n := bot.Net
	var pw [8]byte
	_, _ = rand.Read(pw[:])
	echoNick := bottest.Unique("echo")
	mix, err := loadgen.ParseMix(loadgen.DefaultMix)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var trace bytes.Buffer
	res, err := loadgen.Run(ctx, loadgen.Config{
		Server: n.TLSAddr(), CAFile: n.CertFile, BotNick: bot.Nick,
		Agents: 10, NickPrefix: bottest.Unique("lg"), Password: "pw-" + hex.EncodeToString(pw[:]), Register: true,
		Duration: 5 * time.Second, Mix: mix,
		Echo: loadgen.EchoConfig{Nick: echoNick, SASLAccount: echoNick, SASLPassword: hex.EncodeToString(pw[:]),
			OperName: n.BotOperName, OperPassword: n.BotOperPass},
		Progress: logWriter{t}, Trace: &trace,
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
	if res.Lost != 0 || len(res.Disconnects) != 0 {
		t.Errorf("lost %d, disconnects %v", res.Lost, res.Disconnects)
	}
	want := []string{"accept"}
	for _, e := range mix {
		want = append(want, e.Verb)
	}
	for _, v := range want {
		s := res.Verb(v)
		if s == nil || s.OK == 0 || s.P50Ms <= 0 {
			t.Errorf("verb %s not measured: %+v", v, s)
		}
	}
	for name, f := range map[string]*loadgen.VerbStats{"echo": res.EchoFloor, "NickServ INFO": res.NickServFloor} {
		if f == nil || f.OK == 0 || f.Lost != 0 || f.P50Ms <= 0 {
			t.Errorf("%s floor not measured: %+v", name, f)
		}
	}
	if res.WhoamiVsEcho == nil || res.WhoamiVsInfo == nil {
		t.Error("no WHOAMI ratio to the floors")
	}
	if res.Throughput <= 0 {
		t.Errorf("throughput %v", res.Throughput)
	}
	if _, err := json.Marshal(res); err != nil {
		t.Error(err)
	}
	// One trace line per timed request: the load, its ACCEPTs and both floors.
	wantLines := res.Sent + res.EchoFloor.Sent + res.NickServFloor.Sent
	if got := strings.Count(trace.String(), "\n"); got != wantLines {
		t.Errorf("%d trace lines, want %d", got, wantLines)
	}
}

func TestParseMix(t *testing.T) {
	m, err := loadgen.ParseMix("whoami=4, find=2,contact,send=0")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.String(); got != "whoami=4,find=2,contact=1" {
		t.Errorf("ParseMix = %s", got)
	}
	for _, bad := range []string{"", "whoami=0", "nope=1", "find=x", "find=-1", "find,find"} {
		if _, err := loadgen.ParseMix(bad); err == nil {
			t.Errorf("ParseMix(%q) accepted", bad)
		}
	}
}
