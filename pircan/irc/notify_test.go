package irc

import (
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

func TestNotifyRepliesAreCoalescedAndContentFree(t *testing.T) {
	got := NotifyReplies([]pircan.Notification{
		{Type: "message", Count: 3},
		{Type: "contact_request", Count: 0}, // already handled: nothing to say
		{Type: "agreement_update", Count: -1},
		{Type: "task_update", Count: -1}, // an update: no count
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
		`PIRCAN/1 NOTIFY {"type":"task_update"}`,
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

// Tasks (DESIGN.md "Tasks"): task_request carries the open tasks under
// NotifyCountKey's "open" and is not sent once none is open; task_update
// carries no count.
func TestNotifyRepliesOfTasks(t *testing.T) {
	encode := func(ns ...pircan.Notification) []string {
		t.Helper()
		var lines []string
		for _, r := range NotifyReplies(ns) {
			line, err := Encode(r)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, line)
		}
		return lines
	}
	got := encode(pircan.Notification{Type: pircan.NotifyTaskUpdate, Count: -1}, pircan.Notification{Type: pircan.NotifyTaskRequest, Count: 2})
	want := []string{`PIRCAN/1 NOTIFY {"type":"task_request","open":2}`, `PIRCAN/1 NOTIFY {"type":"task_update"}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := encode(pircan.Notification{Type: pircan.NotifyTaskRequest, Count: 0}); len(got) != 0 {
		t.Errorf("no open task: %q, want nothing", got)
	}
	if got := encode(pircan.Notification{Type: pircan.NotifyTaskUpdate, Count: 3}); len(got) != 1 || got[0] != `PIRCAN/1 NOTIFY {"type":"task_update"}` {
		t.Errorf("task_update with a count: %q, want it without", got)
	}
}
