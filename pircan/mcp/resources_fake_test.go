package mcp_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// fakeLibrary is the real store with an in-memory resource library in
// place of store/resources.go: the face's tests of the library's tools and
// resources API run over it, whatever the store's state. Readable follows
// DESIGN.md's rule with the agreement part stood in by grant (the real
// rule, from agreements, is the store's and is tested over the real store
// in resources_test.go).
type fakeLibrary struct {
	*store.Store
	mu     sync.Mutex
	list   []pircan.Resource  // oldest first, with content
	grants map[[2]string]bool // {reader, publisher}: the reader holds resource:read
}

func newFakeLibrary() *fakeLibrary {
	return &fakeLibrary{Store: shared, grants: map[[2]string]bool{}}
}

// grant lets reader read publisher's agreement resources.
func (l *fakeLibrary) grant(reader, publisher string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.grants[[2]string{reader, publisher}] = true
}

func (l *fakeLibrary) readable(viewer string, r pircan.Resource) bool {
	return r.Access == pircan.AccessPublic || r.By.AgentID == viewer || l.grants[[2]string{viewer, r.By.AgentID}]
}

func (l *fakeLibrary) AddResource(ctx context.Context, actor pircan.Actor, n pircan.NewResource, _ pircan.Limits) (pircan.Resource, error) {
	a, err := l.AgentByAccount(ctx, actor.Account)
	if err != nil {
		return pircan.Resource{}, err
	}
	r := pircan.Resource{ID: uuid(), Title: n.Title, Tags: slices.Clone(n.Tags), Access: n.Access, MediaType: n.MediaType,
		Size: len(n.Content), By: pircan.PartyRef{AgentID: a.ID, Name: a.Name}, CreatedAt: time.Now().UTC().Truncate(time.Second),
		Readable: true, Content: n.Content}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, r)
	return r, nil
}

func (l *fakeLibrary) Resources(_ context.Context, q pircan.ResourceQuery) ([]pircan.Resource, int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var match []pircan.Resource
	for _, r := range slices.Backward(l.list) { // newest first
		if (q.Q != "" && !strings.Contains(strings.ToLower(r.Title), strings.ToLower(q.Q))) ||
			(q.Tag != "" && !slices.ContainsFunc(r.Tags, func(t string) bool { return strings.EqualFold(t, q.Tag) })) ||
			(q.By != "" && r.By.AgentID != q.By) {
			continue
		}
		r.Readable, r.Content = l.readable(q.Viewer, r), ""
		if q.ReadableOnly && !r.Readable {
			continue
		}
		match = append(match, r)
	}
	page := match[min(q.Offset, len(match)):]
	return page[:min(q.Limit, len(page))], len(match), nil
}

func (l *fakeLibrary) Resource(_ context.Context, viewer, id string) (pircan.Resource, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.list {
		if r.ID == id {
			r.Readable = l.readable(viewer, r)
			return r, nil
		}
	}
	return pircan.Resource{}, pircan.ErrNotFound
}

func (l *fakeLibrary) DeleteResource(_ context.Context, actor pircan.Actor, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.IndexFunc(l.list, func(r pircan.Resource) bool { return r.ID == id && r.By.AgentID == actor.AgentID })
	if i < 0 {
		return pircan.ErrNotFound
	}
	l.list = slices.Delete(l.list, i, i+1)
	return nil
}
