package pircan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

// How every face reads an operation's arguments from JSON (an IRC request's
// object, an MCP tool call's arguments): strictly, with the same words.

// DecodeObject reads exactly one JSON object and nothing after it. A key
// given twice is refused: which of the two counts would be a guess.
func DecodeObject(data []byte) (map[string]json.RawMessage, error) {
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

// DecodeArgs fills dst (a pointer to an argument struct) from a JSON
// object's members, for the operation named what. Keys are exact; an
// unknown key or a value of the wrong type is invalid_argument naming the
// field (the first in key order). A JSON null counts as absent.
func DecodeArgs(obj map[string]json.RawMessage, dst any, what string) *Error {
	v := reflect.ValueOf(dst).Elem()
	t := v.Type()
	keys := make([]string, 0, len(obj))
	for key := range obj {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		raw := obj[key]
		arg, ok := argNamed(t, key)
		if !ok {
			return FieldError(CodeInvalidArgument, key, "Unknown field %q for %s.", key, what)
		}
		if IsNull(raw) {
			continue
		}
		f := v.FieldByIndex(arg.index)
		if err := json.Unmarshal(raw, f.Addr().Interface()); err != nil {
			return FieldError(CodeInvalidArgument, key, "%q must be %s.", key, kindName(f.Type()))
		}
	}
	return nil
}

// IsNull reports whether raw is JSON null.
func IsNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

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
