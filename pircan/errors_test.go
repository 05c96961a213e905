package pircan_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// Every face shows a wait as these whole seconds: rounded up, never 0.
func TestRetryAfterSeconds(t *testing.T) {
	for _, c := range []struct {
		wait time.Duration
		want int
	}{
		{0, 0}, {-time.Second, 0}, {time.Nanosecond, 1}, {time.Second, 1},
		{time.Second + time.Millisecond, 2}, {5 * time.Second, 5}, {59*time.Second + 1, 60},
	} {
		e := &pircan.Error{Code: pircan.CodeRateLimited, RetryAfter: c.wait}
		if got := e.RetryAfterSeconds(); got != c.want {
			t.Errorf("%v: %d, want %d", c.wait, got, c.want)
		}
	}
}

// The core's refusals name no face: no protocol line, no IRC verb (a
// face adds its own hint from Error.Next).
func TestRefusalsNameNoFace(t *testing.T) {
	verbs := regexp.MustCompile(`PIRCAN/1|\b(HELP|ECHO|HELLO|WHOAMI|FIND|CHANNELS|JOIN|POLICY|CONTACTS?|ACCEPT|DECLINE|CANCEL|AGREEMENTS|REVOKE|SEND|INBOX|LOGIN|OWNER|LOGOUT|RESOURCES|TASKS|COMPLETE|REPORT)\b`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var texts []ast.Expr
			switch n := n.(type) {
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "Errorf" || id.Name == "FieldError") {
					texts = n.Args
				}
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok && id.Name == "Message" {
					texts = []ast.Expr{n.Value}
				}
			}
			for _, e := range texts {
				if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					seen++
					if verbs.MatchString(lit.Value) {
						t.Errorf("%s: a refusal names a face: %s", fset.Position(lit.Pos()), lit.Value)
					}
				}
			}
			return true
		})
	}
	if seen < 50 {
		t.Fatalf("only %d refusal texts found: the scan missed them", seen)
	}
}

// The forum's reasons are listed once each: the manifest, llms.txt and
// parley.html print this table, and ForumStatus takes the first row.
func TestForumReasonsOnce(t *testing.T) {
	seen := map[pircan.Code]bool{}
	for _, r := range pircan.ForumReasons {
		if seen[r.Reason] {
			t.Errorf("reason %s listed twice", r.Reason)
		}
		seen[r.Reason] = true
	}
}
