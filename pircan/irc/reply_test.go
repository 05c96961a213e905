package irc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEncodeExact(t *testing.T) {
	tests := []struct {
		name string
		r    Reply
		want string
	}{
		{"nil fields", Reply{Verb: "LOGOUT"}, `PIRCAN/1 LOGOUT {}`},
		{"empty object", Reply{Verb: "HELP", Fields: Object{}}, `PIRCAN/1 HELP {}`},
		{"one string", Reply{Verb: "ECHO", Fields: Object{{"text", "hello"}}}, `PIRCAN/1 ECHO {"text":"hello"}`},
		{
			"key order kept, re last",
			Reply{Verb: "HELLO", Fields: Object{
				{"zeta", "z"}, {"alpha", "a"}, {"new", true}, {"old", false}, {"re", "r1"},
			}},
			`PIRCAN/1 HELLO {"zeta":"z","alpha":"a","new":true,"old":false,"re":"r1"}`,
		},
		{
			"every value type",
			Reply{Verb: "WHOAMI", Fields: Object{
				{"agent_id", "6c1f"},
				{"name", Text("Hazmat Agent")},
				{"n", 5}, {"neg", -3}, {"big", int64(1) << 40},
				{"owner", nil},
				{"caps", []string{"hazmat", "chemistry"}},
				{"none", []string{}}, {"nil_list", []string(nil)},
				{"tags", TextList{"x", "y"}},
				{"nested", Object{{"name", "o"}, {"verification", nil}, {"deep", Object{{"k", Text("v")}}}}},
				{"empty_obj", Object{}},
				{"re", "r1"},
			}},
			`PIRCAN/1 WHOAMI {"agent_id":"6c1f","name":"Hazmat Agent","n":5,"neg":-3,"big":1099511627776,"owner":null,` +
				`"caps":["hazmat","chemistry"],"none":[],"nil_list":[],"tags":["x","y"],` +
				`"nested":{"name":"o","verification":null,"deep":{"k":"v"}},"empty_obj":{},"re":"r1"}`,
		},
		{
			"no HTML escaping",
			Reply{Verb: "ECHO", Fields: Object{{"text", Text("<b>a & b</b>")}, {"url", "https://x.org/?a=1&b=<2>"}}},
			`PIRCAN/1 ECHO {"text":"<b>a & b</b>","url":"https://x.org/?a=1&b=<2>"}`,
		},
		{
			"escapes",
			Reply{Verb: "ECHO", Fields: Object{{"text", Text("q\" b\\ n\n r\r t\t z\x00 u\x1f d\x7f ls\u2028 ps\u2029")}}},
			`PIRCAN/1 ECHO {"text":"q\" b\\ n\n r\r t\t z\u0000 u\u001f d\u007f ls\u2028 ps\u2029"}`,
		},
		{
			"non-ASCII kept raw, C1 escaped",
			Reply{Verb: "ECHO", Fields: Object{{"text", "é日😀\u0085\u009b"}}},
			`PIRCAN/1 ECHO {"text":"é日😀\u0085\u009b"}`,
		},
		{
			"bidi controls escaped, RTL text and ZWJ emoji raw",
			Reply{Verb: "ECHO", Fields: Object{{"text", Text("\u202eabc\u202c \u2066x\u2069 \u200f\u200e\u061c مرحبا שלום 👩\u200d👩\u200d👧")}}},
			"PIRCAN/1 ECHO {\"text\":\"\\u202eabc\\u202c \\u2066x\\u2069 \\u200f\\u200e\\u061c مرحبا שלום 👩\u200d👩\u200d👧\"}",
		},
		{
			"invalid UTF-8 becomes U+FFFD, byte by byte",
			Reply{Verb: "ECHO", Fields: Object{{"text", "a\xffb\xe2\x82c"}, {"l", []string{"\xc3"}}}},
			"PIRCAN/1 ECHO {\"text\":\"a\uFFFDb\uFFFD\uFFFDc\",\"l\":[\"\uFFFD\"]}",
		},
		{
			"keys are escaped too",
			Reply{Verb: "ECHO", Fields: Object{{"a\"b\n", 1}}},
			`PIRCAN/1 ECHO {"a\"b\n":1}`,
		},
		{
			"list -END line",
			Reply{Verb: "FIND-END", Fields: Object{{"returned", 0}, {"total", 0}, {"offset", 0}, {"re", "r1"}}},
			`PIRCAN/1 FIND-END {"returned":0,"total":0,"offset":0,"re":"r1"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Encode(tc.r)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if got != tc.want {
				t.Errorf("Encode:\n got  %s\n want %s", got, tc.want)
			}
			if _, obj := replySplit(t, got); obj == nil {
				t.Errorf("JSON part is not an object")
			}
		})
	}
}

func TestEncodeWith(t *testing.T) {
	base := make(Object, 1, 4)
	base[0] = Field{"a", 1}
	x := base.With("re", "x")
	y := base.With("re", "y") // must not overwrite x's backing array
	if len(base) != 1 {
		t.Fatalf("With changed its receiver: %v", base)
	}
	gx, _ := Encode(Reply{Verb: "V", Fields: x})
	gy, _ := Encode(Reply{Verb: "V", Fields: y})
	if gx != `PIRCAN/1 V {"a":1,"re":"x"}` || gy != `PIRCAN/1 V {"a":1,"re":"y"}` {
		t.Errorf("With: %s / %s", gx, gy)
	}
}

// replySplit checks the reply frame and returns its verb and decoded object.
func replySplit(t testing.TB, line string) (string, map[string]any) {
	t.Helper()
	rest, ok := strings.CutPrefix(line, Prefix+" ")
	if !ok {
		t.Fatalf("reply %q does not start with %q", line, Prefix+" ")
	}
	verb, js, ok := strings.Cut(rest, " ")
	if !ok || verb == "" {
		t.Fatalf("reply %q has no verb and JSON", line)
	}
	var obj map[string]any
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		t.Fatalf("JSON part of %q does not decode: %v", line, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("text after the JSON object in %q", line)
	}
	return verb, obj
}

// replyTopKeys lists the keys of a JSON object in wire order.
func replyTopKeys(t testing.TB, js string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(js))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %q", js)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("bad key in %q: %v", js, err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("bad value in %q: %v", js, err)
		}
	}
	return keys
}

func replyJSONPart(line string) string {
	_, rest, _ := strings.Cut(line, " ")
	_, js, _ := strings.Cut(rest, " ")
	return js
}

// replyLineOK checks what every encoded line must satisfy.
func replyLineOK(t testing.TB, line string) {
	t.Helper()
	if len(line) > MaxReplyBytes {
		t.Fatalf("line of %d bytes (> %d): %q", len(line), MaxReplyBytes, line)
	}
	if strings.ContainsAny(line, "\r\n\x00") {
		t.Fatalf("line contains CR, LF or NUL: %q", line)
	}
	if !utf8.ValidString(line) {
		t.Fatalf("line is not valid UTF-8: %q", line)
	}
}

// replySanitize is what the encoder promises for invalid UTF-8: each bad byte
// becomes U+FFFD, the way a Go range loop reads it.
func replySanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

func TestEncodeTruncatesLongText(t *testing.T) {
	desc := strings.Repeat("d", 500)
	r := Reply{Verb: "FIND-RESULT", Fields: Object{
		{"agent_id", "6c1f"}, {"name", Text("Short")}, {"description", Text(desc)}, {"re", "r1"},
	}}
	line, err := Encode(r)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	replyLineOK(t, line)
	if len(line) != MaxReplyBytes {
		t.Errorf("ASCII text should be cut to exactly %d bytes, line has %d", MaxReplyBytes, len(line))
	}
	if !strings.HasSuffix(line, `","truncated":true,"re":"r1"}`) {
		t.Errorf("truncated must come just before re, which stays last: %s", line)
	}
	if got := replyTopKeys(t, replyJSONPart(line)); !reflect.DeepEqual(got, []string{"agent_id", "name", "description", "truncated", "re"}) {
		t.Errorf("keys %v", got)
	}
	_, obj := replySplit(t, line)
	if obj["name"] != "Short" || obj["agent_id"] != "6c1f" || obj["re"] != "r1" || obj["truncated"] != true {
		t.Errorf("other fields changed: %v", obj)
	}
	d, _ := obj["description"].(string)
	if d == "" || !strings.HasPrefix(desc, d) {
		t.Errorf("description %q is not a non-empty prefix of the original", d)
	}
	// The input is untouched.
	if r.Fields[2].Value != Text(desc) || len(r.Fields) != 4 {
		t.Errorf("Encode changed its input")
	}
}

func TestEncodeTruncatedWithoutRe(t *testing.T) {
	line, err := Encode(Reply{Verb: "ECHO", Fields: Object{{"text", Text(strings.Repeat("x", 400))}, {"account", "alice"}}})
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	replyLineOK(t, line)
	if got := replyTopKeys(t, replyJSONPart(line)); !reflect.DeepEqual(got, []string{"text", "account", "truncated"}) {
		t.Errorf("keys %v, want truncated appended last", got)
	}
}

func TestEncodeBoundary(t *testing.T) {
	frame := len(`PIRCAN/1 ECHO {"text":""}`)
	at := func(n int) Reply {
		return Reply{Verb: "ECHO", Fields: Object{{"text", Text(strings.Repeat("x", n-frame))}}}
	}
	line, err := Encode(at(MaxReplyBytes))
	if err != nil || len(line) != MaxReplyBytes || strings.Contains(line, "truncated") {
		t.Errorf("a reply of exactly %d bytes must pass untouched: %v %d %s", MaxReplyBytes, err, len(line), line)
	}
	line, err = Encode(at(MaxReplyBytes + 1))
	if err != nil || len(line) > MaxReplyBytes || !strings.Contains(line, `"truncated":true`) {
		t.Errorf("a reply of %d bytes must be truncated: %v %d %s", MaxReplyBytes+1, err, len(line), line)
	}
}

func TestEncodeTruncatesOnRuneBoundaries(t *testing.T) {
	units := []string{"é", "日", "😀", "👩‍👩‍👧", "a😀", `"`, `\`, "\x01", "\u2028", "\xff", "\xe2\x82", "€\xac", "\u009b", "\u202e", "a\u2066b"}
	for _, u := range units {
		for pad := 0; pad < 6; pad++ {
			text := strings.Repeat("p", pad) + strings.Repeat(u, 400/len(u)+1)
			r := Reply{Verb: "ECHO", Fields: Object{{"text", Text(text)}, {"re", "r1"}}}
			line, err := Encode(r)
			if err != nil {
				t.Fatalf("Encode(%q…): %v", u, err)
			}
			replyLineOK(t, line)
			_, obj := replySplit(t, line)
			got, _ := obj["text"].(string)
			if !strings.HasPrefix(replySanitize(text), got) {
				t.Errorf("unit %q pad %d: decoded text is not a prefix of the input: %q", u, pad, got)
			}
			if obj["truncated"] != true || obj["re"] != "r1" {
				t.Errorf("unit %q pad %d: %v", u, pad, obj)
			}
			// Not cut more than one escaped rune below the cap.
			if len(line) < MaxReplyBytes-12 {
				t.Errorf("unit %q pad %d: line cut to %d bytes, far below %d", u, pad, len(line), MaxReplyBytes)
			}
		}
	}
}

func TestEncodeTruncatesNested(t *testing.T) {
	long := strings.Repeat("n", 300)
	r := Reply{Verb: "CONTACT-ITEM", Fields: Object{
		{"message_id", "m1"},
		{"from", Object{{"agent_id", "a1"}, {"name", Text(long)}}},
		{"text", Text(long)},
		{"re", "r1"},
	}}
	line, err := Encode(r)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	replyLineOK(t, line)
	_, obj := replySplit(t, line)
	from, _ := obj["from"].(map[string]any)
	if from == nil || from["agent_id"] != "a1" || !strings.HasPrefix(long, from["name"].(string)) {
		t.Errorf("nested object: %v", obj["from"])
	}
	if !strings.HasPrefix(long, obj["text"].(string)) || obj["truncated"] != true {
		t.Errorf("text/truncated: %v", obj)
	}
	if n := r.Fields[1].Value.(Object)[1].Value; n != Text(long) {
		t.Errorf("Encode changed the nested input object")
	}
}

func TestEncodeTextListShortened(t *testing.T) {
	long := strings.Repeat("c", 400)
	list := TextList{"hazmat", long, "chemistry"}
	line, err := Encode(Reply{Verb: "FIND-RESULT", Fields: Object{{"capabilities", list}, {"re", "r1"}}})
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	replyLineOK(t, line)
	_, obj := replySplit(t, line)
	got, _ := obj["capabilities"].([]any)
	if len(got) != 1 || got[0] != "hazmat" {
		t.Errorf("items are dropped whole from the end until the reply fits: %v", got)
	}
	if list[1] != long {
		t.Errorf("Encode changed the input list")
	}
}

// TextList items are dropped whole from the end: what is left must be a
// prefix of the list, each item equal to (a prefix of) the original item.

func TestEncodeTextListDropsFromEnd(t *testing.T) {
	var list TextList
	for i := range 20 {
		list = append(list, fmt.Sprintf("cap%02d-%s", i, strings.Repeat("x", 25)))
	}
	orig := append(TextList(nil), list...)
	line, err := Encode(Reply{Verb: "FIND-RESULT", Fields: Object{{"agent_id", "a1"}, {"capabilities", list}, {"re", "r1"}}})
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	replyLineOK(t, line)
	_, obj := replySplit(t, line)
	got, _ := obj["capabilities"].([]any)
	if len(got) == 0 || len(got) >= len(orig) {
		t.Fatalf("want some but not all items kept, got %d", len(got))
	}
	for i, g := range got {
		if !strings.HasPrefix(orig[i], g.(string)) {
			t.Fatalf("item %d is %q, not a prefix of %q: items were dropped from the front/middle, not the end (kept %v)", i, g, orig[i], got)
		}
	}
	if !reflect.DeepEqual(list, orig) {
		t.Errorf("Encode changed the input list")
	}
}

// What the encoder used to give up to make a reply fit, it now keeps: re,
// and at least the first character of every text.
func TestEncodeKeepsReAndEveryField(t *testing.T) {
	id := "0b0e0f4c-1111-4222-8333-944455556666"
	re := strings.Repeat("r", MaxIDBytes)
	tests := []Reply{
		{Verb: "MESSAGE", Fields: Object{
			{"message_id", id}, {"from", Object{{"agent_id", id}, {"name", Text(strings.Repeat("\u2028", 80))}}},
			{"agreement_id", id}, {"conversation_id", id}, {"hop", 8}, {"at", "2026-03-01T12:00:00Z"},
			{"text", ""}, {"continues", true}, {"truncated", true}, {"re", re},
		}},
		{Verb: "ERROR", Fields: Object{
			{"verb", Text(strings.Repeat("V", 380))}, {"code", "invalid_argument"}, {"field", Text(strings.Repeat("f", 380))},
			{"message", Text(strings.Repeat("m", 380))}, {"re", re},
		}},
		{Verb: "CONTACT-ITEM", Fields: Object{
			{"request_id", id}, {"from", Object{{"agent_id", id}, {"name", Text(strings.Repeat("😀", 80))}}},
			{"purpose", Text(strings.Repeat("\u0085", 300))}, {"scopes", TextList{"task:" + strings.Repeat("s", 64), "message"}},
			{"ttl_days", 365}, {"status", "cancelled"}, {"expires_at", "2026-03-01T12:00:00Z"}, {"re", re},
		}},
	}
	for _, r := range tests {
		line, err := Encode(r)
		if err != nil {
			t.Fatalf("%s: %v", r.Verb, err)
		}
		replyOracle(t, r, line)
		if !strings.HasSuffix(line, `,"re":"`+re+`"}`) {
			t.Errorf("%s: re not kept last: %s", r.Verb, line)
		}
	}
	// Texts give way together: neither ERROR text is cut far below the other.
	line, _ := Encode(tests[1])
	_, obj := replySplit(t, line)
	v, m := len(obj["verb"].(string)), len(obj["message"].(string))
	if v < 20 || m < 20 || v-m > 2 || m-v > 2 {
		t.Errorf("verb cut to %d and message to %d bytes: %s", v, m, line)
	}
}

func TestEncodeTooLong(t *testing.T) {
	// Plain strings are never shortened: a reply that cannot fit is a bug.
	_, err := Encode(Reply{Verb: "ERROR", Fields: Object{{"verb", strings.Repeat("V", 390)}, {"message", Text("m")}}})
	if !errors.Is(err, ErrReplyTooLong) {
		t.Errorf("Encode: %v, want ErrReplyTooLong", err)
	}
	_, err = Encode(Reply{Verb: "X", Fields: Object{{"ids", []string{strings.Repeat("i", 200), strings.Repeat("j", 200)}}}})
	if !errors.Is(err, ErrReplyTooLong) {
		t.Errorf("Encode of a long []string: %v, want ErrReplyTooLong ([]string is not user text)", err)
	}
}

func TestEncodeNeverBreaksTheLine(t *testing.T) {
	nasty := []string{
		"a\r\nPRIVMSG #x :owned", "\n", "\r", "\x00", "nul\x00in", "\x01ACTION x\x01", "\x1b[31m", "\x7f",
		"\u0085", "\u2028\u2029", "\xff\xfe", "\xc0\x8a", "\xed\xa0\x80", "\"\\", "\t\v\f",
	}
	for _, s := range nasty {
		r := Reply{Verb: "ECHO", Fields: Object{
			{s, s}, {"text", Text(s)}, {"list", TextList{s, s}}, {"strs", []string{s}},
			{"obj", Object{{"k", Text(s)}}}, {"re", s},
		}}
		line, err := Encode(r)
		if err != nil {
			t.Fatalf("Encode(%q): %v", s, err)
		}
		replyLineOK(t, line)
		if strings.ContainsAny(line, "\u2028\u2029") {
			t.Errorf("raw U+2028/U+2029 in %q", line)
		}
		_, obj := replySplit(t, line)
		want := replySanitize(s)
		if obj[want] != want || obj["text"] != want || obj["re"] != want {
			t.Errorf("Encode(%q) decodes to %v", s, obj)
		}
		if l, _ := obj["list"].([]any); len(l) != 2 || l[0] != want || l[1] != want {
			t.Errorf("list: %v", obj["list"])
		}
		// And the long, truncated form.
		long := strings.Repeat(s, 400/len(s)+1)
		line, err = Encode(Reply{Verb: "ECHO", Fields: Object{{"text", Text(long)}, {"list", TextList{long}}, {"re", "r1"}}})
		if err != nil {
			t.Fatalf("Encode(long %q): %v", s, err)
		}
		replyLineOK(t, line)
		if strings.ContainsAny(line, "\u2028\u2029") {
			t.Errorf("raw U+2028/U+2029 in %q", line)
		}
		replySplit(t, line)
	}
}

func TestEncodePlain(t *testing.T) {
	tests := []struct{ in, want string }{
		{"PIRCAN help: send PIRCAN/1 HELP", "PIRCAN help: send PIRCAN/1 HELP"},
		{"line1\r\nline2", "line1  line2"},
		{"a\x00b\tc\x7fd\x01e", "a b c d e"},
		{"é 😀 <b>&", "é 😀 <b>&"},
		{"bad \xff\xfe byte", "bad \uFFFD byte"},
		{"c1\u009b bidi\u202e\u2066 ls\u2028 rtl שלום", "c1  bidi   ls  rtl שלום"},
	}
	for _, tc := range tests {
		got, err := Encode(Reply{Plain: tc.in, Verb: "IGNORED", Fields: Object{{"a", 1}}})
		if err != nil {
			t.Fatalf("Encode(Plain %q): %v", tc.in, err)
		}
		if got != tc.want {
			t.Errorf("Encode(Plain %q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A plain line is capped at MaxReplyBytes raw bytes, whatever it contains.
func TestEncodePlainLength(t *testing.T) {
	for _, unit := range []string{"a", "é", "日", "😀", "a😀", "\n", "\xff", `"`, `\`, "\u2028"} {
		for pad := 0; pad < 4; pad++ {
			in := strings.Repeat("p", pad) + strings.Repeat(unit, 1000/len(unit))
			got, err := Encode(Reply{Plain: in})
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if len(got) > MaxReplyBytes {
				t.Errorf("Plain of %q×%d (pad %d): %d bytes, more than %d", unit, 1000/len(unit), pad, len(got), MaxReplyBytes)
				continue
			}
			if strings.ContainsAny(got, "\r\n\x00") || !utf8.ValidString(got) {
				t.Errorf("Plain line %q is not one valid line", got)
			}
			// Runs of invalid bytes collapse to one U+FFFD; otherwise the
			// line must be cut near the cap, not far below it.
			full := strings.Map(func(r rune) rune {
				if replyRaw(r) {
					return ' '
				}
				return r
			}, strings.ToValidUTF8(in, "\uFFFD"))
			if len(full) > MaxReplyBytes && len(got) < MaxReplyBytes-12 {
				t.Errorf("Plain of %q cut to %d bytes, far below %d", unit, len(got), MaxReplyBytes)
			}
		}
	}
}

