package irc

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/creatimus/pircan/pircan"
)

// MaxReplyBytes is the cap on one reply's NOTICE text (spec §2).
const MaxReplyBytes = 350

// A MESSAGE or TASK line may pass MaxReplyBytes by its "re" (DESIGN.md: the
// spec's own fields of those lines fill 350 bytes), up to
// MaxRelayedReplyBytes with it: what an IRC line (512 bytes with CR LF)
// leaves for the text beside ":<source> NOTICE <nick> :" for a recipient
// nick of maxNickBytes and a ":<source>" of PIRCAN of up to relaySourceBytes
// (":PIRCAN!~pircan@127.0.0.1" is 25; beside a 30-byte nick, 60 would do).
const (
	ircLineBytes         = 512
	maxNickBytes         = 64
	relaySourceBytes     = 26
	MaxRelayedReplyBytes = ircLineBytes - len("\r\n") - len(" NOTICE ") - maxNickBytes - len(" :") - relaySourceBytes
)

// relayed are the reply verbs whose "re" stands outside MaxReplyBytes.
var relayed = map[string]bool{"MESSAGE": true, "TASK": true}

// Reply is one NOTICE line: `PIRCAN/1 <VERB> {fields}`, or, for the
// people-facing plain `help`, a Plain text line.
type Reply struct {
	Verb   string
	Fields Object
	Plain  string
	// Done, when set, hears once whether the line was handed to the
	// connection for the account that asked (see transport.Line).
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
// user-written field as far as it goes: a bug in the budget of the handler
// that built it (the table test of every verb finds it), never a runtime path.
var ErrReplyTooLong = errors.New("reply does not fit in one line")

// Encode renders a reply as one line of at most MaxReplyBytes bytes (a
// MESSAGE or TASK line: without its re; see MaxRelayedReplyBytes) that
// carries no CR, LF, NUL, C0, C1 or bidi control raw. When user-written
// fields must be shortened, the reply carries "truncated": true. No field
// is ever dropped or emptied: a Text keeps at least its first character, a
// TextList loses whole items from its end, and everything else (re too) is
// written as given.
func Encode(r Reply) (string, error) {
	if r.Plain != "" {
		return plainLine(r.Plain), nil
	}
	if over, size := measure(r.Verb, r.Fields); over <= 0 {
		return encodeLine(r.Verb, r.Fields, size), nil
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
	// No text longer than a whole line can stay whole: cut those first, so
	// that a 60,000-byte text costs no more than a short one.
	for _, l := range leaves(fields, nil) {
		if l.item < 0 && len(l.get()) > MaxRelayedReplyBytes {
			l.set(cutEscaped(l.get(), MaxRelayedReplyBytes))
		}
	}
	for {
		over, size := measure(r.Verb, fields)
		if over <= 0 {
			return encodeLine(r.Verb, fields, size), nil
		}
		if !shortenLongest(fields, over) {
			return "", ErrReplyTooLong
		}
	}
}

// overBy is how many bytes the reply is over its budget (<= 0: it fits).
func overBy(verb string, fields Object) int {
	over, _ := measure(verb, fields)
	return over
}

// measure is overBy, and the length of the line (lineLen).
func measure(verb string, fields Object) (over, line int) {
	line = lineLen(verb, fields)
	n := len(fields)
	if !relayed[verb] || n == 0 || fields[n-1].Key != "re" {
		return line - MaxReplyBytes, line
	}
	bare := lineLen(verb, fields[:n-1])
	return max(bare-MaxReplyBytes, line-MaxRelayedReplyBytes), line
}

func hasKey(o Object, key string) bool {
	for _, f := range o {
		if f.Key == key {
			return true
		}
	}
	return false
}

// encodeLine writes the line, of size bytes (lineLen), in one allocation.
func encodeLine(verb string, fields Object, size int) string {
	var b strings.Builder
	b.Grow(size)
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
		writeRune(b, r)
	}
	b.WriteByte('"')
}

const hexDigits = "0123456789abcdef"

// writeRune writes a rune as a JSON string holds it. Every C0 and C1
// control, DEL, the line and paragraph separators and every bidi control
// (they can make a name read as another's) is written as a \uXXXX escape,
// so none reaches an IRC client raw, whatever the text came from.
func writeRune(b *strings.Builder, r rune) {
	switch r {
	case '"':
		b.WriteString(`\"`)
	case '\\':
		b.WriteString(`\\`)
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	default:
		if pircan.ControlRune(r) {
			b.WriteString(`\u`)
			b.WriteByte(hexDigits[r>>12&0xf])
			b.WriteByte(hexDigits[r>>8&0xf])
			b.WriteByte(hexDigits[r>>4&0xf])
			b.WriteByte(hexDigits[r&0xf])
			return
		}
		b.WriteRune(r) // utf8.RuneError for invalid bytes encodes as U+FFFD
	}
}

// lineLen is len(encodeLine(verb, o)), counted without writing it.
func lineLen(verb string, o Object) int {
	return len(Prefix) + 1 + len(verb) + 1 + objectLen(o)
}

func objectLen(o Object) int {
	n := 2 + max(len(o)-1, 0)
	for _, f := range o {
		n += 2 + pircan.EscapedLen(f.Key) + 1 + valueLen(f.Value)
	}
	return n
}

func valueLen(v any) int {
	switch v := v.(type) {
	case nil:
		return 4
	case string:
		return 2 + pircan.EscapedLen(v)
	case Text:
		return 2 + pircan.EscapedLen(string(v))
	case bool:
		return len(strconv.FormatBool(v))
	case int:
		return len(strconv.Itoa(v))
	case int64:
		return len(strconv.FormatInt(v, 10))
	case []string:
		return listLen(v)
	case TextList:
		return listLen(v)
	case Object:
		return objectLen(v)
	}
	panic("pircan: unsupported reply value type")
}

func listLen(list []string) int {
	n := 2 + max(len(list)-1, 0)
	for _, s := range list {
		n += 2 + pircan.EscapedLen(s)
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

// shortenLongest shortens the user-written string with the longest
// encoding: a list item is dropped whole (a cut capability would be a wrong
// one); a Text is cut down towards the next longest string, so that several
// texts give way together rather than one of them vanishing, and never
// below its first character. It reports false when nothing can give way.
func shortenLongest(o Object, over int) bool {
	var best leaf
	bestLen, second, tied := -1, 0, 0
	for _, l := range leaves(o, nil) {
		s := l.get()
		n := pircan.EscapedLen(s)
		if l.item >= 0 {
			n += 3 // quotes and comma go with a dropped item
		} else if _, size := utf8.DecodeRuneInString(s); size == len(s) {
			continue // a Text down to one character (or empty) stays
		}
		switch {
		case n > bestLen:
			best, second, tied = l, max(bestLen, 0), 1
			bestLen = n
		case n == bestLen:
			tied++
		case n > second:
			second = n
		}
	}
	if bestLen < 0 {
		return false
	}
	if best.item >= 0 {
		best.set("")
		return true
	}
	// Cut to the next longest, or by what is over if that is less; when
	// several tie, each takes its share of what is over.
	target := max(bestLen-over, second)
	if tied > 1 {
		target = bestLen - max(1, (over+tied-1)/tied)
	}
	best.set(cutEscaped(best.get(), target))
	return true
}

// cutEscaped is the longest prefix of s whose encoding has at most target
// bytes, and at least s's first rune: the cut always lands on a rune
// boundary, never inside an escape or a UTF-8 sequence.
func cutEscaped(s string, target int) string {
	n := 0
	for i, r := range s {
		n += pircan.EscapedRuneLen(r)
		if n > target && i > 0 {
			return s[:i]
		}
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

// plainLine makes people-facing text safe for one IRC line: what JSON
// replies escape becomes a space.
func plainLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if pircan.ControlRune(r) {
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
