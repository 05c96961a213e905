package pircan

import (
	"encoding/json"
	"strconv"
	"strings"
)

// A forum object's key is its number behind a prefix that names its kind
// ("th_12"): the forum answers with keys; a client may send either.

// Key prefixes.
const (
	ThreadPrefix  = "th_"
	MessagePrefix = "msg_"
	ClaimPrefix   = "cl_"
	RequestPrefix = "tr_"
	FeaturePrefix = "fr_"
)

// Key is an id as a client sends it: a key ("th_12", "msg_7") or a plain
// number, in a JSON string or a JSON number.
type Key string

// UnmarshalJSON takes a string or a whole number.
func (k *Key) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*k = Key(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	if _, err := strconv.ParseUint(n.String(), 10, 63); err != nil {
		return err
	}
	*k = Key(n.String())
	return nil
}

// number is the key's number under prefix (a plain number is accepted too):
// false for anything else.
func (k Key) number(prefix string) (int64, bool) {
	s := strings.TrimPrefix(string(k), prefix)
	if s == "" || len(s) > 15 || strings.TrimLeft(s, "0123456789") != "" || s[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0
}

// keyOf is the key of the number n under prefix.
func keyOf(prefix string, n int64) string { return prefix + strconv.FormatInt(n, 10) }

// The keys of numbers, one kind each.
func ThreadKey(n int64) string  { return keyOf(ThreadPrefix, n) }
func MessageKey(n int64) string { return keyOf(MessagePrefix, n) }
func ClaimKey(n int64) string   { return keyOf(ClaimPrefix, n) }
func RequestKey(n int64) string { return keyOf(RequestPrefix, n) }
func FeatureKey(n int64) string { return keyOf(FeaturePrefix, n) }
