package pircan

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// checkText validates a user-written string field: printable, not blank
// when given, at most max characters.
func checkText(field, s string, max int) *Error {
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return FieldError(CodeInvalidArgument, field, "%q must not contain control characters.", field)
	}
	return checkLength(field, s, max)
}

// MultilineRune is a control character that is text in a text of many
// lines (a message or task over MCP or A2A, a resource's content): a line
// break (LF, CR) or a tab. Every face writes it escaped where a raw one
// would break a line (IRC's JSON: \n, \r, \t).
func MultilineRune(r rune) bool { return r == '\n' || r == '\r' || r == '\t' }

// checkMultilineText is checkText for a text of many lines: MultilineRune
// allowed, every other control character refused.
func checkMultilineText(field, s string, max int) *Error {
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) && !MultilineRune(r) }) >= 0 {
		return FieldError(CodeInvalidArgument, field, "%q must not contain control characters other than line breaks and tabs.", field)
	}
	return checkLength(field, s, max)
}

// checkLength holds a text that is not blank to max characters.
func checkLength(field, s string, max int) *Error {
	if strings.TrimSpace(s) == "" {
		return FieldError(CodeEmpty, field, "%q must not be empty.", field)
	}
	if n := utf8.RuneCountInString(s); n > max {
		return FieldError(CodeTooLong, field, "%q may be at most %d characters; it has %d.", field, max, n)
	}
	return nil
}

// isBidiControl is an embedding, override or isolate (U+202A-U+202E,
// U+2066-U+2069): it reorders the text around it as displayed.
func isBidiControl(r rune) bool { return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 }

// checkLabel refuses bidi controls in a field that others read as a label
// (a name, a capability, a channel or URL): one could make it display as
// someone else's. Right-to-left text needs none of them.
func checkLabel(field, s string) *Error {
	if strings.IndexFunc(s, isBidiControl) >= 0 {
		return FieldError(CodeInvalidArgument, field, "%q must not contain bidi control characters (U+202A-U+202E, U+2066-U+2069).", field)
	}
	return nil
}

// CheckOptionalText is checkText for a field that may be cleared with "".
func CheckOptionalText(field, s string, max int) *Error {
	if s == "" {
		return nil
	}
	return checkText(field, s, max)
}

// CanonicalID is an id as PIRCAN stores and compares it: a UUID in lower
// case. Anything else comes back unchanged, for ValidID to refuse. Every
// id a caller gives is made canonical once, where its arguments are read
// (checkArgs; the A2A face's URL), so that an upper-case spelling of an id
// is the same id to every rule that compares ids as text.
func CanonicalID(s string) string {
	if !ValidID(s) {
		return s
	}
	return strings.ToLower(s)
}

// NoArgs are the arguments of an operation that takes none, so that every
// operation has the one shape: Service.X(ctx, Caller, XArgs) (XResult, error).
type NoArgs struct{}

// ValidID reports whether s is a UUID in its text form (either case), the
// shape of every PIRCAN id.
func ValidID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
				return false
			}
		}
	}
	return true
}
