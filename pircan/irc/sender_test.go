package irc

import (
	"testing"

	"github.com/creatimus/pircan/pircan"
)

func TestCasemappingFold(t *testing.T) {
	for _, c := range []struct {
		m          pircan.Casemapping
		a, b       string
		sameOnWire bool
	}{
		{pircan.ASCII, "vic[1", "vic{1", false},
		{pircan.ASCII, "VIC[1", "vic[1", true},
		{pircan.ASCII, "a\\b~", "a|b^", false},
		{pircan.RFC1459, "vic[1", "vic{1", true},
		{pircan.RFC1459, "A\\B~]", "a|b^}", true},
		{pircan.RFC1459Strict, "vic[1]\\", "VIC{1}|", true},
		{pircan.RFC1459Strict, "a~", "a^", false},
		{pircan.ASCII, "ÄB", "äb", false}, // non-ASCII letters are never folded
	} {
		if got := c.m.Fold(c.a) == c.m.Fold(c.b); got != c.sameOnWire {
			t.Errorf("%s: %q and %q the same: %v, want %v", c.m, c.a, c.b, got, c.sameOnWire)
		}
	}
}

func TestParseCasemapping(t *testing.T) {
	for token, want := range map[string]pircan.Casemapping{"ascii": pircan.ASCII, "ASCII": pircan.ASCII, "rfc1459": pircan.RFC1459,
		"rfc1459-strict": pircan.RFC1459Strict, "": pircan.RFC1459, "rfc7613": pircan.ASCII} {
		if got := pircan.ParseCasemapping(token); got != want {
			t.Errorf("ParseCasemapping(%q) = %s, want %s", token, got, want)
		}
	}
	var zero Sender
	if zero.Casemap != pircan.RFC1459 {
		t.Error("a Sender without a casemapping must fold by rfc1459, the IRC default")
	}
}
