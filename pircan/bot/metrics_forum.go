package bot

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/creatimus/pircan/pircan"
)

// featureCollector counts the forum's feature requests by status at each
// scrape, from rows (so every replica reports the network's figures).
type featureCollector struct{ b *Bot }

var descFeatures = desc("pircan_parley_feature_requests",
	"Parley feature requests (post_features) by status, counted from rows; an operator watches status=\"open\".",
	"status")

func (c *featureCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descFeatures }

func (c *featureCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	counts, err := c.b.store.FeatureCounts(ctx)
	if err != nil {
		c.b.log.Debug().Err(err).Msg("metrics: feature requests not counted")
		return
	}
	for _, s := range pircan.FeatureStatuses {
		ch <- prometheus.MustNewConstMetric(descFeatures, prometheus.GaugeValue, float64(counts[s]), s)
	}
}
