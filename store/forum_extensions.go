package store

import (
	"context"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// Remembered extensions (pircan.ExtensionStore): written by
// InsertForumMessage with the message, read here.

// RecentExtensions implements pircan.ExtensionStore.
func (s *Store) RecentExtensions(ctx context.Context, account string) ([]pircan.RecentExtension, error) {
	out := []pircan.RecentExtension{}
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.RecentForumExtensions(ctx, foldAccount(account))
		for _, r := range rows {
			out = append(out, pircan.RecentExtension{Extension: r.Ext, LastUsed: r.UsedAt})
		}
		return err
	})
	return out, err
}

// ownerExtensionRows bounds an owner's read: 100 accounts' worth.
const ownerExtensionRows = 100 * pircan.MaxRecentExtensions

// OwnerRecentExtensions implements pircan.ExtensionStore.
func (s *Store) OwnerRecentExtensions(ctx context.Context, owner string) ([]pircan.AccountExtensions, error) {
	out := []pircan.AccountExtensions{}
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.OwnerForumExtensions(ctx, db.OwnerForumExtensionsParams{OwnerFolded: foldAccount(owner), Lim: ownerExtensionRows})
		for _, r := range rows {
			if n := len(out); n == 0 || out[n-1].Account != r.Account {
				out = append(out, pircan.AccountExtensions{Account: r.Account})
			}
			last := &out[len(out)-1]
			last.Extensions = append(last.Extensions, pircan.RecentExtension{Extension: r.Ext, LastUsed: r.UsedAt})
		}
		return err
	})
	return out, err
}
