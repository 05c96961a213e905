package mcp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/creatimus/pircan/internal/tokenauth"
	"github.com/creatimus/pircan/pircan/mcp"
)

// getHost is a GET with a Host (and proxy headers) of its own.
func getHost(t *testing.T, url, host string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("X-Forwarded-Proto", "https")
	req.Header.Set("X-Forwarded-Host", host)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// Everything the MCP face prints of its own address (the manifest's
// endpoints, the 401 challenge's metadata URL, the metadata's resource)
// is PIRCAN's: the listen address here, never the request's Host.
func TestOwnAddressNotHost(t *testing.T) {
	e := newEnv(t, limits())
	const evil = "evil.example"
	_, body := getHost(t, e.srv.URL+mcp.ManifestPath, evil)
	var m mcp.Manifest
	if err := json.Unmarshal(body, &m); err != nil || m.Endpoints.MCP != e.srv.URL+mcp.Path || strings.Contains(string(body), evil) {
		t.Fatalf("manifest with Host %s: %s", evil, body)
	}
	resp := postHost(t, e.srv.URL+mcp.Path, evil, "", listTools)
	if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || strings.Contains(ch, evil) ||
		!strings.Contains(ch, `resource_metadata="`+e.srv.URL+tokenauth.MetadataPath+mcp.Path+`"`) {
		t.Fatalf("challenge with Host %s: %d %q", evil, resp.StatusCode, ch)
	}
	_, body = getHost(t, e.srv.URL+tokenauth.MetadataPath+mcp.Path, evil)
	var md tokenauth.Metadata
	if err := json.Unmarshal(body, &md); err != nil || md.Resource != e.srv.URL+mcp.Path || strings.Contains(string(body), evil) {
		t.Fatalf("metadata with Host %s: %s", evil, body)
	}
}
