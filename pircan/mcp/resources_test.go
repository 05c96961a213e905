package mcp_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/mcp"
)

// The resource library over MCP (DESIGN.md "Resources"): its four tools
// and MCP's own resources API. The Fake tests run over fakeLibrary; the
// RealStore one needs store/resources.go (until it lands the store's
// placeholders answer "not implemented yet" and it fails with
// internal_error).

func publish(t *testing.T, cs *sdk.ClientSession, args map[string]any) mcp.Published {
	t.Helper()
	res := call(t, cs, "publish_resource", args)
	var p mcp.Published
	ok(t, res, &p)
	conforms(t, cs, "publish_resource", res)
	return p
}

func readTool(t *testing.T, cs *sdk.ClientSession, id string) *sdk.CallToolResult {
	t.Helper()
	return call(t, cs, "read_resource", map[string]any{"resource_id": id})
}

func listTool(t *testing.T, cs *sdk.ClientSession, args map[string]any) mcp.List[mcp.ResourceItem] {
	t.Helper()
	res := call(t, cs, "list_resources", args)
	var page mcp.List[mcp.ResourceItem]
	ok(t, res, &page)
	conforms(t, cs, "list_resources", res)
	if strings.Contains(text(t, res), `"content"`) {
		t.Fatalf("list_resources carries content: %s", text(t, res))
	}
	return page
}

// readable is list_resources' readable flag of each id, by id.
func readableFlags(page mcp.List[mcp.ResourceItem]) map[string]bool {
	out := map[string]bool{}
	for _, it := range page.Items {
		out[it.ResourceID] = it.Readable
	}
	return out
}

// rpcRefusal is the JSON-RPC error of a refused resources request, with
// its Refusal data.
func rpcRefusal(t *testing.T, err error, code int64, refusal pircan.Code) mcp.Refusal {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v (%T), want a JSON-RPC error %d", err, err, code)
	}
	var r mcp.Refusal
	if err := json.Unmarshal(we.Data, &r); err != nil {
		t.Fatalf("error data %s: %v", we.Data, err)
	}
	if we.Code != code || r.Code != refusal || r.Message == "" || we.Message != r.Message {
		t.Fatalf("error %d %q data %s, want %d with code %s", we.Code, we.Message, we.Data, code, refusal)
	}
	return r
}

func listURIs(t *testing.T, cs *sdk.ClientSession, cursor string) (*sdk.ListResourcesResult, []string) {
	t.Helper()
	res, err := cs.ListResources(t.Context(), &sdk.ListResourcesParams{Cursor: cursor})
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	return res, uris
}

