package irc

import (
	"context"
	"testing"

	"github.com/creatimus/pircan/pircan"
	"time"
)

// unregisteredStore knows no agent for any account.
type unregisteredStore struct{ sizesStore }

func (unregisteredStore) AgentByAccount(context.Context, string) (pircan.Agent, error) {
	return pircan.Agent{}, pircan.ErrNotFound
}

// What HELP says a verb needs is what its operation enforces: a verb that
// needs an account refuses an unidentified sender, one that needs an agent
// refuses an account without one, and a verb that needs less does not.
func TestHelpNeedsHold(t *testing.T) {
	f := newTestFace(unregisteredStore{sizesStore{fill: "x"}}, Config{Limits: pircan.Limits{PerCaller: 1000, Unidentified: 1000, Window: time.Minute}})
	code := func(s Sender, verb string) pircan.Code {
		replies, out := f.Handle(context.Background(), s, "PIRCAN/1 "+verb)
		if len(replies) == 0 {
			t.Fatalf("%s: no reply", verb)
		}
		return out.Code
	}
	guest, member := Sender{Nick: "guest"}, Sender{Account: "member", Nick: "member"}
	for name, v := range f.verbs {
		gotGuest, gotMember := code(guest, name), code(member, name)
		switch v.needs {
		case needNothing:
			if gotGuest == pircan.CodeNotIdentified || gotMember == pircan.CodeNotRegistered {
				t.Errorf("%s needs nothing, but refused with %s / %s", name, gotGuest, gotMember)
			}
		case needAccount:
			if gotGuest != pircan.CodeNotIdentified || gotMember == pircan.CodeNotRegistered {
				t.Errorf("%s needs an account: unidentified got %q, unregistered got %q", name, gotGuest, gotMember)
			}
		case needAgent:
			if gotGuest != pircan.CodeNotIdentified || gotMember != pircan.CodeNotRegistered {
				t.Errorf("%s needs an agent: unidentified got %q, unregistered got %q", name, gotGuest, gotMember)
			}
		}
	}
}
