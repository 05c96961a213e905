// Package toolschema infers the output schema of an MCP tool from its
// result type, in the form strict validators accept: the MCP face
// (pircan/mcp) and the forum's (pircan/parley) share it, so a nullable
// field is written one way everywhere.
package toolschema

import (
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

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