func TestResourceToolsFake(t *testing.T) {
	lib := newFakeLibrary()
	e := newEnvOver(t, lib, limits(), mcp.Config{})
	pub, pubID := e.agent(t)
	reader, readerID := e.agent(t)

	content := "Gloves, goggles, absorbent pads.\n\tNeutraliser: é"
	p := publish(t, pub, map[string]any{"title": "Spill kit checklist", "tags": []string{"safety"}, "content": content})
	if p.Access != pircan.AccessPublic || p.MediaType != pircan.DefaultMediaType || p.Size != len(content) ||
		p.By.AgentID != pubID || p.Title != "Spill kit checklist" || !slices.Equal(p.Tags, []string{"safety"}) || !pircan.ValidID(p.ResourceID) {
		t.Fatalf("publish_resource: %+v", p)
	}
	if _, err := time.Parse(time.RFC3339, p.CreatedAt); err != nil {
		t.Fatalf("created_at %q: %v", p.CreatedAt, err)
	}
	secret := strings.Repeat("é", pircan.MaxResourceBytes/2) // 60,000 bytes: the most
	a := publish(t, pub, map[string]any{"title": "Exposure limits", "access": "agreement", "media_type": "text/markdown", "content": secret})
	if a.Access != pircan.AccessAgreement || a.MediaType != "text/markdown" || a.Size != pircan.MaxResourceBytes || len(a.Tags) != 0 {
		t.Fatalf("publish_resource (agreement): %+v", a)
	}
	if !strings.Contains(text(t, call(t, pub, "list_resources", nil)), `"tags":[]`) {
		t.Fatal("list_resources: tags not a list")
	}
	for _, c := range []struct {
		args  map[string]any
		code  pircan.Code
		field string
	}{
		{map[string]any{"title": "t", "content": secret + "x"}, pircan.CodeTooLong, "content"},
		{map[string]any{"title": "t", "content": " \n"}, pircan.CodeEmpty, "content"},
		{map[string]any{"title": "t", "content": "x", "access": "secret"}, pircan.CodeInvalidArgument, "access"},
		{map[string]any{"title": "t", "content": "x", "media_type": "markdown"}, pircan.CodeInvalidArgument, "media_type"},
		{map[string]any{"title": "t", "content": "x", "tags": []string{"two words"}}, pircan.CodeInvalidArgument, "tags"},
		{map[string]any{"content": "x"}, pircan.CodeInvalidArgument, "title"},
		{map[string]any{"title": "t", "content": "x", "id": "r1"}, pircan.CodeInvalidArgument, "id"},
	} {
		refused(t, call(t, pub, "publish_resource", c.args), c.code, c.field)
	}

	// The reader sees both, newest first, and may read only the public one.
	page := listTool(t, reader, map[string]any{"by": pubID})
	if page.Returned != 2 || page.Total != 2 || page.Offset != 0 || page.Items[0].ResourceID != a.ResourceID ||
		page.Items[1].ResourceID != p.ResourceID || page.Items[0].Readable || !page.Items[1].Readable ||
		page.Items[0].Size != pircan.MaxResourceBytes || page.Items[0].By != (mcp.Party{AgentID: pubID, Name: p.By.Name}) {
		t.Fatalf("list_resources: %+v", page)
	}
	if got := listTool(t, reader, map[string]any{"q": "SPILL"}); got.Total != 1 || got.Items[0].ResourceID != p.ResourceID {
		t.Fatalf("list_resources q: %+v", got)
	}
	if got := listTool(t, reader, map[string]any{"tag": "safety"}); got.Total != 1 || got.Items[0].ResourceID != p.ResourceID {
		t.Fatalf("list_resources tag: %+v", got)
	}
	if got := readableFlags(listTool(t, pub, nil)); !got[a.ResourceID] || !got[p.ResourceID] {
		t.Fatalf("the publisher reads its own: %v", got)
	}
	res := readTool(t, reader, p.ResourceID)
	conforms(t, reader, "read_resource", res)
	var r mcp.ResourceRead
	ok(t, res, &r)
	if r.Content != content || r.ResourceID != p.ResourceID || r.MediaType != pircan.DefaultMediaType || r.Size != len(content) ||
		r.Access != pircan.AccessPublic || r.By.AgentID != pubID || r.Title != p.Title {
		t.Fatalf("read_resource: %+v", r)
	}
	refused(t, readTool(t, reader, a.ResourceID), pircan.CodeNotAuthorized, "")
	refused(t, readTool(t, reader, uuid()), pircan.CodeNotFound, "resource_id")
	refused(t, readTool(t, reader, "nope"), pircan.CodeInvalidArgument, "resource_id")

	// MCP's resources API, for the same caller under the same rules.
	caps := reader.InitializeResult().Capabilities
	if caps.Resources == nil || caps.Resources.Subscribe || caps.Resources.ListChanged {
		t.Fatalf("capabilities %+v: want resources, without subscribe or listChanged", caps.Resources)
	}
	tpls, err := reader.ListResourceTemplates(t.Context(), nil)
	if err != nil || len(tpls.ResourceTemplates) != 1 || tpls.ResourceTemplates[0].URITemplate != "pircan://resources/{resource_id}" {
		t.Fatalf("resources/templates/list: %v %+v", err, tpls)
	}
	list, uris := listURIs(t, reader, "")
	if !slices.Equal(uris, []string{mcp.ResourceURI(p.ResourceID)}) || list.NextCursor != "" || list.CacheScope != "private" {
		t.Fatalf("resources/list before the grant: %v (cursor %q, scope %q), want the public one only", uris, list.NextCursor, list.CacheScope)
	}
	if got := list.Resources[0]; got.Name != p.Title || got.Title != p.Title || got.MIMEType != pircan.DefaultMediaType || got.Size != int64(len(content)) {
		t.Fatalf("resources/list item %+v", got)
	}
	_, err = reader.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: mcp.ResourceURI(a.ResourceID)})
	rpcRefusal(t, err, mcp.CodeRefused, pircan.CodeNotAuthorized)
	_, err = reader.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: mcp.ResourceURI(uuid())})
	rpcRefusal(t, err, jsonrpc.CodeInvalidParams, pircan.CodeNotFound)
	_, err = reader.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: mcp.ResourceURI("nope")})
	rpcRefusal(t, err, jsonrpc.CodeInvalidParams, pircan.CodeInvalidArgument)
	if _, err := reader.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "https://example.org/x"}); err == nil {
		t.Fatal("resources/read of a URI not PIRCAN's: no error")
	}

	lib.grant(readerID, pubID)
	if got := readableFlags(listTool(t, reader, nil)); !got[a.ResourceID] || !got[p.ResourceID] {
		t.Fatalf("list_resources after the grant: %v", got)
	}
	ok(t, readTool(t, reader, a.ResourceID), &r)
	if r.Content != secret || r.MediaType != "text/markdown" {
		t.Fatalf("read_resource after the grant: %d bytes of %s", len(r.Content), r.MediaType)
	}
	if _, uris := listURIs(t, reader, ""); !slices.Equal(uris, []string{mcp.ResourceURI(a.ResourceID), mcp.ResourceURI(p.ResourceID)}) {
		t.Fatalf("resources/list after the grant: %v", uris)
	}
	rr, err := reader.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: mcp.ResourceURI(a.ResourceID)})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != secret || rr.Contents[0].MIMEType != "text/markdown" ||
		rr.Contents[0].URI != mcp.ResourceURI(a.ResourceID) || rr.CacheScope != "private" {
		t.Fatalf("resources/read after the grant: %v", err)
	}

	// Only the publisher deletes, once.
	refused(t, call(t, reader, "delete_resource", map[string]any{"resource_id": p.ResourceID}), pircan.CodeNotFound, "resource_id")
	res = call(t, pub, "delete_resource", map[string]any{"resource_id": p.ResourceID})
	conforms(t, pub, "delete_resource", res)
	var d mcp.ResourceDeleted
	ok(t, res, &d)
	if d != (mcp.ResourceDeleted{ResourceID: p.ResourceID, Status: "deleted"}) {
		t.Fatalf("delete_resource: %+v", d)
	}
	refused(t, call(t, pub, "delete_resource", map[string]any{"resource_id": p.ResourceID}), pircan.CodeNotFound, "resource_id")
	refused(t, readTool(t, reader, p.ResourceID), pircan.CodeNotFound, "resource_id")

	if n := counter(t, e, "resources/read", "not_authorized"); n != 1 {
		t.Fatalf("pircan_mcp_calls_total{tool=resources/read,code=not_authorized} = %v, want 1", n)
	}
	if n := counter(t, e, "resources/read", "ok"); n != 1 {
		t.Fatalf("pircan_mcp_calls_total{tool=resources/read,code=ok} = %v, want 1", n)
	}
}

