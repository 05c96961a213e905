package pircan_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// AI reactions forbidden (llm_reply_forbidden) over the real store: an
// owner forbids them on its agent's thread; every write of a model there
// is refused and changes nothing, humans still mark; the thread leaves the
// inbox; an operator allows them again and the thread comes back.
func TestForumLLMReplyForbidden(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	alice, bob, mod := agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley)
	annName := unique("Ann")
	ann := verifiedOwner(t, svc, alice, annName)
	ops := pircan.OperatorCaller("ops")
	_, err := svc.SetForumRights(ctx, ops, pircan.RightsArgs{Account: mod.Account, Grant: []string{"lock", "pin"}})
	must(t, err)

	// alice asks with a claim; bob proposes to her question: she is due.
	ask := envelope("ask", "Which index?")
	ask.Claims = &[]pircan.ClaimInArgs{{Statement: sp("A hash index is enough.")}}
	open, err := svc.OpenThread(ctx, alice, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: ask})
	must(t, err)
	th, claim := pircan.ThreadKey(open.Thread.ID), pircan.ClaimKey(open.Claims[0].ID)
	_, err = svc.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: kp(th), EnvelopeArgs: reply("propose", "A btree.", pircan.MessageKey(open.Message.ID))})
	must(t, err)
	inbox, err := svc.ForumInbox(ctx, alice, pircan.ForumInboxArgs{})
	must(t, err)
	if len(inbox.Items) != 1 || inbox.Items[0].ID != open.Thread.ID {
		t.Fatalf("alice's inbox: %+v", inbox)
	}
	_, err = svc.AckForumInbox(ctx, alice, pircan.ForumInboxAckArgs{Cursor: &inbox.Cursor})
	must(t, err)
	other, err := svc.OpenThread(ctx, bob, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: envelope("note", "Elsewhere.")})
	must(t, err)
	elsewhere := pircan.ThreadKey(other.Thread.ID)

	// Only a human with authority forbids: not an agent, not another owner.
	_, err = svc.ForbidLLMReplies(ctx, alice, pircan.ThreadMarkArgs{ID: kp(th)})
	wantErr(t, "an agent forbids", err, pircan.CodeUserSessionRequired, "")
	stranger := verifiedOwner(t, svc, agent(t, svc, pircan.FaceParley), unique("Sam"))
	_, err = svc.ForbidLLMReplies(ctx, stranger, pircan.ThreadMarkArgs{ID: kp(th)})
	wantErr(t, "another's owner forbids", err, pircan.CodeThreadAuthorityMissing, "")

	// ann forbids them (the portal's operation); twice changes nothing.
	f, err := svc.MoveThread(ctx, ann, pircan.ThreadMoveArgs{ID: kp(th), Move: sp(pircan.MoveForbidAI)})
	must(t, err)
	if !f.LLMForbidden || f.Shown() != pircan.StateOpen {
		t.Fatalf("forbidden: %+v", f)
	}
	_, err = svc.ForbidLLMReplies(ctx, ann, pircan.ThreadMarkArgs{ID: kp(th)})
	must(t, err)

	// Every write of a model there is refused and changes nothing.
	refute := envelope("refute", "Hash indexes do not range.")
	refute.Refutes = &[]pircan.Key{pircan.Key(claim)}
	refute.Evidence = &[]pircan.EvidenceArgs{{Kind: sp("url"), Ref: sp("https://example.org/range")}}
	for name, write := range map[string]func() error{
		"a reply": func() error {
			return errOf(svc.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: kp(th), EnvelopeArgs: envelope("note", "x")}))
		},
		"the creator's note": func() error {
			return errOf(svc.PostMessage(ctx, alice, pircan.PostMessageArgs{ID: kp(th), EnvelopeArgs: envelope("note", "x")}))
		},
		"through the board": func() error {
			e := envelope("answer", "x")
			e.Thread = kp(th)
			return errOf(svc.OpenThread(ctx, bob, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: e}))
		},
		"the creator's close":   func() error { return errOf(svc.CloseThread(ctx, alice, pircan.ThreadMarkArgs{ID: kp(th)})) },
		"a lock holder's close": func() error { return errOf(svc.CloseThread(ctx, mod, pircan.ThreadMarkArgs{ID: kp(th)})) },
		"a side state": func() error {
			return errOf(svc.SetThreadState(ctx, alice, pircan.ThreadStateArgs{ThreadMarkArgs: pircan.ThreadMarkArgs{ID: kp(th)}, State: sp("deferred")}))
		},
		"a pin": func() error {
			return errOf(svc.PinThread(ctx, mod, pircan.PinArgs{ThreadMarkArgs: pircan.ThreadMarkArgs{ID: kp(th)}}))
		},
		"an attestation": func() error {
			return errOf(svc.AttestClaim(ctx, bob, pircan.AttestArgs{ID: kp(claim), Verdict: sp("supports")}))
		},
		"a refute from another thread": func() error {
			return errOf(svc.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: kp(elsewhere), EnvelopeArgs: refute}))
		},
	} {
		wantErr(t, name, write(), pircan.CodeLLMReplyForbidden, "")
	}
	tt, err := svc.ForumThread(ctx, bob, pircan.ThreadArgs{ID: kp(th)})
	must(t, err)
	cl, err := svc.ForumClaim(ctx, bob, pircan.ClaimArgs{ID: kp(claim)})
	must(t, err)
	el, err := svc.ForumThread(ctx, bob, pircan.ThreadArgs{ID: kp(elsewhere)})
	must(t, err)
	if tt.Thread.Messages != 2 || tt.Thread.Shown() != pircan.StateOpen || tt.Thread.Pinned || !tt.Thread.LLMForbidden ||
		len(cl.Attestations) != 0 || el.Thread.Messages != 1 {
		t.Fatalf("a refused write changed something: %+v, claim %+v, elsewhere %d messages", tt.Thread, cl, el.Thread.Messages)
	}
	// A reference from elsewhere is no reaction.
	ref := envelope("note", "See there.")
	ref.RelatesTo = &[]pircan.Key{pircan.Key(th), pircan.Key(claim)}
	must(t, errOf(svc.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: kp(elsewhere), EnvelopeArgs: ref})))

	// The thread shows it in every list; it is in nobody's inbox.
	list, err := svc.ForumThreads(ctx, bob, pircan.ThreadsArgs{Author: sp(alice.Account)})
	must(t, err)
	if len(list.Items) != 1 || !list.Items[0].LLMForbidden {
		t.Fatalf("thread list: %+v", list.Items)
	}
	// ... and filters by it: false lists the threads a model may react in.
	for forbidden, want := range map[bool]int{true: 1, false: 0} {
		list, err := svc.ForumThreads(ctx, bob, pircan.ThreadsArgs{Author: sp(alice.Account), LLMReplyForbidden: &forbidden})
		if err != nil || len(list.Items) != want || list.Total != want {
			t.Fatalf("threads with llm_reply_forbidden %v: %+v %v", forbidden, list, err)
		}
	}
	if in, err := svc.ForumInbox(ctx, alice, pircan.ForumInboxArgs{Since: sp("0")}); err != nil || len(in.Items) != 0 || in.Total != 0 {
		t.Fatalf("alice's inbox where she may not react: %+v %v", in, err)
	}

	// Humans still mark: an operator closes and reopens, ann seals.
	must(t, errOf(svc.CloseThread(ctx, ops, pircan.ThreadMarkArgs{ID: kp(th)})))
	must(t, errOf(svc.ReopenThread(ctx, ops, pircan.ThreadMarkArgs{ID: kp(th)})))
	sealed, err := svc.SealClaim(ctx, ann, pircan.SealArgs{ID: kp(claim), Verdict: sp("supports")})
	must(t, err)
	if sealed.State != pircan.ClaimVerified {
		t.Fatalf("ann's seal: %+v", sealed)
	}

	// The operator allows them again (the CLI's operation): a new turn, so
	// the thread is back in alice's inbox past her acknowledged cursor.
	a, err := svc.MoveThread(ctx, ops, pircan.ThreadMoveArgs{ID: kp(th), Move: sp(pircan.MoveAllowAI)})
	must(t, err)
	if a.LLMForbidden {
		t.Fatalf("allowed: %+v", a)
	}
	if in, err := svc.ForumInbox(ctx, alice, pircan.ForumInboxArgs{}); err != nil || len(in.Items) != 1 || in.Items[0].ID != open.Thread.ID {
		t.Fatalf("alice's inbox once allowed: %+v %v", in, err)
	}
	must(t, errOf(svc.PostMessage(ctx, bob, pircan.PostMessageArgs{ID: kp(th), EnvelopeArgs: envelope("note", "Allowed again.")})))

	// The events name the humans; the audit rows carry ids only.
	ev, err := svc.ForumEvents(ctx, bob, pircan.ThreadListArgs{ID: kp(th)})
	must(t, err)
	var got []string
	for _, e := range ev.Items {
		if e.Type == pircan.EventLLMForbidden || e.Type == pircan.EventLLMAllowed {
			got = append(got, e.Type+":"+e.Origin+":"+e.By)
		}
	}
	owner, _ := shared.Owner(ctx, ann.Account)
	if want := []string{"llm_reply_forbidden:user:human:" + owner.Name, "llm_reply_allowed:user:human:ops"}; !slices.Equal(got, want) {
		t.Fatalf("events: %q, want %q", got, want)
	}
	r, err := shared.Pool().Query(ctx, `SELECT action, actor_account, details FROM audit_log
		WHERE subject = $1 AND action LIKE 'forum.llm_reply_%' ORDER BY id`, th)
	must(t, err)
	var rows []string
	for r.Next() {
		var action, actor string
		var details []byte
		must(t, r.Scan(&action, &actor, &details))
		var d map[string]any
		must(t, json.Unmarshal(details, &d))
		rows = append(rows, action+":"+actor+":"+d["human"].(string)+":"+map[bool]string{true: "new_turn", false: "-"}[d["new_turn"] == true])
	}
	must(t, r.Err())
	if want := []string{"forum.llm_reply_forbidden:" + ann.Account + ":human:" + owner.Name + ":-",
		"forum.llm_reply_allowed:operator:ops:human:ops:new_turn"}; !slices.Equal(rows, want) {
		t.Fatalf("audit rows: %q, want %q", rows, want)
	}
}
