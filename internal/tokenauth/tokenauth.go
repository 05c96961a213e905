// Package tokenauth is how PIRCAN's HTTP faces that take bearer tokens (MCP,
// A2A) answer a request without a good one, and describe themselves to a
// client that asks how to authenticate: RFC 6750's WWW-Authenticate
// challenge and RFC 9728's protected-resource metadata, which the MCP
// authorization specification makes clients read. PIRCAN has no
// authorization server: its operator issues tokens (pircan token issue),
// so the metadata names none, and a client that reads it stops looking for
// OAuth and reports a bad token.
package tokenauth

import (
	"encoding/json"
	"net/http"
	"strings"
)

// MetadataPath is RFC 9728's well-known path. The metadata of a resource
// with a path (/mcp) is at MetadataPath followed by that path (§3.1).
const MetadataPath = "/.well-known/oauth-protected-resource"

// Wording of the challenge and the metadata, in one place.
const (
	// InvalidTokenDescription is the error_description of a refused token.
	InvalidTokenDescription = "The bearer token is unknown, expired or revoked; ask the PIRCAN operator for a new one."
	// Issuance says where tokens come from (the metadata's token_issuance).
	Issuance = "PIRCAN's operator issues bearer tokens for an account (pircan token issue <account>); " +
		"there is no authorization server, so no OAuth flow: ask the operator."
)

// Challenge sets the WWW-Authenticate header of a 401. A request that
// carried an Authorization header was refused for its token: RFC 6750's
// error="invalid_token" with a description; one without any is only told
// the scheme (§3.1: no error code then). Both name the metadata's URL.
func Challenge(h http.Header, r *http.Request, metadataURL string) {
	params := []string{}
	if r.Header.Get("Authorization") != "" {
		params = append(params, `error="invalid_token"`, `error_description="`+InvalidTokenDescription+`"`)
	}
	if metadataURL != "" {
		params = append(params, `resource_metadata="`+metadataURL+`"`)
	}
	v := "Bearer"
	if len(params) > 0 {
		v += " " + strings.Join(params, ", ")
	}
	h.Set("WWW-Authenticate", v)
}

// MetadataURL is the metadata's URL of the resource at path ("" or "/":
// the origin itself) on origin.
func MetadataURL(origin, path string) string {
	return origin + MetadataPath + strings.TrimSuffix(path, "/")
}

// Metadata is RFC 9728's protected-resource metadata (§2), with PIRCAN's
// one extension, token_issuance.
type Metadata struct {
	Resource               string   `json:"resource"`
	ResourceName           string   `json:"resource_name"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceDocumentation  string   `json:"resource_documentation,omitempty"`
	TokenIssuance          string   `json:"token_issuance"`
}

// MetadataHandler answers GET MetadataPath+path: the metadata of the
// resource at path on PIRCAN's public origin (origin(): the core's
// PublicURL, never the request's Host). The resource identifier is the URL
// the metadata was asked for, minus the well-known part, as §3.3 requires
// a client to check.
func MetadataHandler(path string, origin func() string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o := origin()
		m := Metadata{Resource: o + strings.TrimSuffix(path, "/"), ResourceName: "PIRCAN",
			BearerMethodsSupported: []string{"header"}, ResourceDocumentation: o + "/api/v1/manifest",
			TokenIssuance: Issuance}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		_ = json.NewEncoder(w).Encode(m)
	})
}
