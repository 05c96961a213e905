package irc

import (
	"github.com/creatimus/pircan/pircan"
	"strings"
	"testing"
	"time"
)

// Every character of an IRC-sized message reaches the reader, over as
// many lines as it takes, each a whole JSON object within its budget, each
// with re; the MESSAGE line keeps the sender's name before its text and
// says truncated when the text continues.
func TestMessageRepliesCarryTheWholeText(t *testing.T) {
	id := "0b0e0f4c-1111-4222-8333-944455556666"
	for _, name := range []string{"Hazmat Agent", strings.Repeat("N", 80), strings.Repeat("😀", 80), strings.Repeat("\u2028", 80)} {
		for _, reID := range []string{"", "r1", strings.Repeat("r", 64), strings.Repeat("é", 32)} {
			for _, text := range []string{
				"short",
				"fifteen chars!!",
				strings.Repeat("a", 200),
				strings.Repeat("\"\\\u2028é", 50),
				strings.Repeat("\U0001F9EA", 200),
				strings.Repeat("\u0085\u202e", 100),
				"two lines\nsent over MCP or A2A", // line breaks are text there
				strings.Repeat("line\r\n\t", 40),  // escaped on IRC, each \n, \r, \t counted as its escape
				strings.Repeat("x", 1000),         // longer than IRC's 200: cut, and said so
			} {
				m := pircan.Message{MessageID: id, From: pircan.PartyRef{AgentID: id, Name: name}, AgreementID: id,
					ConversationID: id, Hop: 8, At: time.Unix(0, 0), Text: text}
				req := &Request{ID: reID, HasID: reID != ""}
				checkMessageLines(t, m, req)
			}
		}
	}
}

func checkMessageLines(t *testing.T, m pircan.Message, req *Request) {
	t.Helper()
	checkContinued(t, "MESSAGE", messageReplies(m, req), m.From.Name, m.Text, req)
}

// checkContinued holds the lines of one text (MESSAGE or TASK, see
// continuedReplies) to their promise: the head line first, then -MORE
// lines, each within its budget with re; continues on all but the last;
// truncated on a head line that continues and on the last line of a text
// over 200 characters, nowhere else; the name kept whole unless the text
// moved on; and the first 200 characters, in order, across the lines.
func checkContinued(t *testing.T, verb string, replies []Reply, name, text string, req *Request) {
	t.Helper()
	var got strings.Builder
	for i, r := range replies {
		if req.HasID {
			r.Fields = r.Fields.With("re", req.ID)
		}
		line, err := Encode(r)
		if err != nil {
			t.Fatalf("line %d of %q: %v", i, text, err)
		}
		if strings.ContainsAny(line, "\r\n\t\x00") {
			t.Fatalf("line %d carries a raw control character: %q", i, line)
		}
		replyOracle(t, r, line)
		_, obj := replySplit(t, line)
		last := i == len(replies)-1
		if want := map[bool]string{true: verb, false: verb + "-MORE"}[i == 0]; r.Verb != want {
			t.Fatalf("line %d is %s", i, r.Verb)
		}
		if req.HasID && obj["re"] != req.ID {
			t.Fatalf("line %d without re: %s", i, line)
		}
		if (obj["continues"] == true) != !last {
			t.Fatalf("continues must mark every line but the last: %s", line)
		}
		if i == 0 {
			from := obj["from"].(map[string]any)
			shown, _ := from["name"].(string)
			if shown == "" || !strings.HasPrefix(name, shown) {
				t.Fatalf("from.name %q is not kept: %s", shown, line)
			}
			// The name is cut only when the text has all moved on.
			if shown != name && obj["text"] != "" {
				t.Fatalf("name cut while the line carries text: %s", line)
			}
			if !last && obj["truncated"] != true {
				t.Fatalf("a %s whose text continues must say truncated: %s", verb, line)
			}
		} else if !last && obj["truncated"] == true {
			t.Fatalf("a %s-MORE line says truncated before the end: %s", verb, line)
		}
		if last && (obj["truncated"] == true) != (len([]rune(text)) > pircan.MaxIRCText) {
			t.Fatalf("last line: truncated=%v for %d runes", obj["truncated"], len([]rune(text)))
		}
		got.WriteString(obj["text"].(string))
	}
	want := replySanitize(string([]rune(text)[:min(len([]rune(text)), pircan.MaxIRCText)]))
	if got.String() != want {
		t.Fatalf("reassembled %q, want %q", got.String(), want)
	}
}

// What was seen: a 15-character text beside a 64-character id lost re and
// the sender's name; with a 28-character id the MESSAGE line was not sent.
func TestMessageWithLongIDKeepsEverything(t *testing.T) {
	id := "0b0e0f4c-1111-4222-8333-944455556666"
	for _, n := range []int{28, 40, 64} {
		m := pircan.Message{MessageID: id, From: pircan.PartyRef{AgentID: id, Name: "Hazmat Agent"}, AgreementID: id,
			ConversationID: id, Hop: 1, At: time.Unix(0, 0), Text: "fifteen chars!!"}
		req := &Request{ID: strings.Repeat("r", n), HasID: true}
		checkMessageLines(t, m, req)
		line, _ := Encode(Reply{Verb: "MESSAGE", Fields: messageReplies(m, req)[0].Fields.With("re", req.ID)})
		_, obj := replySplit(t, line)
		if from := obj["from"].(map[string]any); from["name"] != "Hazmat Agent" {
			t.Errorf("id of %d: name %q, want it whole: %s", n, from["name"], line)
		}
	}
}

// A TASK line and its TASK-MORE lines carry exactly the task's first 200
// characters, in order, beside the requester's name, with truncated when
// the text is longer; the lines name the task.
func TestTaskRepliesCarryTheFirst200Characters(t *testing.T) {
	id := "0b0e0f4c-1111-4222-8333-944455556666"
	for _, name := range []string{"Chem Helper", strings.Repeat("😀", 80)} {
		for _, reID := range []string{"", strings.Repeat("r", 64), strings.Repeat("é", 32)} {
			for _, text := range []string{
				"short",
				strings.Repeat("a", 200),
				strings.Repeat("a", 201),
				strings.Repeat("ш😀\u2028\"", 50),
				strings.Repeat("Östra ☣ ", 100),
				strings.Repeat("step\r\n", 60), // a task sent over A2A with line breaks
			} {
				tk := pircan.Task{ID: id, Skill: strings.Repeat("s", 64), From: pircan.PartyRef{AgentID: id, Name: name},
					At: time.Unix(0, 0), State: pircan.TaskOpen, Text: text}
				req := &Request{ID: reID, HasID: reID != ""}
				replies := taskReplies(tk, req)
				checkContinued(t, "TASK", replies, name, text, req)
				for _, r := range replies {
					if r.Fields[0] != (Field{"task_id", id}) {
						t.Fatalf("%s line does not start with task_id: %v", r.Verb, r.Fields)
					}
				}
				last := replies[len(replies)-1].Fields
				if cut := len([]rune(text)) > pircan.MaxIRCText; hasKey(last, "truncated") != cut {
					t.Fatalf("%d characters: last line %v, truncated should be %v", len([]rune(text)), last, cut)
				}
			}
		}
	}
}
