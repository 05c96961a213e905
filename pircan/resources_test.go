package pircan_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// The resource library through the core, over the real store.

// publish publishes a resource of c with the given title and access.
func publish(t *testing.T, svc *pircan.Service, c pircan.Caller, title, access string) pircan.Resource {
	t.Helper()
	r, err := svc.PublishResource(t.Context(), c, pircan.PublishResourceArgs{Title: &title, Access: &access,
		Tags: lp("hazmat", "Chem"), Content: sp("Spill response notes for " + title)})
	if err != nil {
		t.Fatalf("publish %q: %v", title, err)
	}
	return r
}

// agreeScopes makes an active agreement: from asked, to accepted.
func agreeScopes(t *testing.T, svc *pircan.Service, from, to pircan.Caller, scopes ...string) string {
	t.Helper()
	toID := to.Agent.ID
	r, err := svc.Contact(t.Context(), from, pircan.ContactArgs{To: &toID, Purpose: sp("share documents"), Scopes: &scopes, TTLDays: ip(30)})
	if err != nil {
		t.Fatalf("CONTACT: %v", err)
	}
	d, err := svc.Accept(t.Context(), to, pircan.DecideArgs{RequestID: &r.RequestID})
	if err != nil || d.AgreementID == "" {
		t.Fatalf("ACCEPT: %+v %v", d, err)
	}
	return d.AgreementID
}

// readable is what viewer's list says of r (by its publisher), and whether
// read_resource agrees.
func readable(t *testing.T, svc *pircan.Service, viewer pircan.Caller, r pircan.Resource) bool {
	t.Helper()
	by := r.By.AgentID
	page, err := svc.Resources(t.Context(), viewer, pircan.ListResourcesArgs{By: &by, PageArgs: pircan.PageArgs{Limit: ip(10)}})
	must(t, err)
	i := slices.IndexFunc(page.Items, func(x pircan.Resource) bool { return x.ID == r.ID })
	if i < 0 {
		t.Fatalf("resource %s not listed for its publisher: %+v", r.ID, page)
	}
	listed := page.Items[i].Readable
	got, err := svc.ReadResource(t.Context(), viewer, pircan.ResourceArgs{ResourceID: &r.ID})
	if listed {
		if err != nil || got.Content == "" {
			t.Fatalf("listed readable, but read_resource: %v", err)
		}
	} else {
		wantErr(t, "read_resource of an unreadable resource", err, pircan.CodeNotAuthorized, "")
	}
	return listed
}

func resourceCount(t *testing.T, agentID string) int {
	t.Helper()
	var n int
	must(t, shared.Pool().QueryRow(t.Context(), "SELECT count(*) FROM resources WHERE agent_id = $1", agentID).Scan(&n))
	return n
}

func TestPublishResourceArguments(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	c := agent(t, svc, pircan.FaceMCP)
	many := make([]string, pircan.MaxCapabilities+1)
	for i := range many {
		many[i] = unique("t")
	}
	ok := pircan.PublishResourceArgs{Title: sp("Notes"), Content: sp("text")}
	with := func(f func(a *pircan.PublishResourceArgs)) pircan.PublishResourceArgs { a := ok; f(&a); return a }
	before := auditCount(t, c.Account)
	for _, tc := range []struct {
		name  string
		args  pircan.PublishResourceArgs
		code  pircan.Code
		field string
	}{
		{"no title", with(func(a *pircan.PublishResourceArgs) { a.Title = nil }), pircan.CodeInvalidArgument, "title"},
		{"title too long", with(func(a *pircan.PublishResourceArgs) { a.Title = sp(strings.Repeat("t", 301)) }), pircan.CodeTooLong, "title"},
		{"title bidi", with(func(a *pircan.PublishResourceArgs) { a.Title = sp("abc\u202edef") }), pircan.CodeInvalidArgument, "title"},
		{"21 tags", with(func(a *pircan.PublishResourceArgs) { a.Tags = &many }), pircan.CodeInvalidArgument, "tags"},
		{"tag with a space", with(func(a *pircan.PublishResourceArgs) { a.Tags = lp("two words") }), pircan.CodeInvalidArgument, "tags"},
		{"repeated tag", with(func(a *pircan.PublishResourceArgs) { a.Tags = lp("chem", "CHEM") }), pircan.CodeInvalidArgument, "tags"},
		{"bad access", with(func(a *pircan.PublishResourceArgs) { a.Access = sp("private") }), pircan.CodeInvalidArgument, "access"},
		{"no content", with(func(a *pircan.PublishResourceArgs) { a.Content = nil }), pircan.CodeInvalidArgument, "content"},
		{"blank content", with(func(a *pircan.PublishResourceArgs) { a.Content = sp(" \n\t") }), pircan.CodeEmpty, "content"},
		{"61,000 bytes", with(func(a *pircan.PublishResourceArgs) { a.Content = sp(strings.Repeat("x", 61_000)) }), pircan.CodeTooLong, "content"},
		{"control char", with(func(a *pircan.PublishResourceArgs) { a.Content = sp("bell\x07") }), pircan.CodeInvalidArgument, "content"},
		{"invalid UTF-8", with(func(a *pircan.PublishResourceArgs) { a.Content = sp("bad \xff byte") }), pircan.CodeInvalidArgument, "content"},
		{"bad media type", with(func(a *pircan.PublishResourceArgs) { a.MediaType = sp("markdown") }), pircan.CodeInvalidArgument, "media_type"},
	} {
		_, err := svc.PublishResource(t.Context(), c, tc.args)
		wantErr(t, tc.name, err, tc.code, tc.field)
	}
	if n := resourceCount(t, c.Agent.ID); n != 0 || auditCount(t, c.Account) != before {
		t.Fatalf("refused publications stored something: %d resources", n)
	}

	// Tabs and line breaks are text; the defaults are public, text/plain.
	r, err := svc.PublishResource(t.Context(), c, with(func(a *pircan.PublishResourceArgs) {
		a.Content = sp("a\tb\r\nc\n")
		a.Tags = lp("Hazmat")
	}))
	if err != nil || r.Access != pircan.AccessPublic || r.MediaType != pircan.DefaultMediaType || r.Size != 7 ||
		!slices.Equal(r.Tags, []string{"Hazmat"}) || r.By.AgentID != c.Agent.ID || !r.Readable {
		t.Fatalf("publish: %+v %v", r, err)
	}
}

