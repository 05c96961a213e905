package latency

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var durs []time.Duration
	for i := 100; i >= 1; i-- {
		durs = append(durs, time.Duration(i)*time.Millisecond)
	}
	if p := Percentile(durs, 50); p != 50*time.Millisecond {
		t.Errorf("p50 = %v", p)
	}
	if p := Percentile(durs, 99); p != 99*time.Millisecond {
		t.Errorf("p99 = %v", p)
	}
	if p := Percentile([]time.Duration{7}, 99); p != 7 {
		t.Errorf("one value: %v", p)
	}
	if p := Percentile(nil, 50); p != 0 {
		t.Errorf("none: %v", p)
	}
	if m := Millis(1500 * time.Microsecond); m != 1.5 {
		t.Errorf("Millis = %v", m)
	}
}
