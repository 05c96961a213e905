package loadgen

import "testing"

// A knee is the last rate held before the first that was not: a rate held
// again later does not count, and a floor that held every rate says so.
func TestKneeDecide(t *testing.T) {
	steps := func(pircan, echo []bool) []KneeStep {
		out := make([]KneeStep, len(pircan))
		for i := range out {
			out[i] = KneeStep{Rate: float64(int(100) << i), PircanOK: pircan[i], EchoOK: echo[i]}
		}
		return out
	}
	for _, c := range []struct {
		name          string
		pircan, echo  []bool
		pk, ek, ratio float64
		all           bool
	}{
		{"both pass the knee", []bool{true, true, false, true}, []bool{true, true, true, false}, 200, 400, 0.5, false},
		{"echo holds every rate", []bool{true, true, true, true}, []bool{true, true, true, true}, 800, 800, 1, true},
		{"not even the first", []bool{false, true, true, true}, []bool{true, true, true, false}, 0, 400, 0, false},
	} {
		k := &KneeResult{Steps: steps(c.pircan, c.echo)}
		k.decide()
		if k.PircanKnee != c.pk || k.EchoKnee != c.ek || k.KneeRatio != c.ratio || k.EchoHeldAll != c.all {
			t.Errorf("%s: knees %v/%v ratio %v all %v; want %v/%v %v %v", c.name,
				k.PircanKnee, k.EchoKnee, k.KneeRatio, k.EchoHeldAll, c.pk, c.ek, c.ratio, c.all)
		}
	}
}
