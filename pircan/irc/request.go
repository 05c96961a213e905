package irc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/creatimus/pircan/pircan"
)

const (
	// Prefix starts every request and reply (spec §2).
	Prefix = "PIRCAN/1"
	// MaxRequestBytes is the cap on a whole request line.
	MaxRequestBytes = 400
	// MaxIDChars is the cap on the correlation id (spec §2); MaxIDBytes
	// caps its encoding in "re" (UTF-8, with \" \\ and \uXXXX escapes).
	MaxIDChars = 64
	MaxIDBytes = 64
)

// Request is one parsed `PIRCAN/1 <VERB> [<json-object>]` line.
type Request struct {
	Verb  string // upper-case
	ID    string
	HasID bool
	args  map[string]json.RawMessage // without "id"
}

// Parse turns a PRIVMSG text into a Request. Errors are *pircan.Error values with
// the spec's codes; when the id could be read, the partial Request is
// returned beside the error so that the reply still carries `re`.
func Parse(text string) (*Request, *pircan.Error) {
	if len(text) > MaxRequestBytes {
		// Read what we can so the error can name the verb and echo the id.
		req, _ := parseLine(text)
		return req, pircan.Errorf(pircan.CodeTooLong, "A request may be at most %d bytes; this one has %d.", MaxRequestBytes, len(text))
	}
	return parseLine(text)
}

func parseLine(text string) (*Request, *pircan.Error) {
	line := strings.TrimSpace(text)
	if line == "" {
		return nil, pircan.Errorf(pircan.CodeEmpty, "The message is empty. Send PIRCAN/1 HELP.")
	}
	prefix, rest, _ := strings.Cut(line, " ")
	if !strings.EqualFold(prefix, Prefix) {
		return nil, pircan.Errorf(pircan.CodeNotPircan, "Requests start with %s <VERB>. Send PIRCAN/1 HELP.", Prefix)
	}
	rest = strings.TrimLeft(rest, " ")
	verb, argText, _ := strings.Cut(rest, " ")
	if verb == "" || strings.HasPrefix(verb, "{") {
		missing := pircan.Errorf(pircan.CodeMissingVerb, "A verb must follow %s. Send PIRCAN/1 HELP.", Prefix)
		// The object that came instead may still carry the id to answer with.
		if args, err := decodeObject([]byte(rest)); err == nil {
			if id, ok, _ := readID(args); ok {
				return &Request{ID: id, HasID: true}, missing
			}
		}
		return nil, missing
	}
	req := &Request{Verb: strings.ToUpper(verb)}
	argText = strings.TrimSpace(argText)
	if argText == "" {
		return req, nil
	}
	args, err := decodeObject([]byte(argText))
	if err != nil {
		return req, pircan.Errorf(pircan.CodeInvalidJSON, "The argument must be one JSON object: %s.", err)
	}
	id, ok, perr := readID(args)
	if perr != nil {
		return req, perr
	}
	req.ID, req.HasID = id, ok
	delete(args, "id")
	req.args = args
	return req, nil
}

// readID reads the correlation id of a request's arguments, if given.
func readID(args map[string]json.RawMessage) (string, bool, *pircan.Error) {
	raw, ok := args["id"]
	if !ok || isNull(raw) {
		return "", false, nil
	}
	var id string
	if err := json.Unmarshal(raw, &id); err != nil {
		return "", false, pircan.Errorf(pircan.CodeInvalidID, `"id" must be a string of at most %d characters.`, MaxIDChars)
	}
	// Every reply carries the id back as "re", so the budgets of all
	// replies count on it: at most 64 bytes as written there.
	if utf8.RuneCountInString(id) > MaxIDChars || pircan.EscapedLen(id) > MaxIDBytes || strings.IndexFunc(id, unicode.IsControl) >= 0 {
		return "", false, pircan.Errorf(pircan.CodeInvalidID, `"id" must be a string of at most %d printable characters, %d bytes as written back in "re".`, MaxIDChars, MaxIDBytes)
	}
	return id, true, nil
}

// decodeObject reads exactly one JSON object and nothing after it. A key
// given twice is refused: which of the two counts would be a guess.
func decodeObject(data []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, errors.New("not valid JSON")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not an object")
	}
	obj := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errors.New("not valid JSON")
		}
		key := tok.(string) // inside an object the decoder only yields string keys
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, errors.New("not valid JSON")
		}
		if _, dup := obj[key]; dup {
			return nil, fmt.Errorf("key %q is given twice", key)
		}
		obj[key] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, errors.New("not valid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the object")
	}
	return obj, nil
}

// HasArgs reports whether the request carried any argument besides id.
func (r *Request) HasArgs() bool { return len(r.args) > 0 }

// Decode fills dst (a pointer to a struct with json tags) from the
// arguments. Keys are exact; an unknown key or a value of the wrong type is
// invalid_argument naming the field. A JSON null counts as absent.
func (r *Request) Decode(dst any) *pircan.Error {
	v := reflect.ValueOf(dst).Elem()
	t := v.Type()
	for key, raw := range r.args {
		idx := fieldIndex(t, key)
		if idx < 0 {
			return pircan.FieldError(pircan.CodeInvalidArgument, key, "Unknown field %q for %s.", key, r.Verb)
		}
		if isNull(raw) {
			continue
		}
		f := v.Field(idx)
		if err := json.Unmarshal(raw, f.Addr().Interface()); err != nil {
			return pircan.FieldError(pircan.CodeInvalidArgument, key, "%q must be %s.", key, kindName(f.Type()))
		}
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// fieldIndex finds the struct field whose json tag names key; fields
// without a usable tag are never reachable.
func fieldIndex(t reflect.Type, key string) int {
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" && name == key && t.Field(i).IsExported() {
			return i
		}
	}
	return -1
}

func kindName(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(kindName(t.Elem()), "a ") + "s"
	default:
		return "of another type"
	}
}
