package pircan

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Arguments are structs of pointer fields (nil: not given) whose `json` tag
// names the field on every face and whose `check` tag holds its limits, so
// that a limit is written once: the operation validates by it (checkArgs),
// HELP and, later, the MCP schemas describe it (ArgsOf). Options, comma
// separated:
//
//	required        must be given
//	id              a UUID
//	text=N          user-written: printable, not blank, at most N characters;
//	                text=@name: the limit Lengths names
//	message         text within the caller's face sizes (Caller.Sizes)
//	clear           with text: "" is allowed (it clears the field)
//	label           no bidi controls (others read it as a label)
//	lines           with text: line breaks allowed (the forum's body)
//	account         a NickServ account name (CheckAccountName)
//	channel         a channel name (CheckChannelName)
//	range=A-B       a whole number from A to B; range=@name: the range Ranges names
//	default=N       the value of an absent whole number
//	enum=a|b        one of the words; enum=@name: one of the list Enums names
//
// An embedded struct's fields are the embedder's arguments; a check tag on
// the embedding holds options for them as field.option, which follow the
// field's own (PageArgs `check:"limit.default=10"`).
type Arg struct {
	Name     string
	Required bool
	ID       bool
	Text     int // 0: no text limit of this tag
	Message  bool
	Clear    bool
	Label    bool
	Lines    bool
	Account  bool
	Channel  bool
	Min, Max int
	HasRange bool
	Default  *int
	Enum     []string
	// Type is the field's Go type (a pointer, nil when not given).
	Type reflect.Type
	// index is the field's place in its struct (embedded structs' fields
	// deeper: reflect's FieldByIndex).
	index []int
}

// ArgsOf lists the arguments of an argument struct, in field order, the
// fields of embedded structs in the place of the embedding.
func ArgsOf(args any) []Arg {
	t := reflect.TypeOf(args)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return slices.Clone(argsOfType(t)) // the cache's own stays unchanged
}

// argsByType caches argsOfType: an operation's arguments are checked on
// every call, and their tags never change.
var argsByType sync.Map // reflect.Type -> []Arg

// argsOfType is the one walk over an argument struct that every reader of
// the tags (checks, decoders, schemas, HELP) shares. An embedded struct
// is flattened; its own check tag holds options for its fields, each
// prefixed by the field's name ("limit.default=10": this list's page is
// 10 long unless asked).
func argsOfType(t reflect.Type) []Arg {
	if cached, ok := argsByType.Load(t); ok {
		return cached.([]Arg)
	}
	args := collectArgs(t, nil, nil)
	argsByType.Store(t, args)
	return args
}

func collectArgs(t reflect.Type, at []int, extra map[string][]string) []Arg {
	var out []Arg
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		index := append(slices.Clip(at), i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			opts := embeddedOptions(f)
			inner := collectArgs(f.Type, index, opts)
			for name := range opts {
				if !slices.ContainsFunc(inner, func(a Arg) bool { return a.Name == name }) {
					panic(fmt.Sprintf("pircan: embedded %s: no argument %q for its check options", f.Name, name))
				}
			}
			out = append(out, inner...)
			continue
		}
		if sp, ok := specOf(f, extra); ok {
			sp.index = index
			out = append(out, sp)
		}
	}
	return out
}

// embeddedOptions reads an embedded struct's check tag: options for its
// fields, by their argument names.
func embeddedOptions(f reflect.StructField) map[string][]string {
	tag := f.Tag.Get("check")
	if tag == "" {
		return nil
	}
	extra := map[string][]string{}
	for _, opt := range strings.Split(tag, ",") {
		field, o, ok := strings.Cut(opt, ".")
		if !ok {
			panic(fmt.Sprintf("pircan: embedded %s: check option %q names no field (field.option)", f.Name, opt))
		}
		extra[field] = append(extra[field], o)
	}
	return extra
}

// argNamed is the argument of the struct type t that a JSON key names.
func argNamed(t reflect.Type, key string) (Arg, bool) {
	for _, a := range argsOfType(t) {
		if a.Name == key {
			return a, true
		}
	}
	return Arg{}, false
}

// SchemaLimits writes the range, default and enum of an argument into its
// JSON Schema property, as every face's schemas (MCP, Parley) state them.
func (a Arg) SchemaLimits(p map[string]any) {
	if a.HasRange {
		p["minimum"], p["maximum"] = a.Min, a.Max
	}
	if a.Default != nil {
		p["default"] = *a.Default
	}
	if len(a.Enum) > 0 {
		p["enum"] = a.Enum
	}
}

