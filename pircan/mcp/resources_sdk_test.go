package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/creatimus/pircan/internal/mcpclient"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/mcp"
)

// The resources API as a client PIRCAN did not write reads it: the
// TypeScript SDK (internal/mcpclient) lists and reads over fakeLibrary,
// through the face's HTTP handler. The end-to-end test over the real
// store and IRC is pircan/bot's TestMCPResourceLibrary.
func TestResourcesTypeScriptSDKFake(t *testing.T) {
	lib := newFakeLibrary()
	e := newEnvOver(t, lib, limits(), mcp.Config{})
	pub, _ := e.agent(t)
	p := publish(t, pub, map[string]any{"title": "Spill kit checklist", "media_type": "text/markdown", "content": "# Kit\nGloves."})
	a := publish(t, pub, map[string]any{"title": "Exposure limits", "access": "agreement", "content": "3 ppm"})
	_, tok := e.token(t)
	url := e.srv.URL + mcp.Path
	out := mcpclient.Run(t, url, tok,
		mcpclient.Call("register", nil),
		mcpclient.Raw("resources/list", nil),
		mcpclient.Raw("resources/read", map[string]any{"uri": mcp.ResourceURI(p.ResourceID)}),
		mcpclient.Raw("resources/read", map[string]any{"uri": mcp.ResourceURI(a.ResourceID)}),
		mcpclient.Raw("resources/read", map[string]any{"uri": mcp.ResourceURI(uuid())}),
		mcpclient.Raw("resources/templates/list", nil),
	)
	var list struct {
		Resources  []struct{ URI, Name, MIMEType string } `json:"resources"`
		NextCursor string                                 `json:"nextCursor"`
	}
	if !out[1].OK || out[1].Decode(&list) != nil || len(list.Resources) != 1 || list.Resources[0].URI != mcp.ResourceURI(p.ResourceID) ||
		list.Resources[0].MIMEType != "text/markdown" || list.NextCursor != "" {
		t.Fatalf("resources/list: %s", out[1].Line)
	}
	var read struct {
		Contents []struct{ URI, MIMEType, Text string } `json:"contents"`
	}
	if !out[2].OK || out[2].Decode(&read) != nil || len(read.Contents) != 1 || read.Contents[0].Text != "# Kit\nGloves." ||
		read.Contents[0].MIMEType != "text/markdown" || read.Contents[0].URI != mcp.ResourceURI(p.ResourceID) {
		t.Fatalf("resources/read: %s", out[2].Line)
	}
	for i, want := range map[int]struct {
		code    int
		refusal pircan.Code
	}{3: {mcp.CodeRefused, pircan.CodeNotAuthorized}, 4: {jsonrpc.CodeInvalidParams, pircan.CodeNotFound}} {
		var data mcpclient.Refusal
		if o := out[i]; o.OK || o.Err == nil || o.Err.Code != want.code || json.Unmarshal(o.Err.Data, &data) != nil || data.Code != string(want.refusal) {
			t.Errorf("step %d: want JSON-RPC error %d with data code %s: %s", i, want.code, want.refusal, o.Line)
		}
	}
	if !out[5].OK {
		t.Fatalf("resources/templates/list: %s", out[5].Line)
	}
}
