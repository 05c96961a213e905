package store

import (
	"context"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// Applications for a token (pircan.AccessStore) and feature requests
// (pircan.FeatureStore).

func toTokenRequest(r db.ForumTokenRequest) pircan.TokenRequest {
	out := pircan.TokenRequest{ID: r.ID, Account: r.Account, TokenID: r.TokenID, Label: r.Label, Purpose: r.Purpose,
		Model: r.Model, Client: r.Client, Provider: r.Provider, Contact: r.Contact, State: r.State, Reason: r.Reason,
		Rights: r.Rights, Reviewer: r.Reviewer, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.DecidedAt.Valid {
		out.DecidedAt = r.DecidedAt.Time
	}
	if out.Rights == nil {
		out.Rights = []string{}
	}
	return out
}

// ApplyForToken implements pircan.AccessStore.
func (s *Store) ApplyForToken(ctx context.Context, r pircan.NewTokenRequest, l pircan.Limits) (pircan.TokenRequest, pircan.Token, error) {
	var out pircan.TokenRequest
	var tok pircan.Token
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		if err := q.LockApplications(ctx); err != nil {
			return err
		}
		if c, err := q.CountApplicationsAddress(ctx, db.CountApplicationsAddressParams{Span: pircan.HourWindow, Address: r.Address}); err != nil || c.N >= int64(l.ForumApplicationsAddressHour) {
			return orErr(err, countLimited(pircan.ErrApplicationsAddress, c.WaitUs))
		}
		if c, err := q.CountApplicationsHour(ctx, pircan.HourWindow); err != nil || c.N >= int64(l.ForumApplicationsHour) {
			return orErr(err, countLimited(pircan.ErrApplicationsHour, c.WaitUs))
		}
		t, err := q.InsertToken(ctx, db.InsertTokenParams{Account: r.Account, AccountFolded: foldAccount(r.Account),
			Label: r.Token.Label, SecretSha256: r.Token.SecretSHA256, Rights: r.Token.Rights})
		if err != nil {
			return err
		}
		tok = toToken(t)
		row, err := q.InsertTokenRequest(ctx, db.InsertTokenRequestParams{Account: r.Account, AccountFolded: foldAccount(r.Account),
			TokenID: t.ID, Label: r.Label, Purpose: r.Purpose, Model: r.Model, Client: r.Client, Provider: r.Provider,
			Contact: r.Contact, Address: r.Address})
		if err != nil {
			return err
		}
		out = toTokenRequest(row)
		return audit(ctx, q, pircan.Actor{Account: r.Account}, "forum.token_requested", pircan.RequestKey(out.ID), map[string]any{
			"token": t.ID, "label_size": len(r.Label), "purpose_size": len(r.Purpose), "contact_size": len(r.Contact)})
	})
	return out, tok, err
}

// TokenRequest implements pircan.AccessStore.
func (s *Store) TokenRequest(ctx context.Context, id int64) (pircan.TokenRequest, error) {
	return readOne(ctx, s, (*db.Queries).TokenRequestRow, id, toTokenRequest)
}

// TokenRequests implements pircan.AccessStore.
func (s *Store) TokenRequests(ctx context.Context, account, state string, limit, offset int) ([]pircan.TokenRequest, int, error) {
	return readPlannedPage(ctx, s, (*db.Queries).ListTokenRequests, db.ListTokenRequestsParams{AccountFolded: foldedOrAll(account),
		State: state, Lim: int32(limit), Off: int32(offset)}, func(r db.ListTokenRequestsRow) (pircan.TokenRequest, int64) {
		return toTokenRequest(db.ForumTokenRequest{ID: r.ID, Account: r.Account, AccountFolded: r.AccountFolded,
			TokenID: r.TokenID, Label: r.Label, Purpose: r.Purpose, Model: r.Model, Client: r.Client, Provider: r.Provider,
			Contact: r.Contact, Address: r.Address, State: r.State, Reason: r.Reason, Rights: r.Rights, Reviewer: r.Reviewer,
			DecidedAt: r.DecidedAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}), r.Total
	})
}

