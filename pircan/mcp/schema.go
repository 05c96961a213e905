package mcp

import (
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/creatimus/pircan/internal/toolschema"
	"github.com/creatimus/pircan/pircan"
)

// inputSchema describes an argument struct for tools/list: each field's
// JSON type from its Go type, its limits from its check tags
// (pircan.ArgsOf), and no other keys. It describes; the operation checks.
func inputSchema(args any) map[string]any { return toolschema.Input(args, propertySchema) }

func propertySchema(a pircan.Arg) map[string]any {
	t := a.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	p := map[string]any{}
	switch t.Kind() {
	case reflect.String:
		p["type"] = "string"
	case reflect.Int, reflect.Int32, reflect.Int64:
		p["type"] = "integer"
	case reflect.Bool:
		p["type"] = "boolean"
	case reflect.Slice:
		p["type"] = "array"
		p["items"] = map[string]any{"type": "string"} // every list argument is of strings
	default:
		panic(fmt.Sprintf("mcp: argument %s: no schema for %s", a.Name, t))
	}
	switch {
	case a.ID:
		p["format"] = "uuid"
		p["description"] = "An id (a UUID)."
	case a.Message:
		// JSON Schema counts characters; the limit is in bytes, as the
		// description says.
		p["maxLength"] = pircan.FullSizes.TextBytes
		p["description"] = fmt.Sprintf("At most %d bytes of UTF-8.", pircan.FullSizes.TextBytes)
	case a.Text > 0:
		p["maxLength"] = a.Text
		if a.Clear {
			p["description"] = `"" clears it.`
		}
	}
	a.SchemaLimits(p)
	return p
}

// outputSchema is the schema of a result struct, nullable fields as
// anyOf branches (internal/toolschema).
func outputSchema[O any]() *jsonschema.Schema { return toolschema.Output[O]() }