func TestResourceReadable(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	pub, reader, msgOnly, other := agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceIRC)
	open := publish(t, svc, pub, "Open notes", pircan.AccessPublic)
	closed := publish(t, svc, pub, "Closed notes", pircan.AccessAgreement)

	for _, c := range []pircan.Caller{pub, reader, msgOnly, other} {
		if !readable(t, svc, c, open) {
			t.Errorf("a public resource is not readable by %s", c.Account)
		}
	}
	if !readable(t, svc, pub, closed) {
		t.Errorf("the publisher cannot read its own")
	}
	if readable(t, svc, other, closed) {
		t.Errorf("readable without an agreement")
	}
	// ReadableOnly (MCP's resources/list) keeps, and counts, only those.
	by := pub.Agent.ID
	for _, c := range []struct {
		who  pircan.Caller
		want []string
	}{{other, []string{open.ID}}, {pub, []string{closed.ID, open.ID}}} {
		page, err := svc.Resources(ctx, c.who, pircan.ListResourcesArgs{By: &by, ReadableOnly: true})
		must(t, err)
		var ids []string
		for _, r := range page.Items {
			ids = append(ids, r.ID)
		}
		if !slices.Equal(ids, c.want) || page.Total != len(c.want) {
			t.Errorf("readable only, for %s: %v of %d, want %v", c.who.Account, ids, page.Total, c.want)
		}
	}

	g := agreeScopes(t, svc, reader, pub, "message", "resource:read")
	agreeScopes(t, svc, msgOnly, pub, "message")
	if !readable(t, svc, reader, closed) {
		t.Errorf("not readable with resource:read, the reader the requester")
	}
	if readable(t, svc, msgOnly, closed) {
		t.Errorf("readable with a message-only agreement")
	}

	// The other direction: the publisher asked, so it is the publisher who
	// may read the other's resources, not the other way round.
	rev := agent(t, svc, pircan.FaceMCP)
	agreeScopes(t, svc, pub, rev, "resource:read")
	if readable(t, svc, rev, closed) {
		t.Errorf("readable by the target of the publisher's own agreement")
	}

	// Whole content comes back.
	big := strings.Repeat("é", 30_000) // 60,000 bytes
	bigRes, err := svc.PublishResource(ctx, pub, pircan.PublishResourceArgs{Title: sp("Big"), Access: sp("agreement"), Content: &big, MediaType: sp("text/markdown")})
	if err != nil || bigRes.Size != 60_000 {
		t.Fatalf("publish 60,000 bytes: %+v %v", bigRes, err)
	}
	got, err := svc.ReadResource(ctx, reader, pircan.ResourceArgs{ResourceID: &bigRes.ID})
	if err != nil || got.Content != big || got.Size != 60_000 || got.MediaType != "text/markdown" || got.By.AgentID != pub.Agent.ID || got.Title != "Big" {
		t.Fatalf("read_resource: size %d, %d bytes back, %v", got.Size, len(got.Content), err)
	}
	_, err = svc.ReadResource(ctx, reader, pircan.ResourceArgs{ResourceID: sp(noID)})
	wantErr(t, "read unknown", err, pircan.CodeNotFound, "resource_id")

	// Revoking closes it at once.
	_, err = svc.Revoke(ctx, pub, pircan.RevokeArgs{AgreementID: &g})
	must(t, err)
	if readable(t, svc, reader, closed) {
		t.Errorf("readable after the agreement was revoked")
	}

	// An expired agreement grants nothing.
	late := agent(t, svc, pircan.FaceMCP)
	g2 := agreeScopes(t, svc, late, pub, "resource:read")
	if !readable(t, svc, late, closed) {
		t.Fatalf("not readable with a fresh agreement")
	}
	_, err = shared.Pool().Exec(ctx, "UPDATE agreements SET expires_at = now() - interval '1 second' WHERE id = $1", g2)
	must(t, err)
	if readable(t, svc, late, closed) {
		t.Errorf("readable with an expired agreement")
	}
}

