package bot_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/creatimus/pircan/internal/bottest"
)

// pircan serve serves the MCP face: the public manifest, and POST /mcp
// behind a bearer token.
func TestServesMCP(t *testing.T) {
	t.Parallel()
	bot := bottest.Start(t, bottest.Options{HTTPAddr: "127.0.0.1:0"})
	resp, err := http.Get(bot.HTTPURL + "/api/v1/manifest")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Protocol  string            `json:"protocol"`
		Endpoints map[string]string `json:"endpoints"`
	}
	err = json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || m.Endpoints["mcp"] != bot.HTTPURL+"/mcp" {
		t.Fatalf("manifest: %d %+v %v", resp.StatusCode, m, err)
	}
	resp, err = http.Post(bot.HTTPURL+"/mcp", "application/json",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != `Bearer resource_metadata="`+bot.HTTPURL+`/.well-known/oauth-protected-resource/mcp"` {
		t.Fatalf("POST /mcp without a token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}
