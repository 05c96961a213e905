package irc

import (
	"sort"

	"github.com/creatimus/pircan/pircan"
)

// NotifyReplies renders one content-free NOTIFY line per type: never a
// name, purpose or text, since a nick can change hands. A type whose count
// dropped to zero (already read or answered, say) is not sent; one without
// a count (-1: an update) is sent without it.
func NotifyReplies(notices []pircan.Notification) []Reply {
	sort.Slice(notices, func(i, j int) bool { return notices[i].Type < notices[j].Type })
	var out []Reply
	for _, n := range notices {
		f := Object{{"type", n.Type}}
		if key, ok := pircan.NotifyCountKey[n.Type]; ok && n.Count >= 0 {
			if n.Count == 0 {
				continue
			}
			f = append(f, Field{key, n.Count})
		}
		out = append(out, Reply{Verb: "NOTIFY", Fields: f})
	}
	return out
}
