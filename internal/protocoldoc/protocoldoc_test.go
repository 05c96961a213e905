package protocoldoc

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/irc"
	"github.com/creatimus/pircan/pircan/mcp"
)

var update = flag.Bool("update", false, "rewrite docs/protocol.md from the code")

// The committed reference is what the code generates: a verb, tool, limit,
// code or category changed without regenerating it fails here.
func TestProtocolReference(t *testing.T) {
	root := filepath.Join("..", "..")
	got, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, Path)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (go generate ./internal/protocoldoc writes it)", Path, err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs from the code at line %d:\n committed: %s\n generated: %s\nrun: go generate ./internal/protocoldoc", Path, i+1, w, g)
			}
		}
	}
}

// The reference names everything the tables hold.
func TestReferenceIsComplete(t *testing.T) {
	got, err := Generate(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(got)
	var want []string
	for _, v := range irc.VerbDocs() {
		want = append(want, "| `"+v.Name+"` |")
	}
	for _, tl := range mcp.ToolDocs() {
		want = append(want, "| `"+tl.Name+"` |")
	}
	for _, c := range []pircan.Code{pircan.CodeNotAuthorized, pircan.CodeInternalError, pircan.CodeLoopLimit, pircan.CodeSelfReport} {
		want = append(want, "`"+string(c)+"`")
	}
	want = append(want, pircan.ReportCategories...)
	want = append(want, pircan.Policies...)
	want = append(want, pircan.NotifyTaskUpdate, "`irc_requests_per_minute` | 20", "SendMessage", "GetExtendedAgentCard")
	for _, w := range want {
		if !strings.Contains(doc, w) {
			t.Errorf("the reference lacks %q", w)
		}
	}
}
