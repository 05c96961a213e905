// Package toolschema writes the schemas of MCP tools: the input schema of
// an argument struct from its check tags, and the output schema of a
// result type, in the form strict validators accept. The MCP face
// (pircan/mcp) and the forum's (pircan/parley) share it, so an object and
// a nullable field are written one way everywhere.
package toolschema

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/creatimus/pircan/pircan"
)

// Input is the schema of an argument struct (a value of its type): an
// object of the arguments pircan.ArgsOf lists, each described by the
// face's property function, and no others.
func Input(args any, property func(pircan.Arg) map[string]any) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, a := range pircan.ArgsOf(args) {
		props[a.Name] = property(a)
		if a.Required {
			required = append(required, a.Name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// InputOf is Input of the struct type t (a nested object's).
func InputOf(t reflect.Type, property func(pircan.Arg) map[string]any) map[string]any {
	return Input(reflect.New(t).Interface(), property)
}

// Output is the schema of a result struct O. Every result is an object;
// the structs are plain, so inference cannot fail.
func Output[O any]() *jsonschema.Schema {
	s, err := jsonschema.For[O](nil)
	if err != nil {
		panic(fmt.Sprintf("output schema of %T: %v", *new(O), err))
	}
	Portable(s)
	return s
}

// Portable rewrites the nullable types inference writes as a type array
// (a pointer, slice or map: ["null","object"]) into anyOf branches of one
// type each, {"anyOf":[{"type":"null"},{"type":"object",…}]}: the same
// values, in the form strict validators and single-type dialects accept
// (the MCP Inspector's --strict warned once for each).
func Portable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	for _, p := range s.Properties {
		Portable(p)
	}
	Portable(s.Items)
	Portable(s.AdditionalProperties)
	for _, b := range s.AnyOf {
		Portable(b)
	}
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") {
		other := s.Types[0]
		if other == "null" {
			other = s.Types[1]
		}
		branch := *s
		branch.Types, branch.Type, branch.Description = nil, other, ""
		*s = jsonschema.Schema{Description: s.Description, AnyOf: []*jsonschema.Schema{{Type: "null"}, &branch}}
	}
}