// replyRefLen is the length the encoder must give s: an independent statement of
// the escaping rules (short escapes, a 6-byte \uXXXX for every other
// character replyRaw names: C0, DEL, C1, U+2028/U+2029, the bidi controls;
// U+FFFD per invalid byte, everything else raw).
func replyRefLen(s string) int {
	n := 2
	for _, r := range s {
		switch {
		case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
			n += 2
		case replyRaw(r):
			n += 6
		default:
			n += utf8.RuneLen(r)
		}
	}
	return n
}

func replyRefListLen(l []string) int {
	n := 2
	for i, s := range l {
		if i > 0 {
			n++
		}
		n += replyRefLen(s)
	}
	return n
}

// replyRaw reports a character that must never appear raw in a reply: C0,
// DEL, C1, the line and paragraph separators and the bidi controls.
func replyRaw(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f || r == '\u2028' || r == '\u2029' ||
		r == '\u061c' || r == '\u200e' || r == '\u200f' || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// replyOracle is Encode's promise, checked against the reply the line was
// made from: the line fits its budget (a MESSAGE or TASK line without its
// re, and with it MaxRelayedReplyBytes), is valid JSON with the same keys
// in the same order (plus "truncated" before a final "re"), carries no raw
// control character, keeps re and every field that is not Text or
// TextList exactly, keeps each Text as a non-empty prefix of the original
// (empty only if it was), each TextList as a prefix of its items, and says
// "truncated": true exactly when something was cut (or the reply had it).
func replyOracle(t testing.TB, r Reply, line string) {
	t.Helper()
	if strings.IndexFunc(line, replyRaw) >= 0 {
		t.Fatalf("raw control or bidi character in %q", line)
	}
	if !utf8.ValidString(line) {
		t.Fatalf("line is not valid UTF-8: %q", line)
	}
	js := replyJSONPart(line)
	keys := replyTopKeys(t, js)
	hasRe := len(r.Fields) > 0 && r.Fields[len(r.Fields)-1].Key == "re"
	if relayed[r.Verb] && hasRe {
		i := strings.LastIndex(line, `,"re":"`)
		if i < 0 {
			t.Fatalf("no re in %q", line)
		}
		if bare := line[:i] + "}"; len(bare) > MaxReplyBytes {
			t.Fatalf("%s line without re has %d bytes (> %d): %q", r.Verb, len(bare), MaxReplyBytes, line)
		}
		if len(line) > MaxRelayedReplyBytes {
			t.Fatalf("%s line has %d bytes with re (> %d): %q", r.Verb, len(line), MaxRelayedReplyBytes, line)
		}
		if irc := ":PIRCAN!~pircan@127.0.0.1 NOTICE " + strings.Repeat("n", 64) + " :" + line + "\r\n"; len(irc) > 512 {
			t.Fatalf("IRC line of %d bytes (> 512) for a 64-byte nick: %q", len(irc), line)
		}
	} else if len(line) > MaxReplyBytes {
		t.Fatalf("line of %d bytes (> %d): %q", len(line), MaxReplyBytes, line)
	}
	verb, obj := replySplit(t, line)
	if verb != r.Verb {
		t.Fatalf("verb %q, want %q", verb, r.Verb)
	}
	cut := false
	for _, f := range r.Fields {
		got, ok := obj[f.Key]
		if !ok {
			t.Fatalf("field %q missing from %q", f.Key, line)
		}
		if f.Key != "truncated" {
			cut = replyCompare(t, f.Key, f.Value, got) || cut
		}
	}
	preset := hasKey(r.Fields, "truncated")
	var want []string
	for _, f := range r.Fields {
		want = append(want, f.Key)
	}
	if cut && !preset {
		if hasRe {
			want = append(want[:len(want)-1:len(want)-1], "truncated", "re")
		} else {
			want = append(want, "truncated")
		}
	}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("keys %v, want %v (cut: %v): %q", keys, want, cut, line)
	}
	if !preset && (obj["truncated"] == true) != cut {
		t.Fatalf("truncated = %v, but cut = %v: %q", obj["truncated"], cut, line)
	}
	if preset {
		replyCompare(t, "truncated", r.Fields[keyIndex(r.Fields, "truncated")].Value, obj["truncated"])
	}
}

