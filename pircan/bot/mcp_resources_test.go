package bot_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/creatimus/pircan/internal/bottest"
	"github.com/creatimus/pircan/internal/mcpclient"
	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/irc"
	"github.com/creatimus/pircan/pircan/mcp"
)

// The resource library across the faces (DESIGN.md "Resources"): MCP
// agents publish, an IRC agent lists with RESOURCES (metadata only), a
// second MCP agent reads what its agreements open, through the tools and
// through MCP's own resources API.
//
// NEEDS store/resources.go (branch resources): until it is merged the
// store's placeholders refuse every publication and this test fails at
// its first publish_resource (internal_error).
func TestMCPResourceLibrary(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0"})
	x := bot.Agents(t, "rsx", 1)[0]
	x.Hello(`{"name":"` + x.Nick() + `"}`)
	pub, rd := newMCPAgent(t, bot, "mcprp"), newMCPAgent(t, bot, "mcprr")

	const publicText = "Spill kit: gloves, goggles, absorbent pads."
	secretText := "# Exposure limits\n\nChlorine: 0.5 ppm (8 h), 1 ppm (15 min). Grüße ✓ 東京 🚀"
	out := pub.run(t,
		call("register", nil),
		call("publish_resource", args{"title": "Spill kit checklist", "tags": []string{"safety", "spill"}, "content": publicText}),
		call("publish_resource", args{"title": "Exposure limits", "tags": []string{"chlorine"}, "access": "agreement",
			"media_type": "text/markdown", "content": secretText}),
	)
	pubID, _ := result(t, "register", out[0])["agent_id"].(string)
	pp := result(t, "publish_resource public", out[1])
	hasKeys(t, "publish_resource", pp, "resource_id", "title", "tags", "access", "media_type", "size", "by", "created_at")
	pa := result(t, "publish_resource agreement", out[2])
	if pp["access"] != "public" || pp["media_type"] != "text/plain" || pp["size"] != float64(len(publicText)) ||
		pa["access"] != "agreement" || pa["media_type"] != "text/markdown" || pa["size"] != float64(len(secretText)) ||
		sub(pa, "by")["agent_id"] != pubID || sub(pa, "by")["name"] != pub.Account {
		t.Fatalf("publish_resource: %s\n%s", out[1].Line, out[2].Line)
	}
	pID, aID := pp["resource_id"].(string), pa["resource_id"].(string)

	// On IRC: one RESOURCE line each, newest first, readable for this
	// agent, and never the content.
	ircList := func(what string, wantTotal int) map[string]bottest.Reply {
		t.Helper()
		lines, end := x.AskList(`PIRCAN/1 RESOURCES {"by":"` + pubID + `"}`)
		if end.Verb != "RESOURCES-END" || end.Int("total") != wantTotal || len(lines) != wantTotal {
			t.Fatalf("%s: RESOURCES: %v %s", what, lines, end.Raw)
		}
		byID := map[string]bottest.Reply{}
		for _, l := range lines {
			if l.Verb != "RESOURCE" || len(l.Raw) > irc.MaxReplyBytes || strings.Contains(l.Raw, "Chlorine") || strings.Contains(l.Raw, "gloves") {
				t.Fatalf("%s: RESOURCE line: %s", what, l.Raw)
			}
			hasKeys(t, "RESOURCE", l.Fields, "resource_id", "title", "tags", "access", "readable", "size", "by")
			byID[l.Str("resource_id")] = l
		}
		return byID
	}
	lines := ircList("published", 2)
	if l := lines[aID]; l.Fields["readable"] != false || l.Str("access") != "agreement" || l.Int("size") != len(secretText) ||
		fmt.Sprint(l.Fields["by"]) != fmt.Sprint(map[string]any{"agent_id": pubID, "name": pub.Account}) || fmt.Sprint(l.Fields["tags"]) != "[chlorine]" {
		t.Fatalf("RESOURCE (agreement): %s", l.Raw)
	}
	if l := lines[pID]; l.Fields["readable"] != true || l.Str("title") != "Spill kit checklist" {
		t.Fatalf("RESOURCE (public): %s", l.Raw)
	}
	if found, end := x.AskList(`PIRCAN/1 RESOURCES {"q":"EXPOSURE","by":"` + pubID + `"}`); len(found) != 1 || found[0].Str("resource_id") != aID || end.Int("total") != 1 {
		t.Fatalf("RESOURCES q: %v %s", found, end.Raw)
	}

	// The reader: the public one for anyone, the agreement one refused.
	out = rd.run(t,
		call("register", nil),
		call("list_resources", args{"by": pubID}),
		call("read_resource", args{"resource_id": pID}),
		call("read_resource", args{"resource_id": aID}),
		call("delete_resource", args{"resource_id": pID}),
	)
	rdID, _ := result(t, "register", out[0])["agent_id"].(string)
	items := listItems(t, "list_resources", result(t, "list_resources", out[1]), 2)
	hasKeys(t, "list_resources item", items[0], "resource_id", "title", "tags", "access", "readable", "size", "by")
	if items[0]["resource_id"] != aID || items[0]["readable"] != false || items[1]["readable"] != true || strings.Contains(out[1].Line, "Chlorine") {
		t.Fatalf("list_resources: %s", out[1].Line)
	}
	read := result(t, "read_resource public", out[2])
	hasKeys(t, "read_resource", read, "resource_id", "title", "tags", "access", "size", "by", "media_type", "content")
	if read["content"] != publicText || read["media_type"] != "text/plain" || read["resource_id"] != pID {
		t.Fatalf("read_resource: %s", out[2].Line)
	}
	refused(t, "read_resource without an agreement", out[3], "not_authorized", "")
	refused(t, "delete_resource by another agent", out[4], "not_found", "resource_id")

	// checkReader holds what the reader may read to want, through the
	// tools and the resources API alike.
	checkReader := func(what string, want bool) {
		t.Helper()
		out := runAny(t, rd,
			call("read_resource", args{"resource_id": aID}),
			call("list_resources", args{"by": pubID}),
			mcpclient.Raw("resources/list", nil),
			mcpclient.Raw("resources/read", args{"uri": mcp.ResourceURI(aID)}),
		)
		flags := map[any]any{}
		for _, it := range listItems(t, what+": list_resources", result(t, what+": list_resources", out[1]), 2) {
			flags[it["resource_id"]] = it["readable"]
		}
		if flags[aID] != want || flags[pID] != true {
			t.Errorf("%s: list_resources readable %v, want %v for the agreement one", what, flags, want)
		}
		var list struct {
			Resources []struct{ URI, MIMEType string } `json:"resources"`
		}
		if !out[2].OK || out[2].Decode(&list) != nil {
			t.Fatalf("%s: resources/list: %s", what, out[2].Line)
		}
		var uris []string
		for _, r := range list.Resources {
			uris = append(uris, r.URI)
		}
		if slices.Contains(uris, mcp.ResourceURI(aID)) != want || !slices.Contains(uris, mcp.ResourceURI(pID)) {
			t.Errorf("%s: resources/list %v (readable ones only)", what, uris)
		}
		if !want {
			refused(t, what+": read_resource", out[0], "not_authorized", "")
			var data mcpclient.Refusal
			if e := out[3].Err; out[3].OK || e == nil || e.Code != mcp.CodeRefused || json.Unmarshal(e.Data, &data) != nil || data.Code != "not_authorized" {
				t.Errorf("%s: resources/read: want JSON-RPC error %d not_authorized: %s", what, mcp.CodeRefused, out[3].Line)
			}
			return
		}
		if r := result(t, what+": read_resource", out[0]); r["content"] != secretText || r["media_type"] != "text/markdown" {
			t.Errorf("%s: read_resource: %s", what, out[0].Line)
		}
		var rr struct {
			Contents []struct{ URI, MIMEType, Text string } `json:"contents"`
		}
		if !out[3].OK || out[3].Decode(&rr) != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != secretText ||
			rr.Contents[0].MIMEType != "text/markdown" || rr.Contents[0].URI != mcp.ResourceURI(aID) {
			t.Errorf("%s: resources/read: %s", what, out[3].Line)
		}
	}

	// A message-only agreement does not open it.
	contactAccept(t, rd, pub, pubID)
	checkReader("under a message agreement", false)
	// Nor resource:read the other way: the publisher asked, the reader accepted.
	contactAccept(t, pub, rd, rdID, pircan.ScopeResourceRead)
	checkReader("resource:read granted to the publisher", false)
	// The reader asks for resource:read and the publisher accepts: open.
	agreementID := contactAccept(t, rd, pub, pubID, pircan.ScopeResourceRead)
	checkReader("resource:read granted by the publisher", true)
	// The IRC agent holds no such agreement: still not readable for it.
	if l := ircList("after the reader's agreement", 2)[aID]; l.Fields["readable"] != false {
		t.Fatalf("RESOURCE for the IRC agent: %s", l.Raw)
	}
	// The publisher's REVOKE closes it at once.
	out = pub.run(t, call("revoke_agreement", args{"agreement_id": agreementID}))
	if r := result(t, "revoke_agreement", out[0]); r["status"] != "revoked" {
		t.Fatalf("revoke_agreement: %s", out[0].Line)
	}
	checkReader("after the publisher's revoke", false)

	// Only the publisher deletes it; then it is gone for everyone.
	out = pub.run(t,
		call("delete_resource", args{"resource_id": pID}),
		call("delete_resource", args{"resource_id": pID}),
	)
	if d := result(t, "delete_resource", out[0]); d["resource_id"] != pID || d["status"] != "deleted" {
		t.Fatalf("delete_resource: %s", out[0].Line)
	}
	refused(t, "delete_resource again", out[1], "not_found", "resource_id")
	refused(t, "read_resource deleted", rd.run(t, call("read_resource", args{"resource_id": pID}))[0], "not_found", "resource_id")
	if l := ircList("after the delete", 1); len(l) != 1 || l[aID].Str("resource_id") != aID {
		t.Fatalf("RESOURCES after the delete: %v", l)
	}
}

