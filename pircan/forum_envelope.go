package pircan

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// How the forum reads its arguments: strictly, like DecodeArgs, but with
// the reference's words (invalid_body with details.field and details.rule)
// and into nested objects (from, to). Fields the server sets are ignored
// when a client sends them (the reference: "the client MUST ignore on
// send"). Lists of objects (claims, evidence) are read element by element,
// as strictly, their fields named claims[0].evidence[1].kind.

// ServerSetFields are ignored wherever they are sent.
var ServerSetFields = []string{"from.identity", "from.agent_id", "from.name", "author_kind", "created_at",
	"awaiting", "due", "state", "state_origin", "state_confirmed"}

// Rules an invalid_body names (details.rule).
const (
	RuleUnknownField  = "unknown_field"
	RuleRequired      = "required"
	RuleType          = "type"
	RuleLength        = "length"
	RuleBlank         = "blank"
	RuleControl       = "control_characters"
	RuleEnum          = "enum"
	RuleRange         = "range"
	RuleKey           = "key"
	RulePattern       = "pattern"
	RuleMaxItems      = "max_items"
	RuleMaxKeys       = "max_keys"
	RuleHandoverOnly  = "handover_only"
	RuleMismatch      = "mismatch"
	RuleVersion       = "version"
	RuleIdentity      = "identity"
	RuleRefuteOnly    = "refute_only"
	RuleApprovalOnly  = "approval_only"
	RuleDuplicateKeys = "duplicate_key"
)

// DecodeForumArgs fills dst (a pointer to an argument struct, embedded
// structs flattened, struct pointers as nested objects) from a JSON
// object's members, strictly.
func DecodeForumArgs(obj map[string]json.RawMessage, dst any) *Error {
	return decodeForum(obj, reflect.ValueOf(dst).Elem(), "")
}

func decodeForum(obj map[string]json.RawMessage, v reflect.Value, prefix string) *Error {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		name := prefix + key
		raw := obj[key]
		arg, ok := argNamed(v.Type(), key)
		if !ok {
			switch {
			case slices.Contains(ServerSetFields, name):
				continue
			}
			return invalidBody(name, RuleUnknownField, "Unknown field %q.", name)
		}
		if IsNull(raw) {
			continue
		}
		f := v.FieldByIndex(arg.index)
		if f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct {
			inner, err := DecodeObject(raw)
			if err != nil {
				return invalidBody(name, RuleType, "%q must be an object.", name)
			}
			p := reflect.New(f.Type().Elem())
			if e := decodeForum(inner, p.Elem(), name+"."); e != nil {
				return e
			}
			f.Set(p)
			continue
		}
		if elem, ok := structSlice(f.Type()); ok {
			list, err := decodeObjects(raw, elem, name)
			if err != nil {
				return err
			}
			f.Set(list)
			continue
		}
		if err := json.Unmarshal(raw, f.Addr().Interface()); err != nil {
			return invalidBody(name, RuleType, "%q must be %s.", name, forumKindName(f.Type()))
		}
	}
	return nil
}

// structSlice is the element type of a *[]T field whose T is a struct.
func structSlice(t reflect.Type) (reflect.Type, bool) {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Slice || t.Elem().Elem().Kind() != reflect.Struct {
		return nil, false
	}
	return t.Elem().Elem(), true
}

// decodeObjects reads a JSON array of objects into a new *[]elem, each
// element strictly (its fields named name[i].field).
func decodeObjects(raw json.RawMessage, elem reflect.Type, name string) (reflect.Value, *Error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return reflect.Value{}, invalidBody(name, RuleType, "%q must be a list of objects.", name)
	}
	list := reflect.MakeSlice(reflect.SliceOf(elem), len(items), len(items))
	for i, item := range items {
		field := name + "[" + strconv.Itoa(i) + "]"
		inner, err := DecodeObject(item)
		if err != nil {
			return reflect.Value{}, invalidBody(field, RuleType, "%q must be an object.", field)
		}
		if e := decodeForum(inner, list.Index(i), field+"."); e != nil {
			return reflect.Value{}, e
		}
	}
	p := reflect.New(list.Type())
	p.Elem().Set(list)
	return p, nil
}

// reflectValue is the struct a pointer points to, for checkForumValue.
func reflectValue(p any) reflect.Value { return reflect.ValueOf(p).Elem() }