// Describe renders one argument for HELP: its name and its limit, as in
// "limit (1-10)" or "text (200 chars)"; sizes are the face's.
func (a Arg) Describe(sizes Sizes) string {
	switch {
	case a.HasRange:
		return fmt.Sprintf("%s (%d-%d)", a.Name, a.Min, a.Max)
	case len(a.Enum) > 0:
		return fmt.Sprintf("%s (%s)", a.Name, strings.Join(a.Enum, ", "))
	case a.Message && sizes.TextChars > 0:
		return fmt.Sprintf("%s (%d chars)", a.Name, sizes.TextChars)
	case a.Message:
		return fmt.Sprintf("%s (%d bytes)", a.Name, sizes.TextBytes)
	case a.Text > 0:
		return fmt.Sprintf("%s (%d chars)", a.Name, a.Text)
	}
	return a.Name
}

func specOf(f reflect.StructField, extra map[string][]string) (Arg, bool) {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" || name == "-" || !f.IsExported() {
		return Arg{}, false
	}
	sp := Arg{Name: name, Type: f.Type}
	opts := append(strings.Split(f.Tag.Get("check"), ","), extra[name]...)
	for _, opt := range opts {
		key, val, _ := strings.Cut(opt, "=")
		switch key {
		case "":
		case "required":
			sp.Required = true
		case "id":
			sp.ID = true
		case "text":
			if name, named := strings.CutPrefix(val, "@"); named {
				if sp.Text = Lengths[name]; sp.Text == 0 {
					panic(fmt.Sprintf("pircan: field %s: no length %q in Lengths", f.Name, name))
				}
				break
			}
			sp.Text = mustAtoi(f, val)
		case "message":
			sp.Message = true
		case "clear":
			sp.Clear = true
		case "label":
			sp.Label = true
		case "lines":
			sp.Lines = true
		case "account":
			sp.Account = true
		case "channel":
			sp.Channel = true
		case "range":
			if name, named := strings.CutPrefix(val, "@"); named {
				r, ok := Ranges[name]
				if !ok {
					panic(fmt.Sprintf("pircan: field %s: no range %q in Ranges", f.Name, name))
				}
				sp.Min, sp.Max, sp.HasRange = r[0], r[1], true
				break
			}
			lo, hi, _ := strings.Cut(val, "-")
			sp.Min, sp.Max, sp.HasRange = mustAtoi(f, lo), mustAtoi(f, hi), true
		case "default":
			d := mustAtoi(f, val)
			sp.Default = &d
		case "enum":
			sp.Enum = strings.Split(val, "|")
			if list, named := strings.CutPrefix(val, "@"); named {
				if sp.Enum = Enums[list]; sp.Enum == nil {
					panic(fmt.Sprintf("pircan: field %s: no list %q in Enums", f.Name, list))
				}
			}
		default:
			panic(fmt.Sprintf("pircan: field %s: unknown check option %q", f.Name, key))
		}
	}
	return sp, true
}

func mustAtoi(f reflect.StructField, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(fmt.Sprintf("pircan: field %s: bad number %q in its check tag", f.Name, s))
	}
	return n
}

// checkArgs validates args (a pointer to an argument struct) by its check
// tags, in field order, fills absent whole numbers that have a default, and
// makes ids canonical (CanonicalID): every face's arguments pass here once,
// before any rule compares them.
func checkArgs(args any, sizes Sizes) *Error {
	v := reflect.ValueOf(args).Elem()
	for _, sp := range argsOfType(v.Type()) {
		f := v.FieldByIndex(sp.index)
		if f.Kind() != reflect.Pointer {
			continue
		}
		if f.IsNil() {
			if sp.Required {
				return FieldError(CodeInvalidArgument, sp.Name, "%q is required.", sp.Name)
			}
			sp.fillDefault(f)
			continue
		}
		if s := f.Elem(); sp.ID && s.Kind() == reflect.String && CanonicalID(s.String()) != s.String() {
			// A new string, not a write through the pointer: the caller's
			// own variable (perhaps read by another goroutine) stays as it was.
			canon := CanonicalID(s.String())
			f.Set(reflect.ValueOf(&canon))
		}
		if err := sp.check(f.Elem(), sizes); err != nil {
			return err
		}
	}
	return nil
}