func keyIndex(o Object, key string) int {
	for i, f := range o {
		if f.Key == key {
			return i
		}
	}
	return -1
}

// replyCompare checks one decoded value against what was encoded and
// reports whether it was cut.
func replyCompare(t testing.TB, path string, want, got any) bool {
	t.Helper()
	switch w := want.(type) {
	case nil:
		if got != nil {
			t.Fatalf("%s: %v, want null", path, got)
		}
	case string:
		if got != replySanitize(w) {
			t.Fatalf("%s: %q, want %q unchanged", path, got, replySanitize(w))
		}
	case Text:
		g, ok := got.(string)
		full := replySanitize(string(w))
		if !ok || !strings.HasPrefix(full, g) || (g == "" && full != "") {
			t.Fatalf("%s: %q is not a non-empty prefix of %q", path, got, full)
		}
		return g != full
	case bool:
		if got != w {
			t.Fatalf("%s: %v, want %v", path, got, w)
		}
	case int, int64:
		if got != json.Number(fmt.Sprint(w)) {
			t.Fatalf("%s: %v, want %v", path, got, w)
		}
	case []string:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			t.Fatalf("%s: %v, want %q whole", path, got, w)
		}
		for i := range w {
			replyCompare(t, path, w[i], g[i])
		}
	case TextList:
		g, ok := got.([]any)
		if !ok || len(g) > len(w) {
			t.Fatalf("%s: %v is not a prefix of %q", path, got, w)
		}
		for i := range g {
			replyCompare(t, path, w[i], g[i])
		}
		return len(g) < len(w)
	case Object:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			t.Fatalf("%s: %v, want an object of %d keys", path, got, len(w))
		}
		cut := false
		for _, f := range w {
			v, ok := g[f.Key]
			if !ok {
				t.Fatalf("%s.%s missing", path, f.Key)
			}
			cut = replyCompare(t, path+"."+f.Key, f.Value, v) || cut
		}
		return cut
	default:
		t.Fatalf("%s: unexpected type %T", path, want)
	}
	return false
}