func TestResourceList(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	pub, viewer := agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceMCP)
	tag := unique("Tag")
	word := unique("w")
	var ids []string
	for i, title := range []string{"First " + word, "Second " + strings.ToUpper(word), "Third other"} {
		r, err := svc.PublishResource(ctx, pub, pircan.PublishResourceArgs{Title: sp(title), Tags: lp(tag), Content: sp("c")})
		if err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		ids = append(ids, r.ID)
	}
	by := pub.Agent.ID
	list := func(a pircan.ListResourcesArgs) []string {
		t.Helper()
		a.By = &by
		p, err := svc.Resources(ctx, viewer, a)
		must(t, err)
		var out []string
		for _, r := range p.Items {
			if r.Size != 1 || r.By.Name == "" {
				t.Errorf("listed %+v", r)
			}
			out = append(out, r.ID)
		}
		if p.Total < len(out) {
			t.Errorf("total %d < %d listed", p.Total, len(out))
		}
		return out
	}
	newest := []string{ids[2], ids[1], ids[0]}
	if got := list(pircan.ListResourcesArgs{PageArgs: pircan.PageArgs{Limit: ip(10)}}); !slices.Equal(got, newest) {
		t.Errorf("by, newest first: %v, want %v", got, newest)
	}
	if got := list(pircan.ListResourcesArgs{Q: sp(strings.ToUpper(word))}); !slices.Equal(got, []string{ids[1], ids[0]}) {
		t.Errorf("q, case-insensitive: %v", got)
	}
	if got := list(pircan.ListResourcesArgs{Tag: sp(strings.ToLower(tag)), Q: sp("third")}); !slices.Equal(got, []string{ids[2]}) {
		t.Errorf("tag+q: %v", got)
	}
	if got := list(pircan.ListResourcesArgs{Tag: sp(tag[:len(tag)-1])}); len(got) != 0 {
		t.Errorf("tag matches exactly, not as a prefix: %v", got)
	}
	if got := list(pircan.ListResourcesArgs{Q: sp("%")}); len(got) != 0 {
		t.Errorf("q's %% is a character, not a wildcard: %v", got)
	}
	if got := list(pircan.ListResourcesArgs{PageArgs: pircan.PageArgs{Limit: ip(1), Offset: ip(1)}}); !slices.Equal(got, []string{ids[1]}) {
		t.Errorf("limit/offset: %v", got)
	}
}

func TestDeleteResource(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	pub, other := agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceMCP)
	r := publish(t, svc, pub, "Mine", pircan.AccessPublic)
	_, err := svc.DeleteResource(ctx, other, pircan.ResourceArgs{ResourceID: &r.ID})
	wantErr(t, "delete another's", err, pircan.CodeNotFound, "resource_id")
	_, err = svc.DeleteResource(ctx, pub, pircan.ResourceArgs{ResourceID: sp(noID)})
	wantErr(t, "delete unknown", err, pircan.CodeNotFound, "resource_id")
	if resourceCount(t, pub.Agent.ID) != 1 {
		t.Fatal("deleted by another")
	}
	id, err := svc.DeleteResource(ctx, pub, pircan.ResourceArgs{ResourceID: &r.ID})
	if err != nil || id != r.ID || resourceCount(t, pub.Agent.ID) != 0 {
		t.Fatalf("delete own: %q %v", id, err)
	}
	_, err = svc.ReadResource(ctx, pub, pircan.ResourceArgs{ResourceID: &r.ID})
	wantErr(t, "read deleted", err, pircan.CodeNotFound, "resource_id")
}

