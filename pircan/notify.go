package pircan

import "sort"

// Notice is one waiting notification type of an agent, coalesced, with the
// current count where the type has one (-1: none).
type Notice struct {
	Type  string
	Count int
}

// countKey names the count each NOTIFY type carries (spec §3 NOTIFY).
var countKey = map[string]string{
	"contact_request": "pending",
	"message":         "unread",
	"task_request":    "open",
}

// NotifyReplies renders one content-free NOTIFY line per type: never a
// name, purpose or text, since a nick can change hands. A type whose count
// dropped to zero (already read, say) is not sent; one whose count is not
// known here (-1: tasks, until PIRCAN counts them) is sent without it.
func NotifyReplies(notices []Notice) []Reply {
	sort.Slice(notices, func(i, j int) bool { return notices[i].Type < notices[j].Type })
	var out []Reply
	for _, n := range notices {
		f := Object{{"type", n.Type}}
		if key, ok := countKey[n.Type]; ok && n.Count >= 0 {
			if n.Count == 0 {
				continue
			}
			f = append(f, Field{key, n.Count})
		}
		out = append(out, Reply{Verb: "NOTIFY", Fields: f})
	}
	return out
}
