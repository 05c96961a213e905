package pircan

import (
	"strings"
	"unicode/utf8"
)

// Casemapping is how an IRC network compares nicks and channel names (the
// CASEMAPPING token of ISUPPORT). The zero value is rfc1459, the IRC
// default when a server announces none.
type Casemapping int

const (
	RFC1459       Casemapping = iota // A-Z and []\~ are the upper case of a-z and {}|^
	ASCII                            // only A-Z
	RFC1459Strict                    // A-Z and []\ (not ~)
)

// ParseCasemapping reads a CASEMAPPING value. Absent means rfc1459, as the
// IRC specification says. An unknown one (rfc7613, utf8) gives ascii: it
// may tell apart two names the server holds the same, never the reverse,
// so no name is mistaken for another's.
func ParseCasemapping(token string) Casemapping {
	switch strings.ToLower(token) {
	case "", "rfc1459":
		return RFC1459
	case "rfc1459-strict", "strict-rfc1459":
		return RFC1459Strict
	}
	return ASCII
}

func (m Casemapping) String() string {
	switch m {
	case ASCII:
		return "ascii"
	case RFC1459Strict:
		return "rfc1459-strict"
	}
	return "rfc1459"
}

// Fold lower-cases a nick or channel name the way the network compares
// them: two names are the same name exactly when their folds are equal.
// An ASCII name (nearly all of them) is folded byte by byte, and returned
// as it is when nothing in it folds: Fold runs several times on every
// line read and every reply written.
func (m Casemapping) Fold(s string) string {
	i := 0
	for ; i < len(s) && s[i] < utf8.RuneSelf && m.foldByte(s[i]) == s[i]; i++ {
	}
	if i == len(s) {
		return s
	}
	for j := i; j < len(s); j++ {
		if s[j] >= utf8.RuneSelf {
			return m.foldRunes(s)
		}
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		b.WriteByte(m.foldByte(s[i]))
	}
	return b.String()
}

// Equal reports whether a and b are the same name (their folds are equal),
// without building the folds when both are ASCII.
func (m Casemapping) Equal(a, b string) bool {
	if len(a) != len(b) {
		return m.Fold(a) == m.Fold(b) // only outside ASCII can folds of different lengths match
	}
	for i := range len(a) {
		if a[i] >= utf8.RuneSelf || b[i] >= utf8.RuneSelf {
			return m.Fold(a) == m.Fold(b)
		}
		if m.foldByte(a[i]) != m.foldByte(b[i]) {
			return false
		}
	}
	return true
}

// foldByte is the fold of one ASCII character.
func (m Casemapping) foldByte(c byte) byte {
	return byte(m.foldRune(rune(c)))
}

// foldRunes folds a name with characters outside ASCII (invalid UTF-8
// becomes U+FFFD, as strings.Map makes it).
func (m Casemapping) foldRunes(s string) string { return strings.Map(m.foldRune, s) }

func (m Casemapping) foldRune(r rune) rune {
	switch {
	case r >= 'A' && r <= 'Z':
		return r + ('a' - 'A')
	case m == ASCII:
	case r == '[':
		return '{'
	case r == ']':
		return '}'
	case r == '\\':
		return '|'
	case r == '~' && m == RFC1459:
		return '^'
	}
	return r
}

// FoldAccount is the key a NickServ account is compared by: A-Z folded,
// nothing else, whatever the network's casemapping. Services send an
// account's name one way (the account tag), so this finest fold never
// mistakes one account for another, as rfc1459 folding would when the
// services compare by ascii (`vic[1` and `vic{1` are two accounts there).
func FoldAccount(account string) string { return ASCII.Fold(account) }
