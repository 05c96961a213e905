package pircan

import "strings"

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
func (m Casemapping) Fold(s string) string {
	return strings.Map(func(r rune) rune {
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
	}, s)
}

// FoldAccount is the key a NickServ account is compared by: A-Z folded,
// nothing else, whatever the network's casemapping. Services send an
// account's name one way (the account tag), so this finest fold never
// mistakes one account for another, as rfc1459 folding would when the
// services compare by ascii (`vic[1` and `vic{1` are two accounts there).
func FoldAccount(account string) string { return ASCII.Fold(account) }
