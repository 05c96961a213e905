package pircan

import "unicode/utf8"

// How replies write user text inside their JSON strings. Every face's
// rendering escapes with these, and limits stated "as replies write it"
// (an id in re, a channel name) count with them.

// ControlRune is what must never reach a client raw: C0 and C1 controls,
// DEL, U+2028/U+2029 and the bidi controls (Unicode's Bidi_Control: U+061C,
// U+200E, U+200F, U+202A-U+202E, U+2066-U+2069). Replies write it as a
// \uXXXX escape.
func ControlRune(r rune) bool {
	if r < 0x80 {
		return r < 0x20 || r == 0x7f
	}
	return r <= 0x9f || r == 0x061c || r == 0x200e || r == 0x200f || r == 0x2028 || r == 0x2029 || isBidiControl(r)
}

// EscapedRuneLen is how many bytes r takes inside a JSON string as replies
// write it.
func EscapedRuneLen(r rune) int {
	switch {
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case ControlRune(r):
		return 6
	}
	return utf8.RuneLen(r)
}

// EscapedLen is how many bytes s takes inside a JSON string.
func EscapedLen(s string) int {
	n := 0
	for _, r := range s {
		n += EscapedRuneLen(r)
	}
	return n
}
