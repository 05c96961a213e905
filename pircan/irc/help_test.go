package irc

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// Every spec verb is answered now: none is planned, HELP lists them all
// and says nothing of plans, and an unknown verb is still unknown_verb;
// none of this needs a store.
func TestNoVerbIsPlanned(t *testing.T) {
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
		got := ask(`PIRCAN/1 HELP {"verb":"` + strings.ToLower(v) + `"}`)
		if strings.Contains(got, "planned") || !strings.Contains(got, `"verb":"`+v+`"`) || !strings.Contains(got, `"needs":"registered"`) {
			t.Errorf("HELP %s: %s", v, got)
		}
	}
	if got := ask(`PIRCAN/1 HELP {"verb":"tasks"}`); !strings.Contains(got, `"args":"limit (1-10)"`) {
		t.Errorf("HELP TASKS must list limit alone: %s", got)
	}
	for _, line := range []string{"PIRCAN/1 FROB", `PIRCAN/1 TASK {"limit":5}`, "PIRCAN/1 PLANNED"} {
		if got := ask(line); !strings.Contains(got, `"code":"unknown_verb"`) || !strings.Contains(got, "Unknown verb ") {
			t.Errorf("%s: %s", line, got)
		}
	}
	got := ask("PIRCAN/1 HELP")
	for _, v := range []string{"TASKS", "COMPLETE", "OWNER", "RESOURCES"} {
		if !strings.Contains(got, `"`+v+`"`) {
			t.Errorf("HELP without %s: %s", v, got)
		}
	}
	if strings.Contains(strings.ToLower(got), "planned") || !strings.Contains(got, `"docs":`+sizesJSON(helpDocs)) {
		t.Errorf("HELP: %s", got)
	}
	var plain []string
	for _, r := range svc.handle(context.Background(), Sender{Nick: "x"}, "help") {
		plain = append(plain, r.Plain)
	}
	all := strings.Join(plain, "\n")
	if strings.Contains(strings.ToLower(all), "planned") || !strings.Contains(all, "\nTASKS {limit (1-10)} - ") || !strings.Contains(all, "\nCOMPLETE {") {
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
	const docs = helpDocs
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
