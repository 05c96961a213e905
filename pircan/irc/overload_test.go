package irc

import (
	"testing"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// A request refused for a full queue gets the same rate_limited ERROR as
// the per-minute limit, with its id and verb when they can be read.
func TestOverloadedReply(t *testing.T) {
	s := newTestFace(nil, Config{Limits: pircan.DefaultLimits})
	for _, c := range []struct{ text, verb, re string }{
		{`PIRCAN/1 WHOAMI {"id":"w1"}`, "WHOAMI", "w1"},
		{`PIRCAN/1 FIND {"q":`, "FIND", ""},
		{`not a request`, "", ""},
	} {
		replies := s.Overloaded(c.text, 5*time.Second)
		if len(replies) != 1 {
			t.Fatalf("%q: %d replies", c.text, len(replies))
		}
		line, err := Encode(replies[0])
		if err != nil {
			t.Fatal(err)
		}
		want := `PIRCAN/1 ERROR {"verb":"` + c.verb + `","code":"rate_limited","message":"Too many requests; PIRCAN will not answer until the window passes.","retry_after":5`
		if c.re != "" {
			want += `,"re":"` + c.re + `"`
		}
		if want += "}"; line != want {
			t.Errorf("%q:\n got %s\nwant %s", c.text, line, want)
		}
	}
}