// replyMinLen is the shortest line Encode may make of r: every Text down to
// its first character, every TextList empty, "truncated" added.
func replyMinLen(r Reply) (bare, withRe int) {
	min := cloneObject(r.Fields)
	var shrink func(o Object)
	shrink = func(o Object) {
		for i := range o {
			switch v := o[i].Value.(type) {
			case Text:
				s := replySanitize(string(v))
				if _, size := utf8.DecodeRuneInString(s); size < len(s) {
					o[i].Value = Text(s[:size])
				}
			case TextList:
				o[i].Value = TextList{}
			case Object:
				shrink(v)
			}
		}
	}
	shrink(min)
	n := len(`,"truncated":true`)
	for _, f := range min {
		if f.Key == "truncated" {
			n = 0
		}
	}
	withRe = replyRefObjectLen(r.Verb, min) + n
	bare = withRe
	if k := len(min); k > 0 && min[k-1].Key == "re" {
		bare = replyRefObjectLen(r.Verb, min[:k-1]) + n
	}
	return bare, withRe
}

// replyRefObjectLen is the length of a reply line by replyRefLen's rules.
func replyRefObjectLen(verb string, o Object) int {
	var obj func(o Object) int
	obj = func(o Object) int {
		n := 2 + max(len(o)-1, 0)
		for _, f := range o {
			n += replyRefLen(f.Key) + 1
			switch v := f.Value.(type) {
			case nil:
				n += 4
			case string:
				n += replyRefLen(v)
			case Text:
				n += replyRefLen(string(v))
			case bool:
				n += len(fmt.Sprint(v))
			case int, int64:
				n += len(fmt.Sprint(v))
			case []string:
				n += replyRefListLen(v)
			case TextList:
				n += replyRefListLen(v)
			case Object:
				n += obj(v)
			}
		}
		return n
	}
	return len(Prefix) + 1 + len(verb) + 1 + obj(o)
}

