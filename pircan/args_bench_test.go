package pircan_test

import (
	"encoding/json"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// What every request's arguments cost before the operation runs: the
// strict decoding and the check tags (FIND's, with a page), beside the
// floor of encoding/json filling the same struct with no checks.
func BenchmarkArgs(b *testing.B) {
	raw := []byte(`{"q":"ammonia","capability":"hazmat","limit":5,"offset":20}`)
	b.Run("floor_json_unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var a pircan.FindArgs
			if err := json.Unmarshal(raw, &a); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode_and_check", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			obj, err := pircan.DecodeObject(raw)
			if err != nil {
				b.Fatal(err)
			}
			var a pircan.FindArgs
			if e := pircan.DecodeArgs(obj, &a, "FIND"); e != nil {
				b.Fatal(e)
			}
			if e := pircan.CheckArgs(&a); e != nil {
				b.Fatal(e)
			}
		}
	})
}