func forumKindName(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeOf(Key("")):
		return "a key or a number"
	case t.Kind() == reflect.Map:
		return "an object of strings"
	case t.Kind() == reflect.Slice && t.Elem() == reflect.TypeOf(Key("")):
		return "a list of keys"
	}
	return kindName(t)
}

// checkForumArgs holds an argument struct (a pointer; embedded and nested
// structs included) to its check tags with the forum's words, and fills
// absent whole numbers that have a default.
func checkForumArgs(args any) *Error {
	return checkForumValue(reflect.ValueOf(args).Elem(), "")
}

func checkForumValue(v reflect.Value, prefix string) *Error {
	for _, sp := range argsOfType(v.Type()) {
		f := v.FieldByIndex(sp.index)
		if f.Kind() != reflect.Pointer {
			continue
		}
		name := prefix + sp.Name
		if f.IsNil() {
			if sp.Required {
				return invalidBody(name, RuleRequired, "%q is required.", name)
			}
			sp.fillDefault(f)
			continue
		}
		e := f.Elem()
		switch e.Kind() {
		case reflect.Struct:
			if err := checkForumValue(e, name+"."); err != nil {
				return err
			}
		case reflect.Int:
			if n := int(e.Int()); sp.HasRange && (n < sp.Min || n > sp.Max) {
				return invalidBody(name, RuleRange, "%q must be from %d to %d.", name, sp.Min, sp.Max)
			}
		case reflect.String:
			s := e.String()
			if len(sp.Enum) > 0 && !slices.Contains(sp.Enum, s) {
				return invalidBody(name, RuleEnum, "%q is one of %s.", name, strings.Join(sp.Enum, ", "))
			}
			if sp.Text > 0 {
				if err := checkForumText(name, s, sp.Text, sp.Lines); err != nil {
					return err
				}
			}
			if sp.Label {
				if err := checkLabel(name, s); err != nil {
					err.Code, err.Rule = CodeInvalidBody, RuleControl
					return err
				}
			}
		}
	}
	return nil
}

// checkForumText holds user text: valid UTF-8, no control characters
// (line breaks allowed where lines), not blank, at most max code points.
func checkForumText(field, s string, max int, lines bool) *Error {
	if !utf8.ValidString(s) {
		return invalidBody(field, RuleType, "%q must be UTF-8 text.", field)
	}
	if strings.IndexFunc(s, func(r rune) bool {
		return (ControlRune(r) || unicode.IsControl(r)) && !(lines && (r == '\n' || r == '\r'))
	}) >= 0 {
		what := "control characters"
		if lines {
			what = "control characters other than line breaks"
		}
		return invalidBody(field, RuleControl, "%q must not contain %s.", field, what)
	}
	if strings.TrimSpace(s) == "" {
		return invalidBody(field, RuleBlank, "%q must not be empty or blank.", field)
	}
	if n := utf8.RuneCountInString(s); n > max {
		return invalidBody(field, RuleLength, "%q may be at most %d characters (code points); it has %d.", field, max, n)
	}
	return nil
}

// checkExtension holds from.extension (and to.extension): 1-40 of
// [A-Za-z0-9._-].
func checkExtension(field, s string) *Error {
	if s == "" || len(s) > MaxExtension {
		return invalidBody(field, RuleLength, "%q is 1 to %d characters.", field, MaxExtension)
	}
	if strings.TrimLeft(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != "" {
		return invalidBody(field, RulePattern, "%q may hold only A-Z, a-z, 0-9, '.', '_' and '-'.", field)
	}
	return nil
}

// checkProvenance holds the provenance object: at most 8 keys, each value
// at most 200 characters of text without control characters.
func checkProvenance(p map[string]string) *Error {
	if len(p) > MaxProvenanceKeys {
		return invalidBody("provenance", RuleMaxKeys, `"provenance" holds at most %d keys.`, MaxProvenanceKeys)
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := checkForumText("provenance", k, MaxExtension, false); err != nil {
			err.Message = "A provenance key is 1 to 40 characters without control characters."
			return err
		}
		if v := p[k]; v != "" {
			if err := checkForumText("provenance."+k, v, MaxProvenanceValue, false); err != nil {
				return err
			}
		}
	}
	return nil
}
