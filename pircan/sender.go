package pircan

import "strings"

// Sender is who a request came from, as the IRC server attested it. Account
// is the NickServ account from the `account` tag ("" when absent); Nick is
// only a label to reply to.
type Sender struct {
	Account string
	Nick    string
}

// Identified reports whether the server attached an account to the message.
func (s Sender) Identified() bool { return s.Account != "" }

// FoldNick lower-cases a nick or channel name the way IRC servers compare
// them (rfc1459 casemapping: []\~ are the upper-case forms of {}|^).
func FoldNick(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		case r == '[':
			return '{'
		case r == ']':
			return '}'
		case r == '\\':
			return '|'
		case r == '~':
			return '^'
		}
		return r
	}, s)
}