func TestResourceLimits(t *testing.T) {
	t.Parallel()
	l := sharedLimits()
	l.ResourcesHour, l.ResourceBytes = 3, 100
	svc := newServiceLimits(t, l)
	ctx := t.Context()
	c := agent(t, svc, pircan.FaceMCP)
	pub := func(content string) (pircan.Resource, error) {
		return svc.PublishResource(ctx, c, pircan.PublishResourceArgs{Title: sp("n"), Content: &content})
	}
	first, err := pub(strings.Repeat("a", 60))
	must(t, err)
	_, err = pub(strings.Repeat("b", 41))
	wantErr(t, "past the total bytes", err, pircan.CodeTooLong, "content")
	_, err = pub(strings.Repeat("b", 40)) // exactly 100 in all
	must(t, err)
	// A deleted resource frees its bytes but still counts this hour.
	_, err = svc.DeleteResource(ctx, c, pircan.ResourceArgs{ResourceID: &first.ID})
	must(t, err)
	_, err = pub(strings.Repeat("c", 60))
	must(t, err)
	_, err = pub("d")
	wantErr(t, "fourth publication in the hour", err, pircan.CodeRateLimited, "")
	if n := resourceCount(t, c.Agent.ID); n != 2 {
		t.Fatalf("%d resources, want 2", n)
	}
}

func TestRemoveResource(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	pub := agent(t, svc, pircan.FaceMCP)
	r := publish(t, svc, pub, "To remove", pircan.AccessAgreement)
	operator := unique("operator:")
	op := pircan.OperatorCaller(operator)
	_, err := svc.RemoveResource(ctx, pub, pircan.RemoveResourceArgs{ResourceID: &r.ID})
	wantErr(t, "an agent's removal", err, pircan.CodeNotAuthorized, "")
	got, err := svc.RemoveResource(ctx, op, pircan.RemoveResourceArgs{ResourceID: &r.ID, Reason: sp("malware links")})
	if err != nil || got.ID != r.ID || got.By.AgentID != pub.Agent.ID || got.Size != r.Size || got.Title != r.Title {
		t.Fatalf("remove: %+v %v", got, err)
	}
	if resourceCount(t, pub.Agent.ID) != 0 {
		t.Fatal("still there")
	}
	var subject, details string
	must(t, shared.Pool().QueryRow(ctx, "SELECT subject, details::text FROM audit_log WHERE actor_account = $1 AND action = 'resource.removed'",
		operator).Scan(&subject, &details))
	if subject != r.ID || !strings.Contains(details, "malware links") || strings.Contains(details, "To remove") {
		t.Errorf("audit: %s %s", subject, details)
	}
	var n int
	must(t, shared.Pool().QueryRow(ctx, "SELECT count(*) FROM notifications WHERE agent_id = $1 AND type = $2 AND delivered_at IS NULL",
		pub.Agent.ID, pircan.NotifyResourceUpdate).Scan(&n))
	if n != 1 {
		t.Errorf("%d resource_update notifications waiting, want 1", n)
	}
	_, err = svc.RemoveResource(ctx, op, pircan.RemoveResourceArgs{ResourceID: &r.ID, Reason: sp("again")})
	wantErr(t, "remove twice", err, pircan.CodeNotFound, "resource_id")
}

func TestReportResource(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	reporter, bad, other := agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceMCP)
	theirs, others := publish(t, svc, bad, "Bad", pircan.AccessPublic), publish(t, svc, other, "Fine", pircan.AccessPublic)
	args := func(res string) pircan.ReportArgs {
		return pircan.ReportArgs{AgentID: &bad.Agent.ID, Category: sp("malware"), Details: sp("links to malware"), ResourceID: &res}
	}
	_, err := svc.Report(ctx, reporter, args(others.ID))
	wantErr(t, "another agent's resource", err, pircan.CodeNotFound, "resource_id")
	_, err = svc.Report(ctx, reporter, args(noID))
	wantErr(t, "unknown resource", err, pircan.CodeNotFound, "resource_id")
	id, err := svc.Report(ctx, reporter, args(theirs.ID))
	must(t, err)
	var stored string
	must(t, shared.Pool().QueryRow(ctx, "SELECT resource_id::text FROM reports WHERE id = $1", id).Scan(&stored))
	if stored != theirs.ID {
		t.Errorf("reports.resource_id = %s, want %s", stored, theirs.ID)
	}
	info, err := shared.ReportByID(ctx, id)
	if err != nil || info.ResourceID != theirs.ID {
		t.Errorf("ReportByID: %+v %v", info, err)
	}
}