func FuzzEncode(f *testing.F) {
	addFuzzSeeds(f, 13) // testdata/fuzz/FuzzEncode
	f.Fuzz(func(t *testing.T, text, a, b, s, re string, message bool) {
		verb := "FIND-RESULT"
		if message {
			verb = "MESSAGE" // re may stand outside the 350 bytes
		}
		r := Reply{Verb: verb, Fields: Object{
			{"agent_id", s},
			{"name", Text(text)},
			{"capabilities", TextList{a, b}},
			{"from", Object{{"name", Text(b + text)}, {"n", len(a)}}},
			{"re", re},
		}}
		line, err := Encode(r)
		bare, withRe := replyMinLen(r)
		fits := bare <= MaxReplyBytes && (!message && withRe <= MaxReplyBytes || message && withRe <= MaxRelayedReplyBytes)
		if err != nil {
			if !errors.Is(err, ErrReplyTooLong) {
				t.Fatalf("unexpected error %v", err)
			}
			if fits {
				t.Fatalf("ErrReplyTooLong, but the shortest form fits (%d/%d bytes)", bare, withRe)
			}
			return
		}
		if !fits && replyRefObjectLen(verb, r.Fields) != len(line) {
			t.Fatalf("a reply whose shortest form cannot fit was encoded: %q", line)
		}
		replyOracle(t, r, line)
	})
}
