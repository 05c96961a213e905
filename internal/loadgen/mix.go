package loadgen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Verbs the mix may hold, and what one turn of each sends to PIRCAN:
//
//	hello     HELLO with the agent's profile again (what a reconnecting agent sends)
//	whoami    WHOAMI
//	find      FIND {"capability":"pircan-bench","limit":FindLimit} (timed to FIND-END)
//	channels  CHANNELS (timed to CHANNELS-END)
//	echo      ECHO {"text":…} (no database work)
//	contact   CONTACT to an agent it has not asked in this run; that agent
//	          ACCEPTs in its own next turn (timed as "accept")
//	send      SEND to one of its two agreed partners (made before the run)
//	inbox     INBOX {"limit":5} (timed to INBOX-END)
var Verbs = []string{"hello", "whoami", "find", "channels", "echo", "contact", "send", "inbox"}

// DefaultMix is what `pircan bench` runs unless told otherwise.
const DefaultMix = "whoami=4,find=2,contact=1,send=3,inbox=2"

// Mix is a weighted choice of verbs.
type Mix []MixEntry

// MixEntry is one verb and its weight.
type MixEntry struct {
	Verb   string `json:"verb"`
	Weight int    `json:"weight"`
}

// ParseMix reads "verb=weight,verb=weight" (a verb alone weighs 1).
func ParseMix(s string) (Mix, error) {
	var m Mix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		verb, w, hasWeight := strings.Cut(part, "=")
		verb = strings.ToLower(strings.TrimSpace(verb))
		if !slices.Contains(Verbs, verb) {
			return nil, fmt.Errorf("mix: unknown verb %q (known: %s)", verb, strings.Join(Verbs, ", "))
		}
		weight := 1
		if hasWeight {
			var err error
			if weight, err = strconv.Atoi(strings.TrimSpace(w)); err != nil || weight < 0 {
				return nil, fmt.Errorf("mix: weight of %s: want a whole number ≥ 0, got %q", verb, w)
			}
		}
		if slices.ContainsFunc(m, func(e MixEntry) bool { return e.Verb == verb }) {
			return nil, fmt.Errorf("mix: %s is listed twice", verb)
		}
		if weight > 0 {
			m = append(m, MixEntry{verb, weight})
		}
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("mix %q: no verb with a weight above 0", s)
	}
	return m, nil
}

func (m Mix) String() string {
	parts := make([]string, len(m))
	for i, e := range m {
		parts[i] = fmt.Sprintf("%s=%d", e.Verb, e.Weight)
	}
	return strings.Join(parts, ",")
}

func (m Mix) has(verb string) bool {
	return slices.ContainsFunc(m, func(e MixEntry) bool { return e.Verb == verb })
}

// picker deals the mix's verbs by smooth weighted round robin (nginx's):
// deterministic, each verb exactly in proportion over every cycle of
// sum(weights) picks and spread evenly within it, so that even a short run
// sends every verb of the mix.
type picker struct {
	mix     Mix
	current []int
	total   int
}

func newPicker(m Mix) *picker {
	p := &picker{mix: m, current: make([]int, len(m))}
	for _, e := range m {
		p.total += e.Weight
	}
	return p
}

// next returns the next verb for which ok is true (or "" if none is).
func (p *picker) next(ok func(verb string) bool) string {
	for range len(p.mix) * p.total {
		best := -1
		for i, e := range p.mix {
			p.current[i] += e.Weight
			if best < 0 || p.current[i] > p.current[best] {
				best = i
			}
		}
		p.current[best] -= p.total
		if v := p.mix[best].Verb; ok(v) {
			return v
		}
	}
	return ""
}
