package loadgen

import (
	"fmt"
	"github.com/creatimus/pircan/internal/latency"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// collector gathers one row of the report: a verb, or a floor.
type collector struct {
	mu         sync.Mutex
	durs       []time.Duration // answered without ERROR
	firsts     []time.Duration // lists: to the first line
	errors     map[string]int  // ERROR replies by code
	sent       int
	okInWindow int // answered without ERROR, sent inside the measured window
	lost       int
}

func newCollector() *collector { return &collector{errors: map[string]int{}} }

func (c *collector) addSent() {
	c.mu.Lock()
	c.sent++
	c.mu.Unlock()
}

func (c *collector) addReply(d, first time.Duration, code string, inWindow bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if code != "" {
		c.errors[code]++
		return
	}
	c.durs = append(c.durs, d)
	if first > 0 {
		c.firsts = append(c.firsts, first)
	}
	if inWindow {
		c.okInWindow++
	}
}

func (c *collector) addLost() {
	c.mu.Lock()
	c.lost++
	c.mu.Unlock()
}

// VerbStats is one row of the report. Latencies are round trips in
// milliseconds, from the request's write to the reply's last line (a
// list's -END; NickServ INFO: its first line), over answered requests that
// were not ERRORs; percentiles are nearest rank. For lists, First* are to
// the first line: the rest of the wait is mostly PIRCAN's per-recipient
// pacing (a burst of 5 lines, then 2 per second).
type VerbStats struct {
	Verb      string         `json:"verb"`
	Sent      int            `json:"sent"`
	OK        int            `json:"ok"`
	Errors    map[string]int `json:"errors,omitempty"`
	Lost      int            `json:"lost"`
	PerSecond float64        `json:"per_second"` // answered OK, sent in the measured window, per second of it
	P50Ms     float64        `json:"p50_ms"`
	P99Ms     float64        `json:"p99_ms"`
	MeanMs    float64        `json:"mean_ms"`
	MaxMs     float64        `json:"max_ms"`
	FirstP50  float64        `json:"first_line_p50_ms,omitempty"`
	FirstP99  float64        `json:"first_line_p99_ms,omitempty"`
}

// ErrorCount is the number of ERROR replies.
func (v VerbStats) ErrorCount() int {
	n := 0
	for _, c := range v.Errors {
		n += c
	}
	return n
}

func (c *collector) stats(verb string, window time.Duration) VerbStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := VerbStats{Verb: verb, Sent: c.sent, OK: len(c.durs), Lost: c.lost}
	if len(c.errors) > 0 {
		v.Errors = maps.Clone(c.errors)
	}
	if window > 0 {
		v.PerSecond = float64(c.okInWindow) / window.Seconds()
	}
	if len(c.durs) == 0 {
		return v
	}
	durs := slices.Clone(c.durs)
	slices.Sort(durs)
	var sum time.Duration
	for _, d := range durs {
		sum += d
	}
	v.P50Ms = millis(latency.Percentile(durs, 50))
	v.P99Ms = millis(latency.Percentile(durs, 99))
	v.MeanMs = millis(sum / time.Duration(len(durs)))
	v.MaxMs = millis(durs[len(durs)-1])
	if len(c.firsts) > 0 {
		firsts := slices.Clone(c.firsts)
		slices.Sort(firsts)
		v.FirstP50 = millis(latency.Percentile(firsts, 50))
		v.FirstP99 = millis(latency.Percentile(firsts, 99))
	}
	return v
}

func millis(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)*1000) / 1000
}

// Ratio compares PIRCAN's WHOAMI round trip with a floor.
type Ratio struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

// Disconnect is an agent the server dropped during the run.
type Disconnect struct {
	Nick   string `json:"nick"`
	Reason string `json:"reason"`
}

// Result is what a run measured.
type Result struct {
	Server          string  `json:"server"`
	BotNick         string  `json:"bot_nick"`
	Agents          int     `json:"agents"`
	TargetRate      float64 `json:"target_rate"` // requests/s to PIRCAN, all agents
	DurationSeconds float64 `json:"duration_s"`
	Mix             string  `json:"mix"`
	FindLimit       int     `json:"find_limit"`
	ConnectSeconds  float64 `json:"connect_s"` // connecting and identifying every agent
	SetupSeconds    float64 `json:"setup_s"`   // HELLO and the agreements

	Sent       int     `json:"sent"` // requests to PIRCAN (measured phase, accepts after it included)
	OK         int     `json:"ok"`
	Errors     int     `json:"errors"`
	Lost       int     `json:"lost"`
	Late       int     `json:"late"`       // replies that came after their request was counted lost
	Throughput float64 `json:"throughput"` // requests/s answered OK, of those sent in the measured window
	Skipped    int     `json:"skipped"`    // turns not taken: the agent was disconnected

	Verbs         []VerbStats  `json:"verbs"`
	EchoFloor     *VerbStats   `json:"echo_floor,omitempty"`
	NickServFloor *VerbStats   `json:"nickserv_info_floor,omitempty"`
	WhoamiVsEcho  *Ratio       `json:"whoami_vs_echo,omitempty"`
	WhoamiVsInfo  *Ratio       `json:"whoami_vs_nickserv_info,omitempty"`
	Disconnects   []Disconnect `json:"disconnects"`
	NotifyLines   int          `json:"notify_lines"` // unsolicited NOTIFY lines the agents received
	Uncorrelated  int          `json:"uncorrelated_lines"`
	Knee          *KneeResult  `json:"knee,omitempty"`
}

