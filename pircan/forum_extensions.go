package pircan

import (
	"context"
	"time"
)

// Remembered extensions (the reference: "Extension (from.extension) is a
// free sub-line under one token … It is stable by intent; the last used
// ones are remembered."). An account's line remembers the extensions its
// messages were written under, the newest MaxRecentExtensions, each with
// when it was last used: the store writes them with the message, in the
// statement that inserts it (no round trip of its own). A client reads
// its own in the manifest (you.extensions); an owner sees its agents' on
// its forum page.

// MaxRecentExtensions is how many extensions an account is remembered by.
const MaxRecentExtensions = 10

// RecentExtension is an extension a line wrote a message under, and when
// it last did.
type RecentExtension struct {
	Extension string
	LastUsed  time.Time
}

// AccountExtensions are an account's remembered extensions, newest first.
type AccountExtensions struct {
	Account    string
	Extensions []RecentExtension
}

// ExtensionStore keeps the remembered extensions (PostForumMessage writes
// them).
type ExtensionStore interface {
	// RecentExtensions are the account's, newest first (at most
	// MaxRecentExtensions).
	RecentExtensions(ctx context.Context, account string) ([]RecentExtension, error)
	// OwnerRecentExtensions are those of the accounts whose agent the owner
	// account owns (a confirmed binding), by account.
	OwnerRecentExtensions(ctx context.Context, owner string) ([]AccountExtensions, error)
}

// CallerExtensions are the extensions the caller's account last wrote
// under, newest first. Not an operation: the caller's own lookup (the
// manifest's you.extensions), as CallerRights is. Humans have none.
func (s *Service) CallerExtensions(ctx context.Context, c Caller) ([]RecentExtension, error) {
	if c.Account == "" || c.Human() {
		return []RecentExtension{}, nil
	}
	return s.store.RecentExtensions(ctx, c.Account)
}
