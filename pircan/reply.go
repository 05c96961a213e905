package pircan

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxReplyBytes is the cap on one reply's NOTICE text (spec §2).
const MaxReplyBytes = 350

// Reply is one NOTICE line: `PIRCAN/1 <VERB> {fields}`, or, for the
// people-facing plain `help`, a Plain text line.
type Reply struct {
	Verb   string
	Fields Object
	Plain  string
	// Done, when set, hears once whether the line was handed to the
	// connection for the account that asked (see ircconn.Line).
	Done func(delivered bool)
}

// Object is a JSON object whose keys keep their order on the wire.
type Object []Field

// Field is one key of an Object. Value is one of: string, Text, bool, int,
// int64, nil, []string, TextList, Object.
type Field struct {
	Key   string
	Value any
}

// Text is text a user wrote (names, descriptions, topics): the encoder may
// shorten it to make a reply fit. Plain strings are never shortened.
type Text string

// TextList is a list of user-written strings; whole items may be dropped
// from the end to make a reply fit.
type TextList []string

// With returns a copy of the object with one more field.
func (o Object) With(key string, value any) Object {
	out := make(Object, len(o), len(o)+1)
	copy(out, o)
	return append(out, Field{key, value})
}

// ErrReplyTooLong means a reply could not fit even after shortening every
// user-written field: a bug in the handler that built it.
var ErrReplyTooLong = errors.New("reply does not fit in one line")

// Encode renders a reply as one line of at most MaxReplyBytes bytes, never
// containing CR, LF or NUL. When user-written fields must be shortened, the
// reply carries "truncated": true.
func Encode(r Reply) (string, error) {
	if r.Plain != "" {
		return plainLine(r.Plain), nil
	}
	line := encodeLine(r.Verb, r.Fields)
	if len(line) <= MaxReplyBytes {
		return line, nil
	}
	fields := cloneObject(r.Fields)
	// "truncated" goes before "re" so the correlation stays last; a
	// handler may have set it already (a text cut for IRC).
	switch n := len(fields); {
	case hasKey(fields, "truncated"):
	case n > 0 && fields[n-1].Key == "re":
		fields = append(fields[:n-1:n-1], Field{"truncated", true}, fields[n-1])
	default:
		fields = append(fields, Field{"truncated", true})
	}
	for {
		line = encodeLine(r.Verb, fields)
		over := len(line) - MaxReplyBytes
		if over <= 0 {
			return line, nil
		}
		if shortenLongest(fields, over) {
			continue
		}
		// Last resort: a 64-character id beside a reply with many fixed
		// fields (MESSAGE) cannot fit; deliver the content without "re".
		if n := len(fields); n > 0 && fields[n-1].Key == "re" {
			fields = fields[:n-1]
			continue
		}
		return "", ErrReplyTooLong
	}
}

func hasKey(o Object, key string) bool {
	for _, f := range o {
		if f.Key == key {
			return true
		}
	}
	return false
}

func encodeLine(verb string, fields Object) string {
	var b strings.Builder
	b.WriteString(Prefix)
	b.WriteByte(' ')
	b.WriteString(verb)
	b.WriteByte(' ')
	writeObject(&b, fields)
	return b.String()
}

func writeObject(b *strings.Builder, o Object) {
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, f.Key)
		b.WriteByte(':')
		writeValue(b, f.Value)
	}
	b.WriteByte('}')
}

func writeValue(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		writeString(b, v)
	case Text:
		writeString(b, string(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int:
		b.WriteString(strconv.Itoa(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case []string:
		writeStrings(b, v)
	case TextList:
		writeStrings(b, v)
	case Object:
		writeObject(b, v)
	default:
		panic("pircan: unsupported reply value type")
	}
}

func writeStrings(b *strings.Builder, list []string) {
	b.WriteByte('[')
	for i, s := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, s)
	}
	b.WriteByte(']')
}

// writeString writes s as a JSON string. Every control character is escaped
// (so no CR, LF or NUL can reach the IRC line), invalid UTF-8 becomes U+FFFD,
// and HTML characters are left alone: the reader is not a browser.
func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		b.WriteString(escapeRune(r))
	}
	b.WriteByte('"')
}

const hexDigits = "0123456789abcdef"

func escapeRune(r rune) string {
	switch r {
	case '"':
		return `\"`
	case '\\':
		return `\\`
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	case '\u2028', '\u2029':
		return `\u202` + string(hexDigits[r&0xf])
	}
	if r < 0x20 || r == 0x7f {
		return `\u00` + string(hexDigits[r>>4]) + string(hexDigits[r&0xf])
	}
	return string(r) // utf8.RuneError for invalid bytes encodes as U+FFFD
}

func escapedLen(s string) int {
	n := 0
	for _, r := range s {
		n += len(escapeRune(r))
	}
	return n
}

// leaf points at one user-written string inside an Object: a Text field
// (item < 0) or the last item of a TextList field.
type leaf struct {
	obj  Object
	i    int
	item int
}

func (l leaf) get() string {
	if l.item < 0 {
		return string(l.obj[l.i].Value.(Text))
	}
	return l.obj[l.i].Value.(TextList)[l.item]
}

// set replaces the string; an emptied list item is dropped from its list.
func (l leaf) set(s string) {
	if l.item < 0 {
		l.obj[l.i].Value = Text(s)
		return
	}
	list := l.obj[l.i].Value.(TextList)
	if s == "" {
		l.obj[l.i].Value = append(list[:l.item:l.item], list[l.item+1:]...)
		return
	}
	list[l.item] = s
}

func leaves(o Object, out []leaf) []leaf {
	for i := range o {
		switch v := o[i].Value.(type) {
		case Text:
			out = append(out, leaf{o, i, -1})
		case TextList:
			// Only the last item: a list is shortened from its end.
			if len(v) > 0 {
				out = append(out, leaf{o, i, len(v) - 1})
			}
		case Object:
			out = leaves(v, out)
		}
	}
	return out
}

// shortenLongest cuts the user-written string with the longest encoding by
// at least `over` encoded bytes, or removes it if it is a list item that
// would be left empty. It reports false when nothing is left to cut.
func shortenLongest(o Object, over int) bool {
	var best leaf
	bestLen := -1
	for _, l := range leaves(o, nil) {
		n := escapedLen(l.get())
		if l.item >= 0 {
			n += 3 // quotes and comma go with a dropped item
		}
		if n > bestLen && n > 0 {
			best, bestLen = l, n
		}
	}
	if bestLen < 0 {
		return false
	}
	if best.item >= 0 {
		best.set("") // list items are dropped whole: a cut capability would be a wrong one
	} else {
		best.set(cutEscaped(best.get(), over))
	}
	return true
}

// cutEscaped removes whole runes from the end of s until its encoding is at
// least `over` bytes shorter, so the cut always lands on a UTF-8 boundary.
func cutEscaped(s string, over int) string {
	removed := 0
	for len(s) > 0 && removed < over {
		r, size := utf8.DecodeLastRuneInString(s)
		removed += len(escapeRune(r))
		s = s[:len(s)-size]
	}
	return s
}

func cloneObject(o Object) Object {
	out := make(Object, len(o))
	for i, f := range o {
		switch v := f.Value.(type) {
		case Object:
			f.Value = cloneObject(v)
		case TextList:
			f.Value = append(TextList(nil), v...)
		}
		out[i] = f
	}
	return out
}

// plainLine makes people-facing text safe for one IRC line.
func plainLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	for len(s) > MaxReplyBytes {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}