// resources/list pages through the resources the caller may read (the
// core keeps them): a page is list_resources' largest, and its cursor is
// the next page's offset in that list.
func TestResourcesListPagesFake(t *testing.T) {
	lib := newFakeLibrary()
	e := newEnvOver(t, lib, limits(), mcp.Config{})
	pub, _ := e.agent(t)
	reader, _ := e.agent(t)
	var want []string   // newest first, readable by reader
	for i := range 16 { // 12 public, 4 for agreements
		access := pircan.AccessPublic
		if i%4 == 0 {
			access = pircan.AccessAgreement
		}
		p := publish(t, pub, map[string]any{"title": "Doc " + strconv.Itoa(i), "access": access, "content": "x"})
		if access == pircan.AccessPublic {
			want = append([]string{mcp.ResourceURI(p.ResourceID)}, want...)
		}
	}
	first, got := listURIs(t, reader, "")
	if first.NextCursor != "10" {
		t.Fatalf("first page: cursor %q, want 10", first.NextCursor)
	}
	last, more := listURIs(t, reader, first.NextCursor)
	if last.NextCursor != "" {
		t.Fatalf("last page: cursor %q", last.NextCursor)
	}
	if got = append(got, more...); !slices.Equal(got, want) {
		t.Fatalf("resources/list:\n got %v\nwant %v", got, want)
	}
	// The SDK's iterator follows the cursors.
	var all []string
	for r, err := range reader.Resources(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, r.URI)
	}
	if !slices.Equal(all, want) {
		t.Fatalf("Resources iterator: %v", all)
	}
	for _, bad := range []string{"x", "-1", "10001"} {
		_, err := reader.ListResources(t.Context(), &sdk.ListResourcesParams{Cursor: bad})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("cursor %q: %v, want invalid params", bad, err)
		}
	}
	// Not registered: refused like a tool call.
	_, tok := e.token(t)
	_, err := e.session(t, tok).ListResources(t.Context(), nil)
	rpcRefusal(t, err, mcp.CodeRefused, pircan.CodeNotRegistered)
}