// fillDefault sets an absent whole number (f, a nil *int) to its default.
func (sp Arg) fillDefault(f reflect.Value) {
	if sp.Default != nil && f.Type().Elem().Kind() == reflect.Int {
		d := *sp.Default
		f.Set(reflect.ValueOf(&d))
	}
}

func (sp Arg) check(v reflect.Value, sizes Sizes) *Error {
	switch v.Kind() {
	case reflect.Int:
		if n := int(v.Int()); sp.HasRange && (n < sp.Min || n > sp.Max) {
			return FieldError(CodeInvalidArgument, sp.Name, "%q must be from %d to %d.", sp.Name, sp.Min, sp.Max)
		}
	case reflect.String:
		return sp.checkString(v.String(), sizes)
	}
	return nil
}

func (sp Arg) checkString(s string, sizes Sizes) *Error {
	switch {
	case sp.ID && !ValidID(s):
		return CheckID(sp.Name, s)
	case sp.Account:
		return CheckAccountName(sp.Name, s)
	case sp.Channel:
		return CheckChannelName(s)
	case len(sp.Enum) > 0 && !slices.Contains(sp.Enum, s):
		return FieldError(CodeInvalidArgument, sp.Name, "%q is one of %s.", sp.Name, strings.Join(sp.Enum, ", "))
	case sp.Clear && s == "":
		return nil
	case sp.Text > 0:
		if err := checkText(sp.Name, s, sp.Text); err != nil {
			return err
		}
	case sp.Message:
		if err := checkMessageText(sp.Name, s, sizes); err != nil {
			return err
		}
	}
	if sp.Label {
		return checkLabel(sp.Name, s)
	}
	return nil
}

// checkMessageText holds a message's text to the caller's face sizes.
func checkMessageText(field, s string, sizes Sizes) *Error {
	check := checkText
	if sizes.LineBreaks {
		check = checkMultilineText
	}
	if sizes.TextChars > 0 {
		return check(field, s, sizes.TextChars)
	}
	if err := check(field, s, utf8.RuneCountInString(s)); err != nil {
		return err
	}
	if len(s) > sizes.TextBytes {
		return FieldError(CodeTooLong, field, "%q may be at most %d bytes; it has %d.", field, sizes.TextBytes, len(s))
	}
	return nil
}

// Lengths are the text limits check tags name (text=@name) that a manifest
// shows or a rule outside the tags uses too, so that each is written once.
var Lengths = map[string]int{
	"capability":        MaxCapability,
	"forum_body":        MaxForumBody,
	"board_name":        MaxBoardName,
	"board_description": MaxBoardDescription,
	"statement":         MaxStatement,
	"evidence_ref":      MaxEvidenceRef,
	"evidence_note":     MaxEvidenceNote,
	"attestation_note":  MaxAttestNote,
	"feature_title":     MaxFeatureTitle,
	"feature_body":      MaxFeatureBody,
}

// Ranges are the number ranges that check tags name (range=@name), so that
// a face's own argument struct (IRC's TASKS) holds the core's range.
var Ranges = map[string][2]int{
	"page":   {1, MaxPage},
	"offset": {0, MaxOffset},
}

// Enums are the word lists that check tags name (enum=@name), so that each
// list is written once.
var Enums = map[string][]string{
	"policies":       Policies,
	"categories":     ReportCategories,
	"kinds":          ForumKinds,
	"states":         ForumStates,
	"verdicts":       Verdicts,
	"evidence":       EvidenceKinds,
	"decisions":      ReviewDecisions,
	"features":       FeatureStatuses,
	"request_states": RequestStates,
}

// ArgNamed is the argument name of an argument struct (zero Arg if none):
// how tests and docs read a limit without restating it.
func ArgNamed(args any, name string) Arg {
	for _, a := range ArgsOf(args) {
		if a.Name == name {
			return a
		}
	}
	return Arg{}
}

// CheckID refuses a value of field that is not an id (a UUID).
func CheckID(field, s string) *Error {
	if !ValidID(s) {
		return FieldError(CodeInvalidArgument, field, "%q must be an id (a UUID).", field)
	}
	return nil
}

// CheckArgs validates args (a pointer to an argument struct) by its check
// tags, exactly as the operation will: for a face that refuses before it
// can reach the core (the CLI, before it opens the database).
func CheckArgs(args any) *Error { return checkArgs(args, FullSizes) }
