package irc

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// Planned spec verbs (§3b TASKS, COMPLETE) say so, in HELP and
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
	for _, v := range []string{"TASKS", "COMPLETE"} {
		got := ask("PIRCAN/1 " + v + ` {"limit":5}`)
		if !strings.Contains(got, `"code":"unknown_verb"`) || !strings.Contains(got, v+" is planned and not available yet.") {
			t.Errorf("%s: %s", v, got)
		}
		if got := ask(`PIRCAN/1 HELP {"verb":"` + strings.ToLower(v) + `"}`); !strings.Contains(got, `"planned":true`) {
			t.Errorf("HELP %s: %s", v, got)
		}
	}
	// RESOURCES is answered now: HELP describes it, not as planned (asking
	// about a verb reads no store).
	if got := ask(`PIRCAN/1 HELP {"verb":"resources"}`); strings.Contains(got, `"planned"`) || !strings.Contains(got, `"verb":"RESOURCES"`) {
		t.Errorf("HELP RESOURCES: %s", got)
	}
	if got := ask("PIRCAN/1 FROB"); !strings.Contains(got, "Unknown verb FROB.") {
		t.Errorf("FROB: %s", got)
	}
	if got := ask("PIRCAN/1 HELP"); !strings.Contains(got, `Planned: COMPLETE, TASKS."`) || !strings.Contains(got, `"OWNER"`) || !strings.Contains(got, `"RESOURCES"`) {
		t.Errorf("HELP: %s", got)
	}
	var plain []string
	for _, r := range svc.handle(context.Background(), Sender{Nick: "x"}, "help") {
		plain = append(plain, r.Plain)
	}
	if !strings.Contains(strings.Join(plain, "\n"), "Planned, not available yet: COMPLETE, TASKS.") {
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

// TestHelpVerbsGiveWayFromTheEnd: beside a short id HELP lists every verb
// whole; beside the longest ids (sizesIDs) the line may give way only as
// help.go says: docs shortened, then verbs dropped from the end of the
// list, and then "truncated": true. The syntax and the re stay whole, and
// the verbs kept are the list's first ones, in order.
func TestHelpVerbsGiveWayFromTheEnd(t *testing.T) {
	svc := newTestFace(&noStore{}, Config{Limits: pircan.DefaultLimits})
	all := verbNames(verbTable())
	const docs = `HELP {"verb":"X"} for one verb. Planned: COMPLETE, TASKS.`
	for _, id := range append([]string{"h1"}, sizesIDs...) {
		replies := svc.handle(context.Background(), Sender{Account: "alice", Nick: "alice"}, `PIRCAN/1 HELP {"id":`+sizesJSON(id)+`}`)
		if len(replies) != 1 {
			t.Fatalf("id %q: %d replies", id, len(replies))
		}
		line, err := Encode(replies[0])
		if err != nil {
			t.Fatalf("id %q: %v", id, err)
		}
		replyOracle(t, replies[0], line)
		verb, obj := replySplit(t, line)
		if verb != "HELP" || obj["re"] != id || obj["syntax"] != syntax {
			t.Fatalf("id %q: re or syntax not whole: %s", id, line)
		}
		raw, _ := obj["verbs"].([]any)
		if len(raw) == 0 {
			t.Fatalf("id %q: no verbs at all: %s", id, line)
		}
		for i, v := range raw {
			if i >= len(all) || v != all[i] {
				t.Fatalf("id %q: verbs are not the list's first %d: %s", id, len(raw), line)
			}
		}
		d, _ := obj["docs"].(string)
		if !strings.HasPrefix(docs, d) {
			t.Fatalf("id %q: docs %q is not the start of %q", id, d, docs)
		}
		shortened := len(raw) < len(all) || d != docs
		if truncated := obj["truncated"] == true; truncated != shortened {
			t.Fatalf("id %q: truncated %v, but %d of %d verbs and docs %q: %s", id, truncated, len(raw), len(all), d, line)
		}
		if id == "h1" && shortened {
			t.Fatalf("a short id: HELP must list every verb and the docs whole: %s", line)
		}
		if len(raw) < len(all) && d != "" && d == docs {
			t.Fatalf("id %q: verbs dropped while docs stayed whole (docs give way first): %s", id, line)
		}
	}
}
