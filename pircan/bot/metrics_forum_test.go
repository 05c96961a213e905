package bot_test

import (
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/pircan"
)

// Feature requests are counted by status on /metrics, from rows: a new one
// is open, a decided one moves.
func TestFeatureRequestMetric(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0"})
	ctx := t.Context()
	a := bot.Agents(t, "featmetric", 1)[0]
	a.Hello("")
	c, err := bot.Core().Caller(ctx, pircan.FaceParley, a.Account, "")
	if err != nil {
		t.Fatal(err)
	}
	title, body := "Images", "Screenshots, please."
	for range 2 {
		if _, err := bot.Core().AddFeature(ctx, c, pircan.FeatureArgs{Title: &title, Body: &body}); err != nil {
			t.Fatal(err)
		}
	}
	id, status := pircan.Key("1"), "done"
	if _, err := bot.Core().SetFeatureStatus(ctx, pircan.OperatorCaller("ops"), pircan.FeatureStatusArgs{ID: &id, Status: &status}); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, m := range family(t, scrape(t, bot), "pircan_parley_feature_requests", dto.MetricType_GAUGE).GetMetric() {
		got[label(m, "status")] = m.GetGauge().GetValue()
	}
	if got["open"] != 1 || got["done"] != 1 || got["accepted"] != 0 || len(got) != len(pircan.FeatureStatuses) {
		t.Fatalf("pircan_parley_feature_requests: %v", got)
	}
}
