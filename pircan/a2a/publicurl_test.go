package a2a_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan/a2a"
)

// cardWithHost reads a card sending Host and X-Forwarded-Proto of its own.
func cardWithHost(t *testing.T, url, host string) (a2a.AgentCard, string) {
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
	var c a2a.AgentCard
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&c) != nil || len(c.SupportedInterfaces) != 1 {
		t.Fatalf("card: %d", resp.StatusCode)
	}
	return c, resp.Header.Get("Vary")
}

// The card names PIRCAN's own address, never one a request says: without
// a configured public URL the listen address, whatever Host and
// X-Forwarded-* came; with one, that.
func TestAgentCardNamesOwnAddress(t *testing.T) {
	e := newEnv(t, a2a.Config{})
	a := e.agent(t, "Translator", "translate")
	c, _ := cardWithHost(t, e.srv.URL+a2a.Path+a.id+"/"+a2a.CardPath, "evil.example")
	if got, want := c.SupportedInterfaces[0].URL, e.srv.URL+a2a.Path+a.id+"/"; got != want || strings.Contains(c.Provider.URL, "evil") {
		t.Fatalf("card with Host evil.example names %s (provider %s), want %s", got, c.Provider.URL, want)
	}
	resp, _ := e.rpcHost(t, a.id, "evil.example")
	if ch := resp.Header.Get("WWW-Authenticate"); strings.Contains(ch, "evil") || !strings.Contains(ch, e.srv.URL) {
		t.Fatalf("challenge with Host evil.example: %q", ch)
	}

	p := newEnvPublic(t, "https://pircan.example/")
	c, _ = cardWithHost(t, p.srv.URL+a2a.Path+a.id+"/"+a2a.CardPath, "evil.example")
	if got, want := c.SupportedInterfaces[0].URL, "https://pircan.example"+a2a.Path+a.id+"/"; got != want || c.Provider.URL != "https://pircan.example/" {
		t.Fatalf("card under PIRCAN_PUBLIC_URL names %s (provider %s), want %s", got, c.Provider.URL, want)
	}
}
