package pircan_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

func TestMessageTree(t *testing.T) {
	t.Parallel()
	// 1 ← 2 ← 4, 1 ← 3, 5 (no parent), 6 ← 99 (a parent on another page)
	msgs := []pircan.ForumMessage{{ID: 1}, {ID: 2, Parent: 1}, {ID: 3, Parent: 1}, {ID: 4, Parent: 2}, {ID: 5}, {ID: 6, Parent: 99}}
	var got []string
	for _, m := range pircan.MessageTree(msgs) {
		got = append(got, fmt.Sprintf("%d@%d", m.ID, m.Depth))
	}
	if want := []string{"1@0", "2@1", "4@2", "3@1", "5@0", "6@0"}; !slices.Equal(got, want) {
		t.Fatalf("tree %v, want %v", got, want)
	}
	// A chain of 10,000 replies: every message once, each one deeper.
	chain := make([]pircan.ForumMessage, 10000)
	for i := range chain {
		chain[i] = pircan.ForumMessage{ID: int64(i + 1), Parent: int64(i)}
	}
	tree := pircan.MessageTree(chain)
	if len(tree) != len(chain) || tree[9999].ID != 10000 || tree[9999].Depth != 9999 {
		t.Fatalf("chain: %d messages, last %+v", len(tree), tree[len(tree)-1])
	}
}

// HumanThread shows an operator every mark the rules take, and an owner
// of another's thread none; a model cannot read it at all.
func TestHumanThreadMoves(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	alice, bob := agent(t, svc, pircan.FaceParley), agent(t, svc, pircan.FaceParley)
	ann := verifiedOwner(t, svc, bob, unique("Ann"))
	open, err := svc.OpenThread(ctx, alice, pircan.OpenThreadArgs{ID: kp("lobby"), EnvelopeArgs: envelope("ask", "Q?")})
	must(t, err)
	id := kp(pircan.ThreadKey(open.Thread.ID))
	_, err = svc.SetThreadState(ctx, alice, pircan.ThreadStateArgs{ThreadMarkArgs: pircan.ThreadMarkArgs{ID: id}, State: sp("deferred")})
	must(t, err)

	ops := pircan.OperatorCaller("operator:ops")
	h, err := svc.HumanThread(ctx, ops, pircan.HumanThreadArgs{ThreadArgs: pircan.ThreadArgs{ID: id}})
	must(t, err)
	// proposed deferred over a confirmed open: confirm, decline, reopen
	// (confirms open); close is not reachable from deferred, nor another
	// side state; AI reactions may be forbidden.
	if want := []string{"confirm", "decline", "reopen", "forbid-ai"}; !h.Authority || !slices.Equal(h.Moves, want) {
		t.Fatalf("operator: authority %v, moves %v, want %v", h.Authority, h.Moves, want)
	}
	if len(h.Tree) != 1 || h.Events.Total != 2 {
		t.Fatalf("operator: tree %d, events %d", len(h.Tree), h.Events.Total)
	}
	h, err = svc.HumanThread(ctx, ann, pircan.HumanThreadArgs{ThreadArgs: pircan.ThreadArgs{ID: id}})
	must(t, err)
	if h.Authority || len(h.Moves) != 0 {
		t.Fatalf("another agent's owner: authority %v, moves %v", h.Authority, h.Moves)
	}
	_, err = svc.HumanThread(ctx, alice, pircan.HumanThreadArgs{ThreadArgs: pircan.ThreadArgs{ID: id}})
	wantErr(t, "a model's HumanThread", err, pircan.CodeUserSessionRequired, "")
	_, err = svc.MoveThread(ctx, ann, pircan.ThreadMoveArgs{ID: id, Move: sp("confirm")})
	wantErr(t, "another agent's owner confirms", err, pircan.CodeThreadAuthorityMissing, "")
	th, err := svc.MoveThread(ctx, ops, pircan.ThreadMoveArgs{ID: id, Move: sp("confirm")})
	if err != nil || th.State != pircan.StateDeferred || th.Proposed != "" {
		t.Fatalf("operator confirms: %+v %v", th, err)
	}
}
