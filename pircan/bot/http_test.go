package bot_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/ircnet"
	"github.com/creatimus/pircan/internal/pgtest"
	"github.com/creatimus/pircan/pircan"
	pircanbot "github.com/creatimus/pircan/pircan/bot"
	"github.com/creatimus/pircan/pircan/irc/transport"
)

var httpClient = &http.Client{Timeout: 10 * time.Second}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := httpClient.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

func readyz(t *testing.T, bot *bottest.Bot) (int, pircanbot.Readiness) {
	t.Helper()
	code, body := get(t, bot.HTTPURL+"/readyz")
	var r pircanbot.Readiness
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("readyz body %q: %v", body, err)
	}
	return code, r
}

// ready is readyz's body without output_capped, which depends on when the
// server answers OPER (TestStatedOutputExemption and the OPER tests assert
// it).
func ready(r pircanbot.Readiness) pircanbot.Readiness {
	r.OutputCapped = false
	return r
}

// waitReady polls /readyz until it answers want, and returns the last body.
func waitReady(t *testing.T, bot *bottest.Bot, want int) pircanbot.Readiness {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, r := readyz(t, bot)
		if code == want {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz: %d %+v, want %d", code, r, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Health and readiness while serving, while the database is down, and
// after it is back; ServeHTTP ends cleanly with its context.
func TestHTTPHealthAndReady(t *testing.T) {
	t.Parallel()
	pg := pgtest.StartCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn, cleanup, err := pgtest.NewDatabase(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	bot := bottest.Start(t, bottest.Options{DSN: dsn, HTTPAddr: "127.0.0.1:0"})

	if code, body := get(t, bot.HTTPURL+"/healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Fatalf("healthz: %d %q", code, body)
	}
	if r := waitReady(t, bot, 200); ready(r) != (pircanbot.Readiness{IRC: true, Database: true, Schema: true}) {
		t.Fatalf("ready: %+v", r)
	}

	pg.Stop()
	code, r := readyz(t, bot)
	if code != http.StatusServiceUnavailable || r.Database || r.Schema || !r.IRC || r.Standby {
		t.Fatalf("readyz with the database down: %d %+v", code, r)
	}
	if code, _ := get(t, bot.HTTPURL+"/healthz"); code != 200 {
		t.Fatalf("healthz with the database down: %d", code)
	}
	// Metrics still answer, saying the database is away.
	families := scrape(t, bot)
	if v := gaugeValue(t, families, "pircan_database_up"); v != 0 {
		t.Fatalf("pircan_database_up with the database down: %v", v)
	}
	if _, ok := families["pircan_notify_waiting"]; ok {
		t.Fatal("pircan_notify_waiting reported with the database down")
	}

	pg.Start()
	if r := waitReady(t, bot, 200); ready(r) != (pircanbot.Readiness{IRC: true, Database: true, Schema: true}) {
		t.Fatalf("ready again: %+v", r)
	}

	// A second server on its own context ends cleanly when it is cancelled;
	// an address in use is an error at once.
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bot.ServeHTTP(sctx, "127.0.0.1:0") }()
	first := bot.HTTPURL
	for deadline := time.Now().Add(5 * time.Second); "http://"+bot.HTTPAddr() == first; {
		if time.Now().After(deadline) {
			t.Fatal("second ServeHTTP did not listen")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, _ := get(t, "http://"+bot.HTTPAddr()+"/healthz"); code != 200 {
		t.Fatalf("second server healthz: %d", code)
	}
	if err := bot.ServeHTTP(context.Background(), strings.TrimPrefix(first, "http://")); err == nil {
		t.Fatal("ServeHTTP on an address in use returned nil")
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeHTTP after its context ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeHTTP did not return after its context ended")
	}
	if c, err := net.DialTimeout("tcp", bot.HTTPAddr(), time.Second); err == nil {
		c.Close()
		t.Fatal("the stopped server still accepts connections")
	}
}

// A standby process is alive but not ready.
func TestReadyStandby(t *testing.T) {
	t.Parallel()
	bottest.EachNetwork(t, testReadyStandby)
}

func testReadyStandby(t *testing.T, kind ircnet.Kind) {
	t.Parallel()
	primary := bottest.Start(t, bottest.Options{Kind: kind, HTTPAddr: "127.0.0.1:0"})
	standby := bottest.StartStandby(t, primary, bottest.Options{Kind: kind, HTTPAddr: "127.0.0.1:0"})
	if r := waitReady(t, primary, 200); r.Standby {
		t.Fatalf("primary: %+v", r)
	}
	deadline := time.Now().Add(15 * time.Second)
	for !standby.Standby() {
		if time.Now().After(deadline) {
			t.Fatal("the second process never stood by")
		}
		time.Sleep(20 * time.Millisecond)
	}
	code, r := readyz(t, standby)
	if code != http.StatusServiceUnavailable || ready(r) != (pircanbot.Readiness{Database: true, Schema: true, Standby: true}) {
		t.Fatalf("standby readyz: %d %+v", code, r)
	}
	if code, _ := get(t, standby.HTTPURL+"/healthz"); code != 200 {
		t.Fatalf("standby healthz: %d", code)
	}
	if v := gaugeValue(t, scrape(t, standby), "pircan_standby"); v != 1 {
		t.Fatalf("pircan_standby of the standby: %v", v)
	}
}

// /metrics counts requests by verb and code, times them, and reports the
// connection, the output and the pool.
func TestMetrics(t *testing.T) {
	t.Parallel()
	limits := pircan.DefaultLimits
	limits.PerCaller = 5 // the 6th request in a minute trips the limit, the 7th is dropped
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0", Limits: limits})
	a := bot.Agents(t, "metrics", 1)[0]
	a.Hello("")
	if r := a.Ask(`PIRCAN/1 FROBNICATE`); r.Code() != "unknown_verb" {
		t.Fatalf("unknown verb: %s", r.Raw)
	}
	for range 3 {
		if r := a.Ask(`PIRCAN/1 ECHO`); r.Verb != "ECHO" {
			t.Fatalf("ECHO: %s", r.Raw)
		}
	}
	if r := a.Ask(`PIRCAN/1 ECHO`); r.Code() != "rate_limited" {
		t.Fatalf("6th request: %s", r.Raw)
	}
	a.Send(`PIRCAN/1 ECHO`) // dropped without a reply

	want := map[[2]string]float64{
		{"HELLO", "ok"}:                  1,
		{"unknown", "unknown_verb"}:      1,
		{"ECHO", "ok"}:                   3,
		{"ECHO", "rate_limited"}:         1,
		{"ECHO", "rate_limited_silent"}:  1,
		{"ECHO", "internal_error"}:       0,
		{"HELLO", "rate_limited_silent"}: 0,
	}
	var families map[string]*dto.MetricFamily
	deadline := time.Now().Add(10 * time.Second)
	for {
		families = scrape(t, bot)
		if requestCount(families, "ECHO", "rate_limited_silent") == 1 || time.Now().After(deadline) {
			break // the dropped request has no reply to wait for
		}
		time.Sleep(50 * time.Millisecond)
	}
	if f := families["pircan_requests_total"]; f == nil || f.GetType() != dto.MetricType_COUNTER {
		t.Fatalf("pircan_requests_total: %v", f)
	}
	for k, n := range want {
		if got := requestCount(families, k[0], k[1]); got != n {
			t.Errorf("pircan_requests_total{verb=%q,code=%q} = %v, want %v", k[0], k[1], got, n)
		}
	}
	if got := counterValue(t, families, "pircan_rate_limit_trips_total"); got != 1 {
		t.Errorf("pircan_rate_limit_trips_total = %v, want 1", got)
	}
	// Every answered request is timed; the dropped one is not.
	var timed uint64
	for _, m := range family(t, families, "pircan_request_seconds", dto.MetricType_HISTOGRAM).GetMetric() {
		timed += m.GetHistogram().GetSampleCount()
		if label(m, "verb") == "ECHO" && m.GetHistogram().GetSampleCount() != 4 {
			t.Errorf("ECHO timed %d times, want 4", m.GetHistogram().GetSampleCount())
		}
	}
	if timed != 6 {
		t.Errorf("pircan_request_seconds count = %d, want 6", timed)
	}

	if v := gaugeValue(t, families, "pircan_irc_connected"); v != 1 {
		t.Errorf("pircan_irc_connected = %v", v)
	}
	// The test network grants the bot's OPER a fake-lag exemption: the
	// configured cap is in force.
	if v := gaugeValue(t, families, "pircan_output_cap_lines_per_second"); v != transport.DefaultPacing.GlobalRate {
		t.Errorf("pircan_output_cap_lines_per_second = %v, want %v", v, transport.DefaultPacing.GlobalRate)
	}
	if v := counterValue(t, families, "pircan_irc_reconnects_total"); v != 0 {
		t.Errorf("pircan_irc_reconnects_total = %v", v)
	}
	if v := counterValue(t, families, "pircan_output_lines_total"); v < 6 {
		t.Errorf("pircan_output_lines_total = %v, want at least the 6 replies", v)
	}
	if v := gaugeValue(t, families, "pircan_output_queue_lines"); v < 0 {
		t.Errorf("pircan_output_queue_lines = %v", v)
	}
	if v := counterValue(t, families, "pircan_output_dropped_lines_total"); v != 0 {
		t.Errorf("pircan_output_dropped_lines_total = %v", v)
	}
	if v := gaugeValue(t, families, "pircan_standby"); v != 0 {
		t.Errorf("pircan_standby = %v", v)
	}
	if v := gaugeValue(t, families, "pircan_database_up"); v != 1 {
		t.Errorf("pircan_database_up = %v", v)
	}
	if v := gaugeValue(t, families, "pircan_notify_waiting"); v < 0 {
		t.Errorf("pircan_notify_waiting = %v", v)
	}
	if v := gaugeValue(t, families, "pircan_db_pool_total_conns"); v < 1 {
		t.Errorf("pircan_db_pool_total_conns = %v", v)
	}
	if v := gaugeValue(t, families, "pircan_db_pool_max_conns"); v < 1 {
		t.Errorf("pircan_db_pool_max_conns = %v", v)
	}
	if v := counterValue(t, families, "pircan_db_pool_acquires_total"); v < 1 {
		t.Errorf("pircan_db_pool_acquires_total = %v", v)
	}
	for _, name := range []string{"pircan_db_pool_acquired_conns", "pircan_db_pool_idle_conns"} {
		gaugeValue(t, families, name)
	}
	for _, name := range []string{"pircan_db_pool_acquire_seconds_total", "pircan_db_pool_empty_acquires_total",
		"pircan_db_pool_canceled_acquires_total", "pircan_irc_events_dropped_total"} {
		counterValue(t, families, name)
	}
	gaugeValue(t, families, "pircan_irc_events_queued")
	family(t, families, "go_goroutines", dto.MetricType_GAUGE)

	// A notification waiting for an agent that is not online shows in the backlog.
	b := bot.Agents(t, "metricsb", 1)[0]
	idB := b.Hello("")
	b.Close()
	if err := bot.Store().NotifyAgent(context.Background(), idB, pircan.NotifyMessage); err != nil {
		t.Fatal(err)
	}
	if v := gaugeValue(t, scrape(t, bot), "pircan_notify_waiting"); v < 1 {
		t.Errorf("pircan_notify_waiting after a notification for an absent agent = %v", v)
	}
}

func scrape(t *testing.T, bot *bottest.Bot) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := get(t, bot.HTTPURL+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	return families
}

func family(t *testing.T, families map[string]*dto.MetricFamily, name string, typ dto.MetricType) *dto.MetricFamily {
	t.Helper()
	f := families[name]
	if f == nil || len(f.GetMetric()) == 0 {
		t.Fatalf("metric %s missing", name)
	}
	if f.GetType() != typ {
		t.Fatalf("metric %s is a %v, want %v", name, f.GetType(), typ)
	}
	return f
}

func gaugeValue(t *testing.T, families map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	return family(t, families, name, dto.MetricType_GAUGE).GetMetric()[0].GetGauge().GetValue()
}

func counterValue(t *testing.T, families map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	return family(t, families, name, dto.MetricType_COUNTER).GetMetric()[0].GetCounter().GetValue()
}

func requestCount(families map[string]*dto.MetricFamily, verb, code string) float64 {
	for _, m := range families["pircan_requests_total"].GetMetric() {
		if label(m, "verb") == verb && label(m, "code") == code {
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// With a metrics address, /metrics is served there alone and the public
// listener (portal, health) answers it 404.
func TestMetricsOnTheirOwnListener(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0"})
	if bot.MetricsURL == bot.HTTPURL {
		t.Fatalf("one listener for both: %s", bot.MetricsURL)
	}
	if code, _ := get(t, bot.HTTPURL+"/metrics"); code != http.StatusNotFound {
		t.Errorf("public /metrics: %d, want 404", code)
	}
	if code, body := get(t, bot.HTTPURL+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("public /healthz: %d %q", code, body)
	}
	code, body := get(t, bot.MetricsURL+"/metrics")
	if code != http.StatusOK || !strings.Contains(body, "pircan_irc_connected 1") {
		t.Errorf("metrics listener /metrics: %d, pircan_irc_connected 1 in body: %v", code, strings.Contains(body, "pircan_irc_connected 1"))
	}
	for _, path := range []string{"/healthz", "/owner"} {
		if code, _ := get(t, bot.MetricsURL+path); code != http.StatusNotFound {
			t.Errorf("metrics listener %s: %d, want 404", path, code)
		}
	}
}

// FIND's totals for a text are counted by way on /metrics: over a small
// directory, by the first look alone (store/find.go).
func TestFindCountMetrics(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0"})
	a := bot.Agents(t, "findmetric", 1)[0]
	a.Hello("")
	if _, end := a.AskList(`PIRCAN/1 FIND {"q":"findmetric"}`); end.Int("total") != 1 {
		t.Fatalf("FIND-END: %s", end.Raw)
	}
	if _, end := a.AskList(`PIRCAN/1 FIND {"capability":"none-such"}`); end.Int("total") != 0 {
		t.Fatalf("FIND-END by capability: %s", end.Raw) // not a text: not counted there
	}
	got := map[string]float64{}
	for _, m := range family(t, scrape(t, bot), "pircan_find_text_counts_total", dto.MetricType_COUNTER).GetMetric() {
		got[label(m, "way")] = m.GetCounter().GetValue()
	}
	if want := map[string]float64{"sample": 1, "walk": 0, "index": 0}; !maps.Equal(got, want) {
		t.Fatalf("pircan_find_text_counts_total: %v, want %v", got, want)
	}
}
