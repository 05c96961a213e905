package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// CHANNELS q is plain case-insensitive text: no IRC casemapping (under
// which [ ] \ ~ are { } | ^), and LIKE's % _ \ match only themselves.
func TestChannelsQueryIsPlainText(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := context.Background()
	a, _, err := s.Hello(ctx, "alice", "alice", pircan.Profile{}, 30)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, topic string }{
		{"#[Draft]", "Papers in progress"},
		{"#braces", "About {draft} in braces"},
		{"#til~de", "tilde"},
		{"#car^et", "caret"},
		{`#back\slash`, "one backslash"},
		{"#pi|pe", "a pipe"},
		{"#pct", "100% done, under_score"},
		{"#plain", "Topic with [DRAFT] inside"},
	} {
		if err := s.AddChannel(ctx, pircan.Actor{Account: "op"}, c.name, false, c.topic); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"[draft]", []string{"#[Draft]", "#plain"}},
		{"{DRAFT}", []string{"#braces"}},
		{"~", []string{"#til~de"}},
		{"^", []string{"#car^et"}},
		{`\`, []string{`#back\slash`}},
		{"|", []string{"#pi|pe"}},
		{"%", []string{"#pct"}},
		{"100_", nil}, // _ is no wildcard: it would match "100%"
		{"under_", []string{"#pct"}},
		{"CARET", []string{"#car^et"}},
		{"#[dRAFT]", []string{"#[Draft]"}},
	} {
		list, total, err := s.Channels(ctx, a.ID, c.q, 20, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ch := range list {
			got = append(got, ch.Name)
		}
		slices.Sort(got)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(got, want) || total != len(want) {
			t.Errorf("q %q: %v (total %d), want %v", c.q, got, total, want)
		}
	}
}