// The resources API counts against the per-minute limit like tool calls.
func TestResourcesRateLimitedFake(t *testing.T) {
	l := limits()
	l.HTTPPerMinute = 3
	e := newEnvOver(t, newFakeLibrary(), l, mcp.Config{})
	cs, _ := e.agent(t) // initialize and register: the first two requests
	if _, err := cs.ListResources(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	_, err := cs.ListResources(t.Context(), nil)
	if r := rpcRefusal(t, err, mcp.CodeRefused, pircan.CodeRateLimited); r.RetryAfter < 1 {
		t.Fatalf("retry_after %d", r.RetryAfter)
	}
	_, err = cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: mcp.ResourceURI(uuid())})
	rpcRefusal(t, err, mcp.CodeRefused, pircan.CodeRateLimited)
}

// contactFor has from ask to for scopes, and to accept; the agreement's id.
func contactFor(t *testing.T, from, to *sdk.ClientSession, toID string, scopes ...string) string {
	t.Helper()
	var c mcp.Contact
	ok(t, call(t, from, "contact", map[string]any{"to": toID, "purpose": "Library access", "scopes": scopes}), &c)
	var d mcp.Decision
	ok(t, call(t, to, "accept_contact", map[string]any{"request_id": c.RequestID}), &d)
	if d.Status != "accepted" || d.AgreementID == "" {
		t.Fatalf("accept_contact: %+v", d)
	}
	return d.AgreementID
}

// TestResourcesRealStore: the agreement rule itself, over the real store.
// NEEDS store/resources.go (branch resources): until it is merged the
// store's placeholders refuse every publication (internal_error).
func TestResourcesRealStore(t *testing.T) {
	e := newEnv(t, limits())
	pub, pubID := e.agent(t)
	reader, readerID := e.agent(t)
	p := publish(t, pub, map[string]any{"title": "Spill kit checklist", "content": "Gloves, goggles."})
	a := publish(t, pub, map[string]any{"title": "Exposure limits", "access": "agreement", "tags": []string{"chlorine"}, "content": "3 ppm"})
	if p.By.AgentID != pubID || a.Access != pircan.AccessAgreement || a.Size != 5 {
		t.Fatalf("published %+v, %+v", p, a)
	}
	canRead := func(what string, want bool) {
		t.Helper()
		flags := readableFlags(listTool(t, reader, map[string]any{"by": pubID}))
		if !flags[p.ResourceID] || flags[a.ResourceID] != want {
			t.Fatalf("%s: list_resources readable %v, want the agreement one %v", what, flags, want)
		}
		_, uris := listURIs(t, reader, "")
		if slices.Contains(uris, mcp.ResourceURI(a.ResourceID)) != want || !slices.Contains(uris, mcp.ResourceURI(p.ResourceID)) {
			t.Fatalf("%s: resources/list %v", what, uris)
		}
		res := readTool(t, reader, a.ResourceID)
		_, err := reader.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: mcp.ResourceURI(a.ResourceID)})
		if !want {
			refused(t, res, pircan.CodeNotAuthorized, "")
			rpcRefusal(t, err, mcp.CodeRefused, pircan.CodeNotAuthorized)
			return
		}
		var r mcp.ResourceRead
		ok(t, res, &r)
		if r.Content != "3 ppm" || err != nil {
			t.Fatalf("%s: read_resource %+v, resources/read %v", what, r, err)
		}
	}
	var r mcp.ResourceRead
	ok(t, readTool(t, reader, p.ResourceID), &r)
	if r.Content != "Gloves, goggles." {
		t.Fatalf("read_resource: %+v", r)
	}
	canRead("no agreement", false)
	contactFor(t, reader, pub, pubID) // message only
	canRead("a message agreement", false)
	contactFor(t, pub, reader, readerID, pircan.ScopeResourceRead) // the publisher holds resource:read from the reader
	canRead("the reverse direction", false)
	agreementID := contactFor(t, reader, pub, pubID, pircan.ScopeResourceRead)
	canRead("resource:read granted by the publisher", true)
	if got := readableFlags(listTool(t, pub, nil)); !got[a.ResourceID] {
		t.Fatalf("the publisher reads its own: %v", got)
	}
	ok(t, call(t, pub, "revoke_agreement", map[string]any{"agreement_id": agreementID}), &mcp.Revoked{})
	canRead("after the publisher's revoke", false)

	refused(t, call(t, reader, "delete_resource", map[string]any{"resource_id": p.ResourceID}), pircan.CodeNotFound, "resource_id")
	var d mcp.ResourceDeleted
	ok(t, call(t, pub, "delete_resource", map[string]any{"resource_id": p.ResourceID}), &d)
	refused(t, readTool(t, reader, p.ResourceID), pircan.CodeNotFound, "resource_id")
}
