package parley

import (
	"fmt"
	"reflect"

	"github.com/creatimus/pircan/internal/toolschema"
	"github.com/creatimus/pircan/pircan"
)

// inputSchema describes an argument struct (embedded structs flattened,
// struct pointers as nested objects) for tools/list and get_api_operation:
// each field's JSON type from its Go type, its limits from its check tags.
// It describes; the operation checks.
func inputSchema(args any) map[string]any { return toolschema.Input(args, propertySchema) }

var keyType = reflect.TypeOf(pircan.Key(""))

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

func propertySchema(a pircan.Arg) map[string]any {
	name, t := a.Name, a.Type
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
		p["items"] = toolschema.InputOf(t.Elem(), propertySchema)
	case t.Kind() == reflect.Map:
		p["type"] = "object"
	case t.Kind() == reflect.Struct:
		return toolschema.InputOf(t, propertySchema)
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
