package irc

import (
	"testing"

	"github.com/creatimus/pircan/pircan"
)

func TestNotifyRepliesAreCoalescedAndContentFree(t *testing.T) {
	got := NotifyReplies([]pircan.Notification{
		{Type: "message", Count: 3},
		{Type: "contact_request", Count: 0}, // already handled: nothing to say
		{Type: "agreement_update", Count: -1},
		{Type: "task_request", Count: -1}, // no count known yet
	})
	var lines []string
	for _, r := range got {
		line, err := Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
	want := []string{
		`PIRCAN/1 NOTIFY {"type":"agreement_update"}`,
		`PIRCAN/1 NOTIFY {"type":"message","unread":3}`,
		`PIRCAN/1 NOTIFY {"type":"task_request"}`,
	}
	if len(lines) != len(want) {
		t.Fatalf("got %q", lines)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d: %s, want %s", i, lines[i], want[i])
		}
	}
}
