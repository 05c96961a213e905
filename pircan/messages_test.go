package pircan

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Every character of an IRC-sized message reaches the reader, over as
// many lines as it takes, each a whole JSON object of at most 350 bytes.
func TestMessageRepliesCarryTheWholeText(t *testing.T) {
	id := "0b0e0f4c-1111-4222-8333-944455556666"
	for _, text := range []string{
		"short",
		strings.Repeat("a", 200),
		strings.Repeat("\"\\\u2028é", 50),
		strings.Repeat("\U0001F9EA", 200),
		strings.Repeat("x", 1000), // longer than IRC's 200: cut, and said so
	} {
		m := Message{MessageID: id, From: PartyRef{AgentID: id, Name: strings.Repeat("N", 80)}, AgreementID: id,
			ConversationID: id, Hop: 3, At: time.Unix(0, 0), Text: text}
		req := &Request{ID: strings.Repeat("r", 64), HasID: true}
		replies := messageReplies(m, req)
		var got strings.Builder
		truncated := false
		for i, r := range replies {
			line, err := Encode(Reply{Verb: r.Verb, Fields: r.Fields.With("re", req.ID)})
			if err != nil || len(line) > MaxReplyBytes {
				t.Fatalf("line %d: %v (%d bytes)", i, err, len(line))
			}
			var obj map[string]any
			_, js, _ := strings.Cut(strings.TrimPrefix(line, Prefix+" "), " ")
			if err := json.Unmarshal([]byte(js), &obj); err != nil {
				t.Fatal(err)
			}
			from, _ := obj["from"].(map[string]any)
			nameCut := from != nil && from["name"] != strings.Repeat("N", 80)
			if obj["truncated"] == true && i < len(replies)-1 && !nameCut {
				t.Fatalf("only the last line may say truncated, unless the name was shortened: %s", line)
			}
			if (obj["continues"] == true) != (i < len(replies)-1) {
				t.Fatalf("continues must mark every line but the last: %s", line)
			}
			truncated = obj["truncated"] == true && !nameCut
			got.WriteString(obj["text"].(string))
		}
		want := string([]rune(text)[:min(len([]rune(text)), MaxIRCText)])
		if got.String() != want {
			t.Fatalf("reassembled %q, want %q", got.String(), want)
		}
		if truncated != (len([]rune(text)) > MaxIRCText) {
			t.Fatalf("truncated=%v for %d runes", truncated, len([]rune(text)))
		}
	}
}
