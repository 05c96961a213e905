package irc

import (
	"github.com/creatimus/pircan/pircan"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// reqPadTo pads a request with spaces inside its JSON object (before the closing
// brace) until it has exactly n bytes.
func reqPadTo(t *testing.T, s string, n int) string {
	t.Helper()
	i := strings.LastIndexByte(s, '}')
	if i < 0 || len(s) > n {
		t.Fatalf("reqPadTo(%q, %d): cannot pad", s, n)
	}
	return s[:i] + strings.Repeat(" ", n-len(s)) + s[i:]
}

func TestParseOK(t *testing.T) {
	id64 := strings.Repeat("é", 32) + strings.Repeat("日", 31) + "😀" // 64 runes, 4+64+93+4 bytes
	if utf8.RuneCountInString(id64) != 64 {
		t.Fatalf("bad fixture: %d runes", utf8.RuneCountInString(id64))
	}
	tests := []struct {
		name     string
		in       string
		verb     string
		id       string
		hasID    bool
		hasArgs  bool
		argNames []string
	}{
		{name: "bare verb", in: "PIRCAN/1 HELP", verb: "HELP"},
		{name: "lower-case verb", in: "PIRCAN/1 help", verb: "HELP"},
		{name: "mixed-case verb", in: "PIRCAN/1 wHoAmI", verb: "WHOAMI"},
		{name: "lower-case prefix", in: "pircan/1 FIND", verb: "FIND"},
		{name: "mixed-case prefix and verb", in: "PirCan/1 Find", verb: "FIND"},
		{name: "surrounding spaces", in: "  PIRCAN/1 HELP  ", verb: "HELP"},
		{name: "several spaces before verb", in: "PIRCAN/1    HELP", verb: "HELP"},
		{name: "several spaces before JSON", in: `PIRCAN/1 FIND    {"q":"x"}`, verb: "FIND", hasArgs: true},
		{name: "empty object", in: "PIRCAN/1 HELP {}", verb: "HELP"},
		{name: "id only", in: `PIRCAN/1 HELP {"id":"r1"}`, verb: "HELP", id: "r1", hasID: true},
		{name: "id and args", in: `PIRCAN/1 FIND {"capability":"hazmat","id":"r2","limit":5}`, verb: "FIND", id: "r2", hasID: true, hasArgs: true},
		{name: "empty id", in: `PIRCAN/1 HELP {"id":""}`, verb: "HELP", id: "", hasID: true},
		{name: "64-char ASCII id", in: `PIRCAN/1 HELP {"id":"` + strings.Repeat("a", 64) + `"}`, verb: "HELP", id: strings.Repeat("a", 64), hasID: true},
		{name: "64 bytes of multibyte id", in: `PIRCAN/1 HELP {"id":"` + strings.Repeat("é", 30) + "😀" + `"}`, verb: "HELP", id: strings.Repeat("é", 30) + "😀", hasID: true},
		{name: "64 bytes with escapes", in: `PIRCAN/1 HELP {"id":"` + strings.Repeat(`\\`, 31) + "ab" + `"}`, verb: "HELP", id: strings.Repeat(`\`, 31) + "ab", hasID: true},
		{name: "escaped id", in: `PIRCAN/1 HELP {"id":"a\u00e9\"b"}`, verb: "HELP", id: `aé"b`, hasID: true},
		{name: "JSON whitespace", in: "PIRCAN/1 HELP { \"id\" : \"r3\" ,\t\"verb\" : \"FIND\" }", verb: "HELP", id: "r3", hasID: true, hasArgs: true},
		{name: "exactly 400 bytes", in: reqPadTo(t, `PIRCAN/1 ECHO {"text":"x","id":"r4"}`, 400), verb: "ECHO", id: "r4", hasID: true, hasArgs: true},
		{name: "verb keeps punctuation", in: "PIRCAN/1 find-end", verb: "FIND-END"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q): unexpected error %v", tc.in, err)
			}
			if req == nil {
				t.Fatalf("Parse(%q): nil request without error", tc.in)
			}
			if req.Verb != tc.verb {
				t.Errorf("Verb = %q, want %q", req.Verb, tc.verb)
			}
			if req.HasID != tc.hasID || req.ID != tc.id {
				t.Errorf("ID = %q (HasID %v), want %q (HasID %v)", req.ID, req.HasID, tc.id, tc.hasID)
			}
			if req.HasArgs() != tc.hasArgs {
				t.Errorf("HasArgs() = %v, want %v", req.HasArgs(), tc.hasArgs)
			}
			if _, ok := req.args["id"]; ok {
				t.Errorf(`"id" left among the arguments`)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	long := func(s string) string { return reqPadTo(t, s, 401) }
	tests := []struct {
		name  string
		in    string
		code  pircan.Code
		req   bool   // a partial request comes back
		verb  string // when req
		id    string // when req
		hasID bool
	}{
		// too_long
		{name: "401 bytes, id echoed", in: long(`PIRCAN/1 ECHO {"text":"x","id":"r1"}`), code: pircan.CodeTooLong, req: true, verb: "ECHO", id: "r1", hasID: true},
		{name: "401 bytes without id", in: long(`PIRCAN/1 echo {"text":"x"}`), code: pircan.CodeTooLong, req: true, verb: "ECHO"},
		{name: "long text field, id echoed", in: `PIRCAN/1 SEND {"id":"r9","text":"` + strings.Repeat("x", 400) + `"}`, code: pircan.CodeTooLong, req: true, verb: "SEND", id: "r9", hasID: true},
		{name: "too long and broken JSON", in: `PIRCAN/1 SEND {"id":"r9","text":"` + strings.Repeat("x", 400), code: pircan.CodeTooLong, req: true, verb: "SEND"},
		{name: "too long and not PIRCAN", in: strings.Repeat("a", 401), code: pircan.CodeTooLong},
		{name: "too long counts bytes not characters", in: "PIRCAN/1 ECHO " + `{"text":"` + strings.Repeat("é", 190) + `"}`, code: pircan.CodeTooLong, req: true, verb: "ECHO"},
		{name: "too long by trailing spaces", in: "PIRCAN/1 HELP" + strings.Repeat(" ", 388), code: pircan.CodeTooLong, req: true, verb: "HELP"},
		// empty
		{name: "empty string", in: "", code: pircan.CodeEmpty},
		{name: "only spaces", in: "    ", code: pircan.CodeEmpty},
		{name: "only whitespace", in: " \t\r\n ", code: pircan.CodeEmpty},
		// not_pircan
		{name: "plain text", in: "hello there", code: pircan.CodeNotPircan},
		{name: "plain help", in: "help", code: pircan.CodeNotPircan},
		{name: "other version", in: "PIRCAN/2 HELP", code: pircan.CodeNotPircan},
		{name: "no slash", in: "PIRCAN HELP", code: pircan.CodeNotPircan},
		{name: "no space after prefix", in: "PIRCAN/1HELP", code: pircan.CodeNotPircan},
		{name: "JSON only", in: `{"id":"r1"}`, code: pircan.CodeNotPircan},
		{name: "prefix with suffix", in: "PIRCAN/10 HELP", code: pircan.CodeNotPircan},
		// missing_verb
		{name: "prefix only", in: "PIRCAN/1", code: pircan.CodeMissingVerb},
		{name: "prefix and spaces", in: "PIRCAN/1    ", code: pircan.CodeMissingVerb},
		{name: "lower-case prefix only", in: "pircan/1", code: pircan.CodeMissingVerb},
		{name: "JSON without verb", in: `PIRCAN/1 {"a":1}`, code: pircan.CodeMissingVerb},
		// The object in the verb's place still gives the id to answer with.
		{name: "JSON glued to verb position", in: `PIRCAN/1 {"id":"r1"}`, code: pircan.CodeMissingVerb, req: true, hasID: true, id: "r1"},
		// invalid_json
		{name: "array", in: `PIRCAN/1 FIND ["a"]`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "string", in: `PIRCAN/1 FIND "a"`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "number", in: `PIRCAN/1 FIND 5`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "null", in: `PIRCAN/1 FIND null`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "bare word", in: `PIRCAN/1 FIND hazmat`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "trailing text", in: `PIRCAN/1 FIND {"q":"a"} x`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "two objects", in: `PIRCAN/1 FIND {"q":"a"}{"q":"b"}`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "stray closing bracket", in: `PIRCAN/1 FIND {"q":"a"}]`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "duplicate key", in: `PIRCAN/1 FIND {"q":"a","q":"b"}`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "duplicate id", in: `PIRCAN/1 FIND {"id":"a","id":"b"}`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "unclosed object", in: `PIRCAN/1 FIND {"q":"a"`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "missing value", in: `PIRCAN/1 FIND {"q":}`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "missing colon", in: `PIRCAN/1 FIND {"q" "a"}`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "missing comma", in: `PIRCAN/1 FIND {"q":"a" "limit":1}`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "trailing comma", in: `PIRCAN/1 FIND {"q":"a",}`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "unquoted key", in: `PIRCAN/1 FIND {q:"a"}`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "number key", in: `PIRCAN/1 FIND {1:"a"}`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "single quotes", in: `PIRCAN/1 FIND {'q':'a'}`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "leading zero", in: `PIRCAN/1 FIND {"limit":05}`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "unterminated string", in: `PIRCAN/1 FIND {"q":"a}`, code: pircan.CodeInvalidJSON, req: true, verb: "FIND"},
		{name: "broken nested value", in: `PIRCAN/1 HELLO {"capabilities":["a",}`, code: pircan.CodeInvalidJSON, req: true, verb: "HELLO"},
		// invalid_id
		{name: "numeric id", in: `PIRCAN/1 HELP {"id":1}`, code: pircan.CodeInvalidID, req: true, verb: "HELP"},
		{name: "boolean id", in: `PIRCAN/1 HELP {"id":true}`, code: pircan.CodeInvalidID, req: true, verb: "HELP"},
		{name: "object id", in: `PIRCAN/1 HELP {"id":{"a":"b"}}`, code: pircan.CodeInvalidID, req: true, verb: "HELP"},
		{name: "array id", in: `PIRCAN/1 HELP {"id":["a"]}`, code: pircan.CodeInvalidID, req: true, verb: "HELP"},
		{name: "65-char id", in: `PIRCAN/1 HELP {"id":"` + strings.Repeat("a", 65) + `"}`, code: pircan.CodeInvalidID, req: true, verb: "HELP"},
		{name: "64 multibyte characters id (165 bytes)", in: `PIRCAN/1 HELP {"id":"` + strings.Repeat("é", 32) + strings.Repeat("日", 31) + "😀" + `"}`, code: pircan.CodeInvalidID, req: true, verb: "HELP"},
		{name: "65 bytes of multibyte id", in: `PIRCAN/1 HELP {"id":"a` + strings.Repeat("é", 32) + `"}`, code: pircan.CodeInvalidID, req: true, verb: "HELP"},
		{name: "65 bytes as written back", in: `PIRCAN/1 HELP {"id":"a` + strings.Repeat(`\"`, 32) + `"}`, code: pircan.CodeInvalidID, req: true, verb: "HELP"},
		{name: "bidi controls written back as 6-byte escapes", in: `PIRCAN/1 HELP {"id":"` + strings.Repeat("\u202e", 11) + `"}`, code: pircan.CodeInvalidID, req: true, verb: "HELP"},
		{name: "65 multibyte characters id", in: `PIRCAN/1 HELP {"id":"` + strings.Repeat("é", 65) + `"}`, code: pircan.CodeInvalidID, req: true, verb: "HELP"},
		{name: "id with newline", in: `PIRCAN/1 HELP {"id":"a\nb"}`, code: pircan.CodeInvalidID, req: true, verb: "HELP"},
		{name: "id with NUL", in: `PIRCAN/1 HELP {"id":"a\u0000b"}`, code: pircan.CodeInvalidID, req: true, verb: "HELP"},
		{name: "id with tab", in: `PIRCAN/1 HELP {"id":"a\tb"}`, code: pircan.CodeInvalidID, req: true, verb: "HELP"},
		{name: "id with DEL", in: `PIRCAN/1 HELP {"id":"a\u007fb"}`, code: pircan.CodeInvalidID, req: true, verb: "HELP"},
		{name: "id with C1 control", in: `PIRCAN/1 HELP {"id":"a\u0085b"}`, code: pircan.CodeInvalidID, req: true, verb: "HELP"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := Parse(tc.in)
			if err == nil {
				t.Fatalf("Parse(%q): no error, want %s (request %+v)", tc.in, tc.code, req)
			}
			if err.Code != tc.code {
				t.Fatalf("Parse(%q): code %s (%v), want %s", tc.in, err.Code, err, tc.code)
			}
			if err.Message == "" {
				t.Errorf("error %s has no message", err.Code)
			}
			if !tc.req {
				if req != nil {
					t.Errorf("Parse(%q): request %+v beside the error, want none", tc.in, req)
				}
				return
			}
			if req == nil {
				t.Fatalf("Parse(%q): no partial request beside the error", tc.in)
			}
			if req.Verb != tc.verb {
				t.Errorf("Verb = %q, want %q", req.Verb, tc.verb)
			}
			if req.HasID != tc.hasID || req.ID != tc.id {
				t.Errorf("ID = %q (HasID %v), want %q (HasID %v)", req.ID, req.HasID, tc.id, tc.hasID)
			}
		})
	}
}

func TestParseTooLongBoundary(t *testing.T) {
	base := `PIRCAN/1 ECHO {"text":"x","id":"r1"}`
	if _, err := Parse(reqPadTo(t, base, MaxRequestBytes)); err != nil {
		t.Fatalf("a request of exactly %d bytes: %v", MaxRequestBytes, err)
	}
	req, err := Parse(reqPadTo(t, base, MaxRequestBytes+1))
	if err == nil || err.Code != pircan.CodeTooLong {
		t.Fatalf("a request of %d bytes: error %v, want too_long", MaxRequestBytes+1, err)
	}
	if req == nil || !req.HasID || req.ID != "r1" {
		t.Fatalf("too_long must still echo the id; got %+v", req)
	}
	if !strings.Contains(err.Message, "401") {
		t.Errorf("too_long message %q does not give the size", err.Message)
	}
}

// A JSON null is "absent" everywhere else (Decode); an "id":null must not
// make every reply carry "re":"".
func TestParseNullIDIsAbsent(t *testing.T) {
	req, err := Parse(`PIRCAN/1 HELP {"id":null}`)
	if err != nil {
		if err.Code != pircan.CodeInvalidID {
			t.Fatalf("error %v, want none or invalid_id", err)
		}
		return
	}
	if req.HasID {
		t.Errorf(`"id":null gives HasID=true with ID %q: every reply would carry "re":%q; want it treated as absent (or invalid_id)`, req.ID, req.ID)
	}
}

type reqDecodeArgs struct {
	Q      *string   `json:"q"`
	Limit  *int      `json:"limit"`
	All    *bool     `json:"all"`
	Scopes *[]string `json:"scopes"`
	Name   string    `json:"name,omitempty"`
	Count  int       `json:"count"`
}

func reqMustParse(t *testing.T, s string) *Request {
	t.Helper()
	req, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return req
}

func TestDecodeOK(t *testing.T) {
	req := reqMustParse(t, `PIRCAN/1 FIND {"q":"chem","limit":5,"all":true,"scopes":["message","task:x"],"name":"N","count":3,"id":"r1"}`)
	var a reqDecodeArgs
	if err := req.Decode(&a); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if a.Q == nil || *a.Q != "chem" {
		t.Errorf("q = %v", a.Q)
	}
	if a.Limit == nil || *a.Limit != 5 {
		t.Errorf("limit = %v", a.Limit)
	}
	if a.All == nil || !*a.All {
		t.Errorf("all = %v", a.All)
	}
	if a.Scopes == nil || strings.Join(*a.Scopes, ",") != "message,task:x" {
		t.Errorf("scopes = %v", a.Scopes)
	}
	if a.Name != "N" || a.Count != 3 {
		t.Errorf("name, count = %q, %d (tag options after the comma must be ignored)", a.Name, a.Count)
	}
}

func TestDecodeNullIsAbsent(t *testing.T) {
	req := reqMustParse(t, `PIRCAN/1 FIND {"q":null,"limit":null,"scopes":null,"name":null,"count":null}`)
	if !req.HasArgs() {
		t.Fatal("HasArgs() = false for a request with null arguments")
	}
	pre := "keep"
	a := reqDecodeArgs{Q: &pre, Name: "old", Count: 7}
	if err := req.Decode(&a); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if a.Q != &pre || *a.Q != "keep" || a.Limit != nil || a.Scopes != nil || a.Name != "old" || a.Count != 7 {
		t.Errorf("null must leave fields untouched; got %+v", a)
	}
	// A null for an unknown key is still an unknown key.
	req = reqMustParse(t, `PIRCAN/1 FIND {"nope":null}`)
	if err := req.Decode(&reqDecodeArgs{}); err == nil || err.Code != pircan.CodeInvalidArgument || err.Field != "nope" {
		t.Errorf("unknown key with null: %v, want invalid_argument on nope", err)
	}
}

func TestDecodeNoArgs(t *testing.T) {
	for _, in := range []string{"PIRCAN/1 WHOAMI", "PIRCAN/1 WHOAMI {}", `PIRCAN/1 WHOAMI {"id":"r1"}`} {
		req := reqMustParse(t, in)
		if req.HasArgs() {
			t.Errorf("%q: HasArgs() = true", in)
		}
		if err := req.Decode(&struct{}{}); err != nil {
			t.Errorf("%q: Decode into an empty struct: %v", in, err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		field string
	}{
		{"unknown field", `PIRCAN/1 FIND {"query":"x"}`, "query"},
		{"unknown field beside known", `PIRCAN/1 FIND {"q":"x","limt":3}`, "limt"},
		{"keys are case-sensitive", `PIRCAN/1 FIND {"Q":"x"}`, "Q"},
		{"key with spaces", `PIRCAN/1 FIND {" q":"x"}`, " q"},
		{"empty key", `PIRCAN/1 FIND {"":"x"}`, ""},
		{"tag options are not a key", `PIRCAN/1 FIND {"name,omitempty":"x"}`, "name,omitempty"},
		{"string for number", `PIRCAN/1 FIND {"limit":"5"}`, "limit"},
		{"fraction for number", `PIRCAN/1 FIND {"limit":1.5}`, "limit"},
		{"number for string", `PIRCAN/1 FIND {"q":5}`, "q"},
		{"object for string", `PIRCAN/1 FIND {"q":{"a":1}}`, "q"},
		{"string for bool", `PIRCAN/1 FIND {"all":"true"}`, "all"},
		{"number for bool", `PIRCAN/1 FIND {"all":1}`, "all"},
		{"string for list", `PIRCAN/1 FIND {"scopes":"message"}`, "scopes"},
		{"number in list", `PIRCAN/1 FIND {"scopes":["message",1]}`, "scopes"},
		{"string for non-pointer int", `PIRCAN/1 FIND {"count":"3"}`, "count"},
		{"number overflows int", `PIRCAN/1 FIND {"limit":1e100}`, "limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := reqMustParse(t, tc.in)
			err := req.Decode(&reqDecodeArgs{})
			if err == nil {
				t.Fatalf("Decode of %s: no error", tc.in)
			}
			if err.Code != pircan.CodeInvalidArgument {
				t.Errorf("code %s, want invalid_argument", err.Code)
			}
			if err.Field != tc.field {
				t.Errorf("Field %q, want %q", err.Field, tc.field)
			}
			if err.Message == "" {
				t.Errorf("no message")
			}
		})
	}
}

func TestDecodeTypeMessage(t *testing.T) {
	tests := map[string]string{
		`{"limit":"x"}`:   "a whole number",
		`{"q":1}`:         "a string",
		`{"all":1}`:       "true or false",
		`{"scopes":[1]}`:  "a list of strings",
		`{"unknown":[1]}`: "unknown",
	}
	for args, want := range tests {
		err := reqMustParse(t, "PIRCAN/1 FIND "+args).Decode(&reqDecodeArgs{})
		if err == nil || !strings.Contains(strings.ToLower(err.Message), want) {
			t.Errorf("Decode(%s): %v, want a message mentioning %q", args, err, want)
		}
	}
}

// reqParseCodes are the error codes Parse may return (spec §2).
var reqParseCodes = map[pircan.Code]bool{
	pircan.CodeTooLong: true, pircan.CodeEmpty: true, pircan.CodeNotPircan: true, pircan.CodeMissingVerb: true,
	pircan.CodeInvalidJSON: true, pircan.CodeInvalidID: true,
}

func reqCheckParsed(t *testing.T, in string, req *Request, err *pircan.Error) {
	t.Helper()
	validReq := func() {
		t.Helper()
		// Only a missing verb leaves a request without one: it carries the id.
		missing := err != nil && err.Code == pircan.CodeMissingVerb
		if missing && (req.Verb != "" || !req.HasID) {
			t.Fatalf("Parse(%q): missing_verb beside a request with verb %q, id %v", in, req.Verb, req.HasID)
		}
		if !missing && (req.Verb == "" || strings.ToUpper(req.Verb) != req.Verb) {
			t.Fatalf("Parse(%q): verb %q is not upper-case and non-empty", in, req.Verb)
		}
		if strings.ContainsAny(req.Verb, " ") || strings.HasPrefix(req.Verb, "{") {
			t.Fatalf("Parse(%q): bad verb %q", in, req.Verb)
		}
		if req.HasID {
			if n := utf8.RuneCountInString(req.ID); n > MaxIDChars {
				t.Fatalf("Parse(%q): id of %d characters", in, n)
			}
			if n := reqEscapedLen(req.ID); n > MaxIDBytes {
				t.Fatalf("Parse(%q): id of %d bytes as written back", in, n)
			}
			if strings.IndexFunc(req.ID, unicode.IsControl) >= 0 {
				t.Fatalf("Parse(%q): id %q has a control character", in, req.ID)
			}
		} else if req.ID != "" {
			t.Fatalf("Parse(%q): ID %q without HasID", in, req.ID)
		}
		if _, ok := req.args["id"]; ok {
			t.Fatalf("Parse(%q): id left in args", in)
		}
	}
	if err != nil {
		if !reqParseCodes[err.Code] {
			t.Fatalf("Parse(%q): code %q is not one Parse may return", in, err.Code)
		}
		if err.Message == "" {
			t.Fatalf("Parse(%q): error without message", in)
		}
		if (err.Code == pircan.CodeTooLong) != (len(in) > MaxRequestBytes) {
			t.Fatalf("Parse(%q) (%d bytes): code %s", in, len(in), err.Code)
		}
		if req != nil {
			validReq()
		}
		return
	}
	if req == nil {
		t.Fatalf("Parse(%q): neither request nor error", in)
	}
	if len(in) > MaxRequestBytes {
		t.Fatalf("Parse accepted %d bytes", len(in))
	}
	validReq()
	// Decode never panics and fails only with invalid_argument.
	if derr := req.Decode(&reqDecodeArgs{}); derr != nil && (derr.Code != pircan.CodeInvalidArgument || derr.Message == "") {
		t.Fatalf("Decode after Parse(%q): %v", in, derr)
	}
}

// reqEscapedLen is the length of s inside a JSON string as the encoder
// writes it, stated independently (replyRefLen without the quotes).
func reqEscapedLen(s string) int { return replyRefLen(s) - 2 }

func FuzzParse(f *testing.F) {
	addFuzzSeeds(f, 25) // testdata/fuzz/FuzzParse
	f.Fuzz(func(t *testing.T, in string) {
		req, err := Parse(in)
		reqCheckParsed(t, in, req, err)
		// Deterministic.
		req2, err2 := Parse(in)
		if (err == nil) != (err2 == nil) || (err != nil && err.Code != err2.Code) ||
			(req == nil) != (req2 == nil) || (req != nil && (req.Verb != req2.Verb || req.ID != req2.ID)) {
			t.Fatalf("Parse(%q) is not deterministic", in)
		}
	})
}

// Only fields named by a json tag are arguments: the empty key must not
// reach an untagged field, nor "-" a field tagged `json:"-"`.
func TestDecodeOnlyTaggedFields(t *testing.T) {
	type args struct {
		Secret string `json:"-"`
		Plain  string
		Q      *string `json:"q"`
	}
	for _, in := range []string{`PIRCAN/1 FIND {"-":"x"}`, `PIRCAN/1 FIND {"":"x"}`} {
		var a args
		err := reqMustParse(t, in).Decode(&a)
		if err == nil || err.Code != pircan.CodeInvalidArgument {
			t.Errorf("Decode(%s): error %v, want invalid_argument (unknown field); fields now %+v", in, err, a)
		}
	}
}
