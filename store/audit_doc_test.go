package store_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// auditAction is how an audit action looks: <area>.<what>.
var auditAction = regexp.MustCompile(`^(agent|owner|channel|policy|contact|agreement|message|report|resource|task|token|webhook|forum)\.[a-z_.]*[a-z_]$`)

// The audit actions docs/protocol-notes.md lists ("## Audit log") are
// exactly the ones the store writes, and every other mention of an action
// in README.md and docs/ is one of them (issue 10: the docs promised
// owner.policy.set while the code wrote policy.set).
func TestAuditActionsDocumented(t *testing.T) {
	written := map[string]bool{}
	literal := regexp.MustCompile(`"([a-z_]+\.[a-z_.]*[a-z_])"`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
			if auditAction.MatchString(m[1]) {
				written[m[1]] = true
			}
		}
	}
	// Decide writes "contact."+kind.
	for _, kind := range []string{pircan.DecideAccept, pircan.DecideDecline, pircan.DecideCancel} {
		written["contact."+kind] = true
	}

	notes := read(t, filepath.Join("..", "docs", "protocol-notes.md"))
	_, section, ok := strings.Cut(notes, "\n## Audit log\n")
	if !ok {
		t.Fatal("docs/protocol-notes.md has no ## Audit log")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	table := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.Split(line, "|")[1]
		for _, a := range backticked(first) {
			if table[a] {
				t.Errorf("docs: %s listed twice", a)
			}
			table[a] = true
		}
	}
	for a := range written {
		if !table[a] {
			t.Errorf("the store writes %s; docs/protocol-notes.md's audit table does not list it", a)
		}
	}
	for a := range table {
		if !written[a] {
			t.Errorf("docs/protocol-notes.md lists %s; the store writes no such action", a)
		}
	}

	docs, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(docs, filepath.Join("..", "README.md")) {
		text := read(t, f)
		if before, _, ok := strings.Cut(text, "\n## A2A\n"); ok && strings.HasSuffix(f, "protocol-notes.md") {
			// A2A's own field names (message.parts) are no actions; the
			// audit table comes after it.
			_, after, _ := strings.Cut(text, "\n## Audit log\n")
			text = before + after
		}
		for _, a := range backticked(text) {
			if auditAction.MatchString(a) && !slices.Contains([]string{".go", ".md", ".sql"}, filepath.Ext(a)) && !written[a] {
				t.Errorf("%s names audit action %s; the store writes no such action", f, a)
			}
		}
	}
}

func backticked(s string) []string {
	var out []string
	parts := strings.Split(s, "`")
	for i := 1; i < len(parts); i += 2 {
		out = append(out, parts[i])
	}
	return out
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
