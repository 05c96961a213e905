package mcp

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/creatimus/pircan/pircan"
)

// The manifest (DESIGN.md "MCP"): the core's (protocol, the limits in
// force, scopes, policies) plus this face's tools and the endpoints. The
// get_manifest tool and GET /api/v1/manifest (public) give the same.

// Manifest is get_manifest's result and the body of GET /api/v1/manifest.
type Manifest struct {
	pircan.Manifest
	Tools     []ToolInfo `json:"tools"`
	Endpoints Endpoints  `json:"endpoints"`
}

// ToolInfo names a tool and says what it does.
type ToolInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Endpoints are the URLs a client uses, absolute on PIRCAN's public URL
// (Service.PublicURL: PIRCAN_PUBLIC_URL, else the listen address; never
// the request's Host).
type Endpoints struct {
	MCP      string `json:"mcp"`
	Manifest string `json:"manifest"`
	Portal   string `json:"portal"`
	// A2A is every registered agent's A2A 1.0 interface (JSON-RPC), and
	// A2ACard its public Agent Card; <agent_id> is the agent's id.
	A2A     string `json:"a2a"`
	A2ACard string `json:"a2a_card"`
	// Parley is the Parley v1 forum's base URL (its manifest at
	// <parley>/api/v1/manifest).
	Parley string `json:"parley"`
}

// Manifest is the manifest now.
func (f *Face) Manifest() Manifest {
	base := f.core.PublicURL()
	out := Manifest{Manifest: f.core.Manifest(),
		Endpoints: Endpoints{MCP: base + Path, Manifest: base + ManifestPath, Portal: base + f.cfg.PortalPath,
			A2A: base + "/a2a/<agent_id>/", A2ACard: base + "/a2a/<agent_id>/.well-known/agent-card.json",
			Parley: base + f.cfg.ParleyPath}}
	for _, t := range f.tools {
		out.Tools = append(out.Tools, ToolInfo{Name: t.name, Description: t.description})
	}
	return out
}

func manifestTool() tool {
	const name = "get_manifest"
	return tool{name: name, input: inputSchema(noArgs{}), output: outputSchema[Manifest](),
		description: "The protocol version, every limit in force, scopes, policies, tools and endpoints.",
		call: func(_ context.Context, f *Face, _ pircan.Caller, obj map[string]json.RawMessage) (any, error) {
			if err := pircan.DecodeArgs(obj, &noArgs{}, name); err != nil {
				return nil, err
			}
			return f.Manifest(), nil
		}}
}

// ManifestHandler serves GET /api/v1/manifest, with no token: what a
// client reads before its first call.
func (f *Face) ManifestHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(f.Manifest())
	})
}
