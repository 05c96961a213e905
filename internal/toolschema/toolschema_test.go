package toolschema

import (
	"encoding/json"
	"strings"
	"testing"
)

type inner struct {
	Name string `json:"name"`
}

type result struct {
	ID     string            `json:"id"`
	Owner  *inner            `json:"owner"`
	Tags   []string          `json:"tags"`
	Counts map[string]int    `json:"counts"`
	Items  []inner           `json:"items"`
	Nested map[string]*inner `json:"nested"`
}

// No type array is left anywhere, and each nullable field keeps its shape
// in the non-null branch.
func TestOutputHasNoTypeArrays(t *testing.T) {
	b, err := json.Marshal(Output[result]())
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if strings.Contains(s, `"type":[`) {
		t.Fatalf("a type array: %s", s)
	}
	for _, want := range []string{
		`"owner":{"anyOf":[{"type":"null"},{"type":"object"`,
		`"tags":{"anyOf":[{"type":"null"},{"type":"array","items":{"type":"string"}}]}`,
		`"id":{"type":"string"}`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("schema lacks %s:\n%s", want, s)
		}
	}
}
