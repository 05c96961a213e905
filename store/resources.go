package store

import (
	"context"
	"strings"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// AddResource implements pircan.ResourceStore: both limits are checked in
// one transaction with the publisher's row locked, so racing publications
// (several faces of one agent) beat neither. The hourly count reads the
// audit log's resource.published rows, which deleting never removes.
func (s *Store) AddResource(ctx context.Context, actor pircan.Actor, r pircan.NewResource, l pircan.Limits) (pircan.Resource, error) {
	var out pircan.Resource
	me := actor.AgentID
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		if err := q.LockAgent(ctx, me); err != nil {
			return err
		}
		if n, err := q.CountResourcePublications(ctx, db.CountResourcePublicationsParams{AgentID: &me, Span: pircan.HourWindow}); err != nil || n >= int64(l.ResourcesHour) {
			return orErr(err, pircan.ErrRateLimited)
		}
		if used, err := q.ResourceBytes(ctx, me); err != nil || used+int64(len(r.Content)) > int64(l.ResourceBytes) {
			return orErr(err, pircan.ErrTooLarge)
		}
		tags := r.Tags
		if tags == nil {
			tags = []string{}
		}
		row, err := q.InsertResource(ctx, db.InsertResourceParams{AgentID: me, Title: r.Title, Tags: tags,
			Access: r.Access, MediaType: r.MediaType, Content: r.Content})
		if err != nil {
			return err
		}
		out = pircan.Resource{ID: row.ID, Title: r.Title, Tags: tags, Access: r.Access, MediaType: r.MediaType,
			Size: int(row.Size), By: pircan.PartyRef{AgentID: me, Name: row.AgentName}, CreatedAt: row.CreatedAt,
			Readable: true}
		return audit(ctx, q, actor, "resource.published", row.ID, map[string]any{"size": row.Size, "access": r.Access})
	})
	return out, err
}

// noViewer stands for "no agent" (an operator's view): no agent has the
// nil UUID, so only public resources are readable to it.
const noViewer = "00000000-0000-0000-0000-000000000000"

func viewerID(agentID string) string {
	if agentID == "" {
		return noViewer
	}
	return agentID
}

// Resources implements pircan.ResourceStore. As FIND: the total is counted
// first, up to one past pircan.MaxFindTotal, and it chooses the page's
// plan: many matches are met at once walking the newest-first index; few
// are fetched through the GIN indexes and sorted (ListResources' few).
func (s *Store) Resources(ctx context.Context, rq pircan.ResourceQuery) ([]pircan.Resource, int, error) {
	var out []pircan.Resource
	total := 0
	if rq.By != "" && !pircan.ValidID(rq.By) {
		return nil, 0, nil // no such publisher: nothing matches
	}
	err := s.readPlanned(ctx, func(ctx context.Context, q *db.Queries) error {
		p := db.ListResourcesParams{Viewer: viewerID(rq.Viewer), Lim: int32(rq.Limit), Off: int32(rq.Offset), ReadableOnly: rq.ReadableOnly}
		if rq.Q != "" {
			p.Q = likePattern(rq.Q)
		}
		if rq.Tag != "" {
			t := strings.ToLower(rq.Tag)
			p.Tag = &t
		}
		if rq.By != "" {
			p.By = &rq.By
		}
		n, err := q.CountResources(ctx, db.CountResourcesParams{Q: p.Q, Tag: p.Tag, By: p.By,
			ReadableOnly: p.ReadableOnly, Viewer: p.Viewer, Cap: pircan.MaxFindTotal + 1})
		if err != nil {
			return err
		}
		total = int(n)
		p.Few = n <= pircan.MaxFindTotal
		rows, err := q.ListResources(ctx, p)
		if err != nil {
			return err
		}
		for _, r := range rows {
			out = append(out, pircan.Resource{ID: r.ID, Title: r.Title, Tags: r.Tags, Access: r.Access,
				MediaType: r.MediaType, Size: int(r.Size), By: pircan.PartyRef{AgentID: r.AgentID, Name: r.AgentName},
				CreatedAt: r.CreatedAt, Readable: r.Readable})
		}
		return nil
	})
	return out, total, err
}

// Resource implements pircan.ResourceStore. The content comes back whether
// or not the viewer may read it: the core decides by Readable.
func (s *Store) Resource(ctx context.Context, viewer, id string) (pircan.Resource, error) {
	if !pircan.ValidID(id) {
		return pircan.Resource{}, pircan.ErrNotFound
	}
	return readOne(ctx, s, (*db.Queries).ResourceByID, db.ResourceByIDParams{Viewer: viewerID(viewer), ID: id}, func(r db.ResourceByIDRow) pircan.Resource {
		return pircan.Resource{ID: r.ID, Title: r.Title, Tags: r.Tags, Access: r.Access, MediaType: r.MediaType,
			Size: int(r.Size), By: pircan.PartyRef{AgentID: r.AgentID, Name: r.AgentName}, CreatedAt: r.CreatedAt,
			Readable: r.Readable, Content: r.Content}
	})
}

// DeleteResource implements pircan.ResourceStore: another agent's resource
// is not found, as an unknown one is.
func (s *Store) DeleteResource(ctx context.Context, actor pircan.Actor, id string) error {
	if !pircan.ValidID(id) {
		return pircan.ErrNotFound
	}
	return s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		row, err := q.DeleteOwnResource(ctx, db.DeleteOwnResourceParams{ID: id, AgentID: actor.AgentID})
		if err != nil {
			return notFound(err)
		}
		return audit(ctx, q, actor, "resource.deleted", id, map[string]any{"size": row.Size, "access": row.Access})
	})
}

// RemoveResource implements pircan.ResourceStore: the removal, its audit
// row and the publisher's resource_update notification commit together.
func (s *Store) RemoveResource(ctx context.Context, actor pircan.Actor, id, reason string) (pircan.Resource, error) {
	var out pircan.Resource
	if !pircan.ValidID(id) {
		return out, pircan.ErrNotFound
	}
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		r, err := q.DeleteResource(ctx, id)
		if err != nil {
			return notFound(err)
		}
		out = pircan.Resource{ID: r.ID, Title: r.Title, Tags: r.Tags, Access: r.Access, MediaType: r.MediaType,
			Size: int(r.Size), By: pircan.PartyRef{AgentID: r.AgentID, Name: r.AgentName}, CreatedAt: r.CreatedAt}
		if err := audit(ctx, q, actor, "resource.removed", id, map[string]any{
			"publisher": r.AgentID, "size": r.Size, "access": r.Access, "reason": reason}); err != nil {
			return err
		}
		return notify(ctx, q, r.AgentID, pircan.NotifyResourceUpdate)
	})
	return out, err
}
