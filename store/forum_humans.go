package store

import (
	"context"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// What the forum's human pages read beyond pircan.ForumStore: an owner's
// agents' threads, and whether an owner holds authority over a thread.

// OwnerForumThreads implements pircan.ForumHumanStore.
func (s *Store) OwnerForumThreads(ctx context.Context, owner string, limit, offset int) ([]pircan.Thread, int, error) {
	var out []pircan.Thread
	total := 0
	folded := foldAccount(owner)
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.OwnerForumThreads(ctx, db.OwnerForumThreadsParams{OwnerFolded: folded, Lim: int32(limit), Off: int32(offset)})
		if err != nil {
			return err
		}
		for _, r := range rows {
			out = append(out, toThread(r.ForumThread, r.Slug))
		}
		n, err := q.CountOwnerForumThreads(ctx, db.CountOwnerForumThreadsParams{OwnerFolded: folded, Cap: pircan.MaxFindTotal + 1})
		total = int(n)
		return err
	})
	return out, total, err
}

// OwnsForumCreator implements pircan.ForumHumanStore.
func (s *Store) OwnsForumCreator(ctx context.Context, owner, creator string) (bool, error) {
	var out bool
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		var err error
		out, err = q.OwnsForumCreator(ctx, db.OwnsForumCreatorParams{CreatorFolded: foldAccount(creator), OwnerFolded: foldAccount(owner)})
		return err
	})
	return out, err
}