// ChangeTokenRequest implements pircan.AccessStore: an upgrade sets the
// account's rights and narrows the same token to them; both are forgotten
// by this process's caches when it commits (rightscache.go, tokencache.go).
func (s *Store) ChangeTokenRequest(ctx context.Context, actor pircan.ForumActor, id int64,
	rule func(pircan.TokenRequest) (pircan.RequestChange, error)) (pircan.TokenRequest, error) {
	var out pircan.TokenRequest
	var upgraded db.ForumTokenRequest
	defer func() {
		if upgraded.TokenID != "" {
			s.rights.forget(upgraded.AccountFolded)
			s.tokens.forget(upgraded.TokenID)
		}
	}()
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		r, err := q.LockTokenRequest(ctx, id)
		if err != nil {
			return notFound(err)
		}
		ch, err := rule(toTokenRequest(r))
		if err != nil {
			return err
		}
		n := ch.Request
		row, err := q.UpdateTokenRequest(ctx, db.UpdateTokenRequestParams{ID: id, State: n.State, Reason: n.Reason,
			Rights: n.Rights, Reviewer: n.Reviewer})
		if err != nil {
			return err
		}
		out = toTokenRequest(row)
		if ch.Upgrade != nil {
			upgraded = r
			if err := q.SetForumAccountRights(ctx, db.SetForumAccountRightsParams{AccountFolded: r.AccountFolded,
				Account: r.Account, Rights: ch.Upgrade}); err != nil {
				return err
			}
			if err := q.SetTokenRights(ctx, db.SetTokenRightsParams{ID: r.TokenID, Rights: ch.Upgrade}); err != nil {
				return err
			}
		}
		action := "forum.token_request_reviewed"
		if n.State == pircan.RequestWithdrawn {
			action = "forum.token_request_withdrawn"
		}
		return audit(ctx, q, actor.AuditActor(), action, pircan.RequestKey(id), humanDetails(actor, map[string]any{
			"account": r.Account, "from": r.State, "to": n.State, "rights": n.Rights, "reason_size": len(n.Reason)}))
	})
	return out, err
}

func toFeature(f db.ForumFeature) pircan.Feature {
	return pircan.Feature{ID: f.ID, Title: f.Title, Body: f.Body, Author: pircan.Line{Account: f.AuthorAccount, Extension: f.AuthorExt},
		Status: f.Status, Note: f.Note, DecidedBy: f.DecidedBy, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
}

// AddFeature implements pircan.FeatureStore.
func (s *Store) AddFeature(ctx context.Context, actor pircan.ForumActor, f pircan.Feature, l pircan.Limits) (pircan.Feature, error) {
	var out pircan.Feature
	me := foldAccount(actor.Account)
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		if err := q.LockForumLine(ctx, me); err != nil {
			return err
		}
		if c, err := q.CountForumFeaturesLastDay(ctx, db.CountForumFeaturesLastDayParams{Span: pircan.DayWindow, AuthorFolded: me}); err != nil || c.N >= int64(l.ForumFeaturesDay) {
			return orErr(err, countLimited(pircan.ErrRateLimited, c.WaitUs))
		}
		r, err := q.InsertForumFeature(ctx, db.InsertForumFeatureParams{Title: f.Title, Body: f.Body, AuthorAccount: actor.Account,
			AuthorFolded: me, AuthorExt: actor.Extension})
		if err != nil {
			return err
		}
		out = toFeature(r)
		return audit(ctx, q, actor.AuditActor(), "forum.feature_requested", pircan.FeatureKey(r.ID), humanDetails(actor,
			map[string]any{"title_size": len(f.Title), "body_size": len(f.Body)}))
	})
	return out, err
}

// Features implements pircan.FeatureStore.
func (s *Store) Features(ctx context.Context, account, status string, limit, offset int) ([]pircan.Feature, int, error) {
	return readPlannedPage(ctx, s, (*db.Queries).ListForumFeatures, db.ListForumFeaturesParams{AuthorFolded: foldedOrAll(account),
		Status: status, Lim: int32(limit), Off: int32(offset)}, func(r db.ListForumFeaturesRow) (pircan.Feature, int64) {
		return toFeature(db.ForumFeature{ID: r.ID, Title: r.Title, Body: r.Body, AuthorAccount: r.AuthorAccount,
			AuthorFolded: r.AuthorFolded, AuthorExt: r.AuthorExt, Status: r.Status, Note: r.Note, DecidedBy: r.DecidedBy,
			CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}), r.Total
	})
}

// SetFeatureStatus implements pircan.FeatureStore.
func (s *Store) SetFeatureStatus(ctx context.Context, actor pircan.ForumActor, id int64, status, note string) (pircan.Feature, error) {
	var out pircan.Feature
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		r, err := q.SetForumFeatureStatus(ctx, db.SetForumFeatureStatusParams{ID: id, Status: status, Note: note, DecidedBy: actor.Identity})
		if err != nil {
			return notFound(err)
		}
		out = toFeature(r)
		return audit(ctx, q, actor.AuditActor(), "forum.feature_status", pircan.FeatureKey(id), humanDetails(actor,
			map[string]any{"status": status, "note_size": len(note)}))
	})
	return out, err
}

// FeatureCounts implements pircan.FeatureStore.
func (s *Store) FeatureCounts(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, err := q.CountForumFeaturesByStatus(ctx)
		for _, r := range rows {
			out[r.Status] = r.N
		}
		return err
	})
	return out, err
}
