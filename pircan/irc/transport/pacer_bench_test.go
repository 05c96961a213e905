package transport

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkPacerPerLine is the pacer's cost per line sent, at the spec's
// per-recipient pacing (burst 5, then 2 lines/s), with n recipients that
// always have lines waiting: the loop Run runs, minus the socket, on a
// fake clock that jumps to the wait the pacer asks for. ns/line should be
// about the same for 10 and for 100,000 recipients (the ready queue and
// the wait heap, never a scan of all recipients).
func BenchmarkPacerPerLine(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run(fmt.Sprintf("recipients=%d", n), func(b *testing.B) {
			clock := newPacerClock()
			p := NewPacer(PacerConfig{Burst: 5, PerSecond: 2, GlobalBurst: 1 << 30, GlobalRate: 1e12, MaxQueued: 500},
				clock.now, funcOutput{})
			p.SetOnline(true)
			keys := make([]string, n)
			for i := range keys {
				keys[i] = fmt.Sprintf("a:agent%d nick%d", i, i)
				p.Enqueue(keys[i], numbered("l", 10)...)
			}
			line := []Line{{Text: "x"}}
			b.ResetTimer()
			sent := 0
			for sent < b.N {
				r, lines, _, wait := p.takeUpTo(5)
				if len(lines) == 0 {
					clock.advance(wait)
					continue
				}
				p.settle(r, lines, nil)
				for range lines {
					p.Enqueue(r.key, line...) // keep every recipient busy
				}
				sent += len(lines)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(sent), "ns/line")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkPacerFreshBehindWaiting: n recipients are in the middle of long
// paced lists (most of them waiting for their bucket at any moment) while
// replies to others keep arriving: the case where a pacer that scans its
// recipients for one that may send pays for all n on every line.
func BenchmarkPacerFreshBehindWaiting(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run(fmt.Sprintf("waiting=%d", n), func(b *testing.B) {
			clock := newPacerClock()
			p := NewPacer(PacerConfig{Burst: 5, PerSecond: 2, GlobalBurst: 1 << 30, GlobalRate: 1e12, MaxQueued: 500},
				clock.now, funcOutput{})
			p.SetOnline(true)
			for i := range n {
				p.Enqueue(fmt.Sprintf("a:long%d", i), numbered("l", 20)...)
			}
			fresh := make([]string, 1000)
			for i := range fresh {
				fresh[i] = fmt.Sprintf("a:fresh%d", i)
			}
			line := []Line{{Text: "x"}}
			drain := func() int {
				sent := 0
				for {
					r, lines, _, _ := p.takeUpTo(5)
					if r == nil {
						return sent
					}
					p.settle(r, lines, nil)
					if r.key[2] == 'l' {
						for range lines {
							p.Enqueue(r.key, line...) // the long lists stay long
						}
					}
					sent += len(lines)
				}
			}
			drain() // every long list has spent its burst
			b.ResetTimer()
			sent := 0
			for k := 0; sent < b.N; k++ {
				clock.advance(100 * time.Microsecond)
				p.Enqueue(fresh[k%len(fresh)], line...)
				sent += drain()
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(sent), "ns/line")
			b.ReportMetric(0, "ns/op")
		})
	}
}
