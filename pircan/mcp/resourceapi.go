package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatimus/pircan/pircan"
)

// MCP's own resources API over the resource library: resources/list and
// resources/read of pircan://resources/<resource_id>, under the rules of
// list_resources and read_resource (the same core operations, for the
// token's caller).
//
// The go-sdk lists only resources added to the server, the same for every
// session; the library differs per caller and changes all the time. So a
// resource template (pircan://resources/{resource_id}) routes every read to
// one handler, and a receiving middleware answers resources/list itself,
// for the caller, before the SDK's own list (which would be empty).

const (
	resourceURIPrefix   = "pircan://resources/"
	resourceURITemplate = resourceURIPrefix + "{resource_id}"
	// CodeRefused is the JSON-RPC error code of a PIRCAN refusal in the
	// resources API (not_authorized, rate_limited, not_registered…); its
	// data is the Refusal object tools give as text. not_found is MCP's
	// own "resource not found", invalid params (-32602, SEP-2164; -32002
	// before), with the Refusal and the uri as its data. -32010 is in
	// JSON-RPC's implementation-defined range and unused by MCP.
	CodeRefused = -32010
)

// capabilities are the server's: resources without subscriptions or list
// notifications (stateless: no session to notify), and the go-sdk's
// defaults otherwise (logging; tools, added by the SDK).
var capabilities = &sdk.ServerCapabilities{Logging: &sdk.LoggingCapabilities{}, Resources: &sdk.ResourceCapabilities{}}

// ResourceURI is the resources API's URI of a resource.
func ResourceURI(id string) string { return resourceURIPrefix + id }

// private: a per-caller answer no intermediary or other user may cache.
var private = sdk.Cacheable{CacheScope: "private"}

func (f *Face) addResourceAPI() {
	f.server.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: resourceURITemplate, Name: "resource",
		Title:       "PIRCAN resource library",
		Description: "A published resource; resources/list lists those you may read (list_resources searches them all)."},
		f.readResource)
	f.server.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if lr, ok := req.(*sdk.ListResourcesRequest); ok && method == "resources/list" {
				return f.listResources(ctx, lr)
			}
			return next(ctx, method, req)
		}
	})
}

// listResources answers resources/list: one page of list_resources for
// the caller (newest first) of the resources it may read, which the core
// keeps. The cursor is the page's offset in that list.
func (f *Face) listResources(ctx context.Context, req *sdk.ListResourcesRequest) (*sdk.ListResourcesResult, error) {
	start := time.Now()
	offset := 0
	if req.Params != nil && req.Params.Cursor != "" {
		n, err := strconv.Atoi(req.Params.Cursor)
		if err != nil || n < 0 || n > maxListOffset {
			f.observe("resources/list", "invalid_cursor", start)
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor"}
		}
		offset = n
	}
	page, err := f.resourcePage(ctx, req.Extra, offset)
	if err != nil {
		return nil, f.rpcError("resources/list", start, err, "")
	}
	out := &sdk.ListResourcesResult{Resources: []*sdk.Resource{}, Cacheable: private}
	for _, r := range page.Items {
		out.Resources = append(out.Resources, &sdk.Resource{URI: ResourceURI(r.ID), Name: r.Title, Title: r.Title,
			MIMEType: r.MediaType, Size: int64(r.Size), Description: resourceDescription(r)})
	}
	next := page.Offset + len(page.Items)
	if more := next < page.Total || page.TotalCapped; more && len(page.Items) > 0 && next <= maxListOffset {
		out.NextCursor = strconv.Itoa(next)
	}
	f.observe("resources/list", "ok", start)
	return out, nil
}

// listPage and maxListOffset are list_resources' own limits (its check tags).
var (
	listPage      = pircan.ArgNamed(pircan.ListResourcesArgs{}, "limit").Max
	maxListOffset = pircan.ArgNamed(pircan.ListResourcesArgs{}, "offset").Max
)

func (f *Face) resourcePage(ctx context.Context, extra *sdk.RequestExtra, offset int) (pircan.Page[pircan.Resource], error) {
	c, err := f.caller(ctx, extra)
	if err != nil {
		return pircan.Page[pircan.Resource]{}, err
	}
	limit := listPage // the args are the operation's to fill in
	return f.core.Resources(ctx, c, pircan.ListResourcesArgs{PageArgs: pircan.PageArgs{Limit: &limit, Offset: &offset}, ReadableOnly: true})
}

func resourceDescription(r pircan.Resource) string {
	d := fmt.Sprintf("By %s (%s), %s", r.By.Name, r.By.AgentID, r.Access)
	if len(r.Tags) > 0 {
		d += "; tags: " + strings.Join(r.Tags, ", ")
	}
	return d + "."
}

// readResource answers resources/read: read_resource for the caller, the
// content as one text with the resource's media type.
func (f *Face) readResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	start := time.Now()
	uri := req.Params.URI
	id, _ := strings.CutPrefix(uri, resourceURIPrefix)
	c, err := f.caller(ctx, req.Extra)
	if err != nil {
		return nil, f.rpcError("resources/read", start, err, uri)
	}
	r, err := f.core.ReadResource(ctx, c, pircan.ResourceArgs{ResourceID: &id})
	if err != nil {
		return nil, f.rpcError("resources/read", start, err, uri)
	}
	f.observe("resources/read", "ok", start)
	return &sdk.ReadResourceResult{Cacheable: private,
		Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: r.MediaType, Text: r.Content}}}, nil
}

// rpcError is a refusal as a JSON-RPC error, counted like a refused tool
// call: data is the Refusal object (with the uri for not_found); a
// resource id that is no id names no resource, so it is not_found as well.
func (f *Face) rpcError(method string, start time.Time, err error, uri string) error {
	e := pircan.AsError(err)
	if e.Code == pircan.CodeInternalError {
		f.log.Error().Err(err).Str("ref", e.Ref).Str("method", method).Msg("mcp: resources request failed")
	}
	f.observe(method, string(e.Code), start)
	var data struct {
		Refusal
		URI string `json:"uri,omitempty"`
	}
	data.Refusal = refusalOf(e)
	code := int64(CodeRefused)
	if e.Code == pircan.CodeNotFound || (e.Code == pircan.CodeInvalidArgument && e.Field == "resource_id") {
		code, data.URI = jsonrpc.CodeInvalidParams, uri
	}
	b, _ := json.Marshal(data)
	return &jsonrpc.Error{Code: code, Message: data.Message, Data: b}
}
