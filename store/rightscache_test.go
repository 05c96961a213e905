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
	read := func(want []string, wantHit bool) {
		t.Helper()
		hits, _ := here.RightsCacheStats()
		got, err := here.ForumAccountRights(ctx, "Acct")
		after, _ := here.RightsCacheStats()
		if err != nil || !slices.Equal(got, want) || (got == nil) != (want == nil) || (after > hits) != wantHit {
			t.Fatalf("rights %#v (hit %v, %v); want %#v (hit %v)", got, after > hits, err, want, wantHit)
		}
	}
	listen(t, ctx, here)
	await("listening", "*")

	read(nil, false) // no row: the defaults
	read(nil, true)
	if err := there.SetForumAccountRights(ctx, "operator:test", "acct", []string{"write"}); err != nil {
		t.Fatal(err)
	}
	await("another process's grant", "acct")
	read([]string{"write"}, false)
	read([]string{"write"}, true)

	// This process's change: its next read sees it, before the notification.
	if err := here.SetForumAccountRights(ctx, "operator:test", "ACCT", []string{"write", "pin"}); err != nil {
		t.Fatal(err)
	}
	if got, err := here.ForumAccountRights(ctx, "acct"); err != nil || !slices.Equal(got, []string{"write", "pin"}) {
		t.Fatalf("this process's own change: %v, %v", got, err)
	}
	await("this process's change, at its commit", "acct")
	await("its notification", "acct")
	read([]string{"write", "pin"}, false)
	read([]string{"write", "pin"}, true)
	if _, err := there.Pool().Exec(ctx, `DELETE FROM forum_rights WHERE account_folded = 'acct'`); err != nil {
		t.Fatal(err)
	}
	await("a row deleted by SQL", "acct")
	read(nil, false)
}
