package parley

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/creatimus/pircan/pircan"
)

// inputSchema describes an argument struct (embedded structs flattened,
// struct pointers as nested objects) for tools/list and get_api_operation:
// each field's JSON type from its Go type, its limits from its check tags.
// It describes; the operation checks.
func inputSchema(args any) map[string]any {
	return objectSchema(reflect.TypeOf(args))
}

var keyType = reflect.TypeOf(pircan.Key(""))

func objectSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	required := []string{}
	specs := map[string]pircan.Arg{}
	for _, a := range pircan.ForumArgsOf(reflect.New(t).Interface()) {
		specs[a.Name] = a
	}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
				walk(sf.Type)
				continue
			}
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if name == "" || name == "-" || !sf.IsExported() {
				continue
			}
			a := specs[name]
			props[name] = propertySchema(name, a, sf.Type)
			if a.Required {
				required = append(required, name)
			}
		}
	}
	walk(t)
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// fieldLimits are the limits of fields whose rule is not a tag (the
// envelope's own checks), for the schema's reader.
var fieldLimits = map[string]map[string]any{
	"relates_to": {"maxItems": pircan.MaxRelatesTo},
	"extension":  {"minLength": 1, "maxLength": pircan.MaxExtension, "pattern": "^[A-Za-z0-9._-]+$"},
	"provenance": {"maxProperties": pircan.MaxProvenanceKeys,
		"additionalProperties": map[string]any{"type": "string", "maxLength": pircan.MaxProvenanceValue}},
	"slug":     {"pattern": "^[a-z0-9][a-z0-9-]{0,39}$"},
	"claims":   {"maxItems": pircan.MaxClaims},
	"evidence": {"maxItems": pircan.MaxEvidence},
	"refutes":  {"maxItems": pircan.MaxRefutes},
	"rights":   {"items": map[string]any{"type": "string", "enum": pircan.ApprovableRights}},
}

func propertySchema(name string, a pircan.Arg, t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	p := map[string]any{}
	switch {
	case t == keyType:
		p["type"] = []string{"string", "integer"}
		p["description"] = "A key (th_<n>, msg_<n>) or its number; a board: its number or slug."
	case t.Kind() == reflect.String:
		p["type"] = "string"
	case t.Kind() == reflect.Int:
		p["type"] = "integer"
	case t.Kind() == reflect.Bool:
		p["type"] = "boolean"
	case t.Kind() == reflect.Slice && t.Elem() == keyType:
		p["type"] = "array"
		p["items"] = map[string]any{"type": []string{"string", "integer"}}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		p["type"] = "array"
		p["items"] = map[string]any{"type": "string"}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		p["type"] = "array"
		p["items"] = objectSchema(t.Elem())
	case t.Kind() == reflect.Map:
		p["type"] = "object"
	case t.Kind() == reflect.Struct:
		return objectSchema(t)
	default:
		panic(fmt.Sprintf("parley: argument %s: no schema for %s", name, t))
	}
	if a.Text > 0 {
		p["maxLength"] = a.Text
		p["minLength"] = 1
	}
	a.SchemaLimits(p)
	for k, v := range fieldLimits[name] {
		p[k] = v
	}
	return p
}