// Verb returns the row of verb (nil if it was not measured).
func (r *Result) Verb(verb string) *VerbStats {
	for i := range r.Verbs {
		if r.Verbs[i].Verb == verb {
			return &r.Verbs[i]
		}
	}
	return nil
}

// Failures says what makes the run a failure: lost replies (PIRCAN's or a
// floor's), agents the server disconnected, ERROR replies. Empty: success.
func (r *Result) Failures() []string {
	var out []string
	if r.Lost > 0 {
		out = append(out, fmt.Sprintf("%d lost replies from %s", r.Lost, r.BotNick))
	}
	for _, f := range []*VerbStats{r.EchoFloor, r.NickServFloor} {
		if f != nil && f.Lost > 0 {
			out = append(out, fmt.Sprintf("%d lost replies from the %s", f.Lost, f.Verb))
		}
	}
	if n := len(r.Disconnects); n > 0 {
		out = append(out, fmt.Sprintf("%d agents disconnected by the server (first: %s: %s)", n,
			r.Disconnects[0].Nick, r.Disconnects[0].Reason))
	}
	if r.Errors > 0 {
		var codes []string
		for _, v := range r.Verbs {
			for code, n := range v.Errors {
				codes = append(codes, fmt.Sprintf("%s %s×%d", v.Verb, code, n))
			}
		}
		slices.Sort(codes)
		out = append(out, fmt.Sprintf("%d ERROR replies (%s)", r.Errors, strings.Join(codes, ", ")))
	}
	return out
}

// WriteTable prints the report as a plain table.
func (r *Result) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "pircan bench: %d agents -> %s on %s, %.1f req/s target for %gs, mix %s (FIND limit %d)\n",
		r.Agents, r.BotNick, r.Server, r.TargetRate, r.DurationSeconds, r.Mix, r.FindLimit)
	fmt.Fprintf(w, "connect+identify %.1fs, setup (HELLO, agreements) %.1fs\n\n", r.ConnectSeconds, r.SetupSeconds)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "verb\tsent\tok\terrors\tlost\treq/s\tp50 ms\tp99 ms\tmean ms\tmax ms\tfirst line p50/p99\t")
	row := func(v VerbStats) {
		first := ""
		if v.FirstP50 > 0 {
			first = fmt.Sprintf("%.2f / %.2f", v.FirstP50, v.FirstP99)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t\n", v.Verb, v.Sent, v.OK, v.ErrorCount(), v.Lost,
			v.PerSecond, v.P50Ms, v.P99Ms, v.MeanMs, v.MaxMs, first)
	}
	for _, v := range r.Verbs {
		row(v)
	}
	fmt.Fprintf(tw, "all\t%d\t%d\t%d\t%d\t%.1f\t\t\t\t\t\t\n", r.Sent, r.OK, r.Errors, r.Lost, r.Throughput)
	fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t\t\t\t")
	if r.EchoFloor != nil {
		row(*r.EchoFloor)
	}
	if r.NickServFloor != nil {
		row(*r.NickServFloor)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if r.WhoamiVsEcho != nil {
		fmt.Fprintf(w, "WHOAMI / echo floor:    p50 %.1fx  p99 %.1fx\n", r.WhoamiVsEcho.P50, r.WhoamiVsEcho.P99)
	}
	if r.WhoamiVsInfo != nil {
		fmt.Fprintf(w, "WHOAMI / NickServ INFO: p50 %.1fx  p99 %.1fx\n", r.WhoamiVsInfo.P50, r.WhoamiVsInfo.P99)
	}
	fmt.Fprintf(w, "NOTIFY lines received: %d; late replies: %d; uncorrelated lines: %d; skipped turns: %d\n",
		r.NotifyLines, r.Late, r.Uncorrelated, r.Skipped)
	for _, d := range r.Disconnects {
		fmt.Fprintf(w, "DISCONNECTED %s: %s\n", d.Nick, d.Reason)
	}
	if f := r.Failures(); len(f) > 0 {
		fmt.Fprintf(w, "FAILED: %s\n", strings.Join(f, "; "))
	} else {
		fmt.Fprintln(w, "OK: no lost reply, no disconnect, no ERROR")
	}
	return nil
}
