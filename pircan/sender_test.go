package pircan

import "testing"

func TestCasemappingFold(t *testing.T) {
	for _, c := range []struct {
		m          Casemapping
		a, b       string
		sameOnWire bool
	}{
		{ASCII, "vic[1", "vic{1", false},
		{ASCII, "VIC[1", "vic[1", true},
		{ASCII, "a\\b~", "a|b^", false},
		{RFC1459, "vic[1", "vic{1", true},
		{RFC1459, "A\\B~]", "a|b^}", true},
		{RFC1459Strict, "vic[1]\\", "VIC{1}|", true},
		{RFC1459Strict, "a~", "a^", false},
		{ASCII, "ÄB", "äb", false}, // non-ASCII letters are never folded
	} {
		if got := c.m.Fold(c.a) == c.m.Fold(c.b); got != c.sameOnWire {
			t.Errorf("%s: %q and %q the same: %v, want %v", c.m, c.a, c.b, got, c.sameOnWire)
		}
	}
}

func TestParseCasemapping(t *testing.T) {
	for token, want := range map[string]Casemapping{"ascii": ASCII, "ASCII": ASCII, "rfc1459": RFC1459,
		"rfc1459-strict": RFC1459Strict, "": RFC1459, "rfc7613": ASCII} {
		if got := ParseCasemapping(token); got != want {
			t.Errorf("ParseCasemapping(%q) = %s, want %s", token, got, want)
		}
	}
	var zero Sender
	if zero.Casemap != RFC1459 {
		t.Error("a Sender without a casemapping must fold by rfc1459, the IRC default")
	}
}
