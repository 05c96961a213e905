package loadgen

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// The knee (issue 24, target 1): where PIRCAN stops keeping up. With the
// agents online, each rate of Config.Knee runs for Config.KneeStep twice,
// one phase after the other: WHOAMI from the agents in turn to PIRCAN, then
// the same bytes to the echo bot (no work: what the IRC server and the
// network carry at that rate). PIRCAN's knee is the highest rate whose
// WHOAMI p99 stayed within KneeFactor times the echo bot's p99 at the same
// rate, with nothing lost; the echo bot's own knee the highest rate whose
// p99 stayed within KneeFactor times its p99 at the first rate, with
// nothing lost. PIRCAN's knee over the echo bot's is the ratio judged
// (≥ 0.8: the server, not PIRCAN, is the limit).

// KneeFactor is how far a p99 may rise over its floor before the rate is
// past the knee.
const KneeFactor = 3

// KneeStep is one rate's two phases.
type KneeStep struct {
	Rate   float64   `json:"rate"`
	Whoami VerbStats `json:"whoami"`
	Echo   VerbStats `json:"echo"`
	// P99Ratio is WHOAMI's p99 over the echo bot's at this rate.
	P99Ratio float64 `json:"whoami_vs_echo_p99"`
	PircanOK bool    `json:"pircan_within"` // WHOAMI p99 within KneeFactor × echo's, nothing lost
	EchoOK   bool    `json:"echo_within"`   // echo p99 within KneeFactor × its first rate's, nothing lost
}

// KneeResult is the curve and both knees (0: not even the first rate held).
type KneeResult struct {
	Steps      []KneeStep `json:"steps"`
	PircanKnee float64    `json:"pircan_knee"`
	EchoKnee   float64    `json:"echo_knee"`
	// EchoHeldAll: the echo bot held every rate, so its knee is at least
	// the last one and the ratio a bound from above.
	EchoHeldAll bool    `json:"echo_held_all"`
	KneeRatio   float64 `json:"knee_ratio"` // PircanKnee / EchoKnee
	Lost        int     `json:"lost"`       // WHOAMI replies lost, all rates
}

func kneeStat(i int, echo bool) string {
	if echo {
		return fmt.Sprintf("knee:%d:echo", i)
	}
	return fmt.Sprintf("knee:%d:whoami", i)
}

// knee runs every rate's two phases and fills res.Knee.
func (r *run) knee(ctx context.Context, res *Result) {
	k := &KneeResult{}
	var base float64 // the echo bot's p99 at the first rate
	for i, rate := range r.cfg.Knee {
		step := KneeStep{Rate: rate}
		for _, echo := range []bool{false, true} {
			to := "PIRCAN"
			if echo {
				to = "the echo bot"
			}
			r.progress("knee: %.0f req/s to %s for %s", rate, to, r.cfg.KneeStep)
			r.kneePhase(ctx, rate, kneeStat(i, echo), echo)
			r.drain(ctx)
			if ctx.Err() != nil {
				res.Knee = k
				return
			}
		}
		step.Whoami = r.stats[kneeStat(i, false)].stats("whoami", r.cfg.KneeStep)
		step.Echo = r.stats[kneeStat(i, true)].stats("echo", r.cfg.KneeStep)
		if i == 0 {
			base = step.Echo.P99Ms
		}
		step.P99Ratio = ratio(step.Whoami.P99Ms, step.Echo.P99Ms)
		step.PircanOK = step.Whoami.Lost == 0 && step.Whoami.ErrorCount() == 0 && step.Whoami.OK > 0 &&
			step.Whoami.P99Ms <= KneeFactor*step.Echo.P99Ms
		step.EchoOK = step.Echo.Lost == 0 && step.Echo.OK > 0 && step.Echo.P99Ms <= KneeFactor*base
		k.Lost += step.Whoami.Lost
		k.Steps = append(k.Steps, step)
		r.progress("knee: %.0f req/s: whoami p50/p99 %.2f/%.2f ms, echo %.2f/%.2f ms, lost %d/%d",
			rate, step.Whoami.P50Ms, step.Whoami.P99Ms, step.Echo.P50Ms, step.Echo.P99Ms, step.Whoami.Lost, step.Echo.Lost)
	}
	k.decide()
	res.Knee = k
}

// kneePhase sends WHOAMI at rate for KneeStep from the agents in turn, to
// PIRCAN or to the echo bot, counted under stat.
func (r *run) kneePhase(ctx context.Context, rate float64, stat string, echo bool) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.KneeStep)
	defer cancel()
	start := time.Now()
	end := start.Add(r.cfg.KneeStep)
	interval := float64(time.Second) / rate
	timer := time.NewTimer(0)
	defer timer.Stop()
	n := len(r.agents)
	for i := 0; ; i++ {
		at := start.Add(time.Duration(float64(i) * interval))
		if !at.Before(end) {
			return
		}
		if d := time.Until(at); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		}
		a := r.agents[i%n]
		if a.c.Gone() != "" {
			r.skipped.Add(1)
			continue
		}
		if echo {
			req := &request{id: r.newID("e"), stat: stat, a: a, inWindow: true}
			go func() { _ = r.send(req, r.cfg.Echo.Nick, requestLine("WHOAMI", "", req.id)) }()
		} else {
			r.measured(a, stat, "WHOAMI", "", false, true, nil)
		}
	}
}

// WriteKnee prints the curve and the knees.
func (k *KneeResult) WriteKnee(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "req/s\twhoami p50\tp99\tlost\techo p50\tp99\tlost\twhoami/echo p99\tpircan held\techo held\t")
	for _, s := range k.Steps {
		fmt.Fprintf(tw, "%.0f\t%.2f\t%.2f\t%d\t%.2f\t%.2f\t%d\t%.2f\t%v\t%v\t\n", s.Rate, s.Whoami.P50Ms, s.Whoami.P99Ms,
			s.Whoami.Lost, s.Echo.P50Ms, s.Echo.P99Ms, s.Echo.Lost, s.P99Ratio, s.PircanOK, s.EchoOK)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	bound := ""
	if k.EchoHeldAll {
		bound = " (the echo bot held every rate: its knee is at least that, the ratio at most this)"
	}
	_, err := fmt.Fprintf(w, "\nknee: PIRCAN %.0f req/s, echo bot %.0f req/s: ratio %.2f (target ≥ 0.8)%s; WHOAMI lost %d\n",
		k.PircanKnee, k.EchoKnee, k.KneeRatio, bound, k.Lost)
	return err
}

// decide sets both knees from the steps: a knee is the last rate held
// before the first that was not.
func (k *KneeResult) decide() {
	k.EchoKnee, k.PircanKnee, k.EchoHeldAll = 0, 0, true
	for _, s := range k.Steps {
		if !s.EchoOK {
			k.EchoHeldAll = false
			break
		}
		k.EchoKnee = s.Rate
	}
	for _, s := range k.Steps {
		if !s.PircanOK {
			break
		}
		k.PircanKnee = s.Rate
	}
	k.KneeRatio = ratio(k.PircanKnee, k.EchoKnee)
}
