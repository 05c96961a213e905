package pircan

import (
	"strings"
	"testing"
)

// TestFoldAsMapped holds the byte-wise Fold and Equal to the rune mapping
// they replace (strings.Map of foldRune) for every casemapping, on ASCII
// names, names beyond ASCII and invalid UTF-8.
func TestFoldAsMapped(t *testing.T) {
	names := []string{"", "pircan", "PIRCAN", "Nick[1]", `a\b~c`, "{x}|^", "MiXeD_09-`", "Ünïcode", "a\xffB", "\xff",
		"ABC\u00e9[", "[]\\~", "hp3"}
	for _, m := range []Casemapping{RFC1459, ASCII, RFC1459Strict} {
		for _, a := range names {
			want := strings.Map(m.foldRune, a)
			if got := m.Fold(a); got != want {
				t.Errorf("%v.Fold(%q) = %q, want %q", m, a, got, want)
			}
			for _, b := range names {
				if got, want := m.Equal(a, b), want == strings.Map(m.foldRune, b); got != want {
					t.Errorf("%v.Equal(%q, %q) = %v, want %v", m, a, b, got, want)
				}
			}
		}
	}
}

func TestFoldAllocatesOnlyToChange(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = RFC1459.Fold("already{folded}") }); n != 0 {
		t.Errorf("Fold of a folded name: %v allocations", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = RFC1459.Equal("PIRCAN", "pircan") }); n != 0 {
		t.Errorf("Equal: %v allocations", n)
	}
}
