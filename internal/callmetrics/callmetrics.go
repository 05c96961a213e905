// Package callmetrics counts and times the calls of one HTTP face (MCP
// tools, A2A methods): `pircan_<face>_calls_total{<label>,code}` and
// `pircan_<face>_call_seconds{<label>}`, the same shape for every face.
package callmetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// buckets span a cached read (1 ms) to a stuck store call (10 s).
var buckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// Calls are one face's call metrics.
type Calls struct {
	calls   *prometheus.CounterVec
	seconds *prometheus.HistogramVec
}

// New makes the metrics of face, whose calls are named by label ("tool",
// "method"); what is said in their help. reg nil: not registered.
func New(reg prometheus.Registerer, face, label, callsHelp, secondsHelp string) Calls {
	c := Calls{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pircan_" + face + "_calls_total", Help: callsHelp,
		}, []string{label, "code"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "pircan_" + face + "_call_seconds", Help: secondsHelp, Buckets: buckets,
		}, []string{label}),
	}
	if reg != nil {
		reg.MustRegister(c.calls, c.seconds)
	}
	return c
}

// Observe counts one answer of the call name with its code ("ok", or the
// refusal's code), timed from start.
func (c Calls) Observe(name, code string, start time.Time) {
	c.calls.WithLabelValues(name, code).Inc()
	c.seconds.WithLabelValues(name).Observe(time.Since(start).Seconds())
}
