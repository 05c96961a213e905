// Package latency holds the nearest-rank percentile that the benchmarks and
// the load generator report, so their p50/p99 mean the same thing.
package latency

import (
	"math"
	"slices"
	"time"
)

// Percentile is the nearest-rank pct-th percentile of durs (sorted in
// place); 0 for none.
func Percentile(durs []time.Duration, pct int) time.Duration {
	if len(durs) == 0 {
		return 0
	}
	slices.Sort(durs)
	rank := int(math.Ceil(float64(pct) / 100 * float64(len(durs))))
	return durs[max(rank, 1)-1]
}

// Millis is d in milliseconds.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
