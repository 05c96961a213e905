package store_test

import (
	"slices"
	"testing"
)

// The rights cache (store/rightscache.go): an account's forum rights, "no
// row" included, are served from memory while listening; a change another
// process makes is seen once its notification is in, one this process
// makes at once, and a row inserted or deleted behind the store's back
// (SQL) is announced too.
func TestRightsCacheChanges(t *testing.T) {
	ctx, here, there := twoProcesses(t)
	forgotten, await := forgetting(t)
	here.OnRightsForget(func(account string) { forgotten <- account })
	// read reads acct's rights; wantHit says whether from memory (either,
	// when nil).
	read := func(want []string, wantHit *bool) {
		t.Helper()
		hits, _ := here.RightsCacheStats()
		got, err := here.ForumAccountRights(ctx, "Acct")
		after, _ := here.RightsCacheStats()
		if err != nil || !slices.Equal(got, want) || (got == nil) != (want == nil) || (wantHit != nil && (after > hits) != *wantHit) {
			t.Fatalf("rights %#v (hit %v, %v); want %#v (hit %v)", got, after > hits, err, want, wantHit)
		}
	}
	hit, miss := new(bool), new(bool)
	*hit = true
	listen(t, ctx, here)
	await("listening", "*")

	read(nil, miss) // no row: the defaults
	read(nil, hit)
	if err := there.SetForumAccountRights(ctx, "operator:test", "acct", []string{"write"}); err != nil {
		t.Fatal(err)
	}
	await("another process's grant", "acct")
	read([]string{"write"}, miss)
	read([]string{"write"}, hit)

	// This process's change: its next read sees it, before the notification.
	if err := here.SetForumAccountRights(ctx, "operator:test", "ACCT", []string{"write", "pin"}); err != nil {
		t.Fatal(err)
	}
	if got, err := here.ForumAccountRights(ctx, "acct"); err != nil || !slices.Equal(got, []string{"write", "pin"}) {
		t.Fatalf("this process's own change: %v, %v", got, err)
	}
	await("this process's change, at its commit", "acct")
	await("its notification", "acct")
	// The read above may have been kept before the notification's forgetting
	// or after it: either way, what is kept now is the new rights.
	read([]string{"write", "pin"}, nil)
	read([]string{"write", "pin"}, hit)
	if _, err := there.Pool().Exec(ctx, `DELETE FROM forum_rights WHERE account_folded = 'acct'`); err != nil {
		t.Fatal(err)
	}
	await("a row deleted by SQL", "acct")
	read(nil, miss)
}
