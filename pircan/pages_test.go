package pircan_test

import (
	"encoding/json"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// A list that embeds PageArgs gets their limits, its own options for them
// from its tag, and every reader of the tags (checks, the decoder, HELP and
// the schemas through ArgsOf) sees the fields as its own.
func TestEmbeddedPageTakesItsListsOptions(t *testing.T) {
	type list struct {
		Q               *string `json:"q" check:"text=10"`
		pircan.PageArgs `check:"limit.range=1-20,limit.default=10"`
	}
	args := pircan.ArgsOf(list{})
	if len(args) != 3 || args[0].Name != "q" || args[1].Name != "limit" || args[2].Name != "offset" {
		t.Fatalf("ArgsOf = %+v, want q, limit, offset", args)
	}
	if l := args[1]; l.Min != 1 || l.Max != 20 || l.Default == nil || *l.Default != 10 {
		t.Errorf("limit = %d-%d default %v, want 1-20 default 10", l.Min, l.Max, l.Default)
	}
	if o := args[2]; o.Min != 0 || o.Max != pircan.MaxOffset || *o.Default != 0 {
		t.Errorf("offset = %+v, want PageArgs' own", o)
	}
	plain := pircan.ArgNamed(pircan.FindArgs{}, "limit")
	if plain.Max != pircan.MaxPage || *plain.Default != 5 {
		t.Errorf("FindArgs' limit = %d default %d: another list's options leaked", plain.Max, *plain.Default)
	}

	var a list
	if err := pircan.CheckArgs(&a); err != nil {
		t.Fatal(err)
	}
	if a.Limit == nil || *a.Limit != 10 || a.Offset == nil || *a.Offset != 0 {
		t.Errorf("defaults filled: limit %v offset %v, want 10 and 0", a.Limit, a.Offset)
	}
	a = list{PageArgs: pircan.PageArgs{Limit: ip(21)}}
	if err := pircan.CheckArgs(&a); err == nil || err.Code != pircan.CodeInvalidArgument || err.Field != "limit" {
		t.Errorf("limit 21: %v, want invalid_argument on limit", err)
	}

	obj := map[string]json.RawMessage{"limit": json.RawMessage("20"), "offset": json.RawMessage("3")}
	var d list
	if err := pircan.DecodeArgs(obj, &d, "LIST"); err != nil {
		t.Fatal(err)
	}
	if *d.Limit != 20 || *d.Offset != 3 {
		t.Errorf("decoded limit %d offset %d, want 20 and 3", *d.Limit, *d.Offset)
	}
}

// An option for a field the embedded struct does not have is a mistake in
// the code, caught when the arguments are first read.
func TestEmbeddedOptionForNoField(t *testing.T) {
	type list struct {
		pircan.PageArgs `check:"size.default=3"`
	}
	defer func() {
		if recover() == nil {
			t.Error("an option for a field PageArgs lacks was taken")
		}
	}()
	pircan.ArgsOf(list{})
}
