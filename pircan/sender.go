package pircan

import "strings"

// Sender is who a request came from, as the IRC server attested it. Account
// is the NickServ account from the `account` tag ("" when absent); Nick is
// only a label to reply to. Casemap is the network's, for comparing nicks.
type Sender struct {
	Account string
	Nick    string
	Casemap Casemapping
}

// Identified reports whether the server attached an account to the message.
func (s Sender) Identified() bool { return s.Account != "" }

// NickKey is the sender's nick folded by the network's casemapping: the key
// under which an unidentified sender is counted and answered.
func (s Sender) NickKey() string { return s.Casemap.Fold(s.Nick) }

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