// runAny is run for plans whose steps may throw (a resources/read
// refused is a JSON-RPC error): only the listing must succeed; the
// caller checks each outcome.
func runAny(t *testing.T, m *mcpAgent, steps ...mcpclient.Step) []mcpclient.Outcome {
	t.Helper()
	out := mcpclient.Run(t, m.url, m.Token, append([]mcpclient.Step{mcpclient.ListTools()}, steps...)...)
	if !out[0].OK {
		t.Fatalf("%s: tools/list: %s", m.Account, out[0].Line)
	}
	return out[1:]
}

// contactAccept has from ask to (scopes, or message when none) and to
// accept, both over MCP; it returns the agreement's id.
func contactAccept(t *testing.T, from, to *mcpAgent, toID string, scopes ...string) string {
	t.Helper()
	a := args{"to": toID, "purpose": "Library access"}
	if len(scopes) > 0 {
		a["scopes"] = scopes
	}
	c := result(t, "contact", from.run(t, call("contact", a))[0])
	d := result(t, "accept_contact", to.run(t, call("accept_contact", args{"request_id": c["request_id"]}))[0])
	id, _ := d["agreement_id"].(string)
	if d["status"] != "accepted" || !pircan.ValidID(id) {
		t.Fatalf("accept_contact: %v", d)
	}
	return id
}
