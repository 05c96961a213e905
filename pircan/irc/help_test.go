package irc

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// Planned spec verbs (§3b TASKS, COMPLETE, RESOURCES) say so, in HELP and
// in their unknown_verb refusal; none of this needs a store.
func TestPlannedVerbs(t *testing.T) {
	st := &noStore{}
	svc := newTestFace(st, Config{Limits: pircan.DefaultLimits})
	defer func() {
		if st.reads > 0 {
			t.Errorf("HELP read the store %d times for an identified caller; it needs none (and must answer with the store down)", st.reads)
		}
	}()
	ask := func(line string) string {
		t.Helper()
		replies := svc.handle(context.Background(), Sender{Account: "alice", Nick: "alice"}, line)
		if len(replies) != 1 {
			t.Fatalf("%s: %d replies", line, len(replies))
		}
		s, err := Encode(replies[0])
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return s
	}
	for _, v := range []string{"TASKS", "COMPLETE", "RESOURCES"} {
		got := ask("PIRCAN/1 " + v + ` {"limit":5}`)
		if !strings.Contains(got, `"code":"unknown_verb"`) || !strings.Contains(got, v+" is planned and not available yet.") {
			t.Errorf("%s: %s", v, got)
		}
		if got := ask(`PIRCAN/1 HELP {"verb":"` + strings.ToLower(v) + `"}`); !strings.Contains(got, `"planned":true`) {
			t.Errorf("HELP %s: %s", v, got)
		}
	}
	if got := ask("PIRCAN/1 FROB"); !strings.Contains(got, "Unknown verb FROB.") {
		t.Errorf("FROB: %s", got)
	}
	if got := ask("PIRCAN/1 HELP"); !strings.Contains(got, `Planned: COMPLETE, RESOURCES, TASKS."`) || !strings.Contains(got, `"OWNER"`) {
		t.Errorf("HELP: %s", got)
	}
	// With the longest id, HELP still answers, with its re.
	id := strings.Repeat("i", 64)
	if got := ask(`PIRCAN/1 HELP {"id":"` + id + `"}`); !strings.Contains(got, `"re":"`+id+`"`) || !strings.Contains(got, `"verbs":["ACCEPT"`) {
		t.Errorf("HELP with a 64-character id: %s", got)
	}
	var plain []string
	for _, r := range svc.handle(context.Background(), Sender{Nick: "x"}, "help") {
		plain = append(plain, r.Plain)
	}
	if !strings.Contains(strings.Join(plain, "\n"), "Planned, not available yet: COMPLETE, RESOURCES, TASKS.") {
		t.Errorf("plain help: %q", plain)
	}
}

// noStore stands for no store: a verb that needs none must not call it.
// The reads Service.Caller makes are counted and fail; any other call
// panics (the embedded Store is nil).
type noStore struct {
	pircan.Store
	reads int
}

var errNoStore = errors.New("no store: this verb needs none")

func (s *noStore) AgentByAccount(context.Context, string) (pircan.Agent, error) {
	s.reads++
	return pircan.Agent{}, errNoStore
}

func (s *noStore) SeenNick(context.Context, string, string) error {
	s.reads++
	return errNoStore
}
