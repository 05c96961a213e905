// Package docscheck holds the docs to the code: every Go name that
// docs/architecture.md cites in backticks exists.
package docscheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// decls are the repository's Go names: each package's top-level
// declarations, and each type's methods and fields (by the type's name).
type decls struct {
	pkg     map[string]map[string]bool
	members map[string]map[string]bool
	any     map[string]bool
}

func add(m map[string]map[string]bool, k, v string) {
	if m[k] == nil {
		m[k] = map[string]bool{}
	}
	m[k][v] = true
}

func load(t *testing.T, root string) decls {
	d := decls{pkg: map[string]map[string]bool{}, members: map[string]map[string]bool{}, any: map[string]bool{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (e.Name() == "node_modules" || e.Name() == "testdata" || strings.HasPrefix(e.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, "_test.go") { // a test the docs name
			for _, decl := range f.Decls {
				if fn, ok := decl.(*ast.FuncDecl); ok {
					d.any[fn.Name.Name] = true
				}
			}
			return nil
		}
		p := f.Name.Name
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				d.any[decl.Name.Name] = true
				if decl.Recv == nil {
					add(d.pkg, p, decl.Name.Name)
					continue
				}
				add(d.members, receiver(decl.Recv.List[0].Type), decl.Name.Name)
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						add(d.pkg, p, spec.Name.Name)
						d.any[spec.Name.Name] = true
						fields(d, spec.Name.Name, spec.Type)
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							add(d.pkg, p, n.Name)
							d.any[n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// fields records a struct's fields and an interface's methods as members
// (and as names declared anywhere).
func fields(d decls, typ string, x ast.Expr) {
	defer func() {
		for m := range d.members[typ] {
			d.any[m] = true
		}
	}()
	switch x := x.(type) {
	case *ast.StructType:
		for _, f := range x.Fields.List {
			for _, n := range f.Names {
				add(d.members, typ, n.Name)
			}
			if len(f.Names) == 0 { // embedded: its name
				add(d.members, typ, receiver(f.Type))
			}
		}
	case *ast.InterfaceType:
		for _, m := range x.Methods.List {
			for _, n := range m.Names {
				add(d.members, typ, n.Name)
			}
		}
	}
}

func receiver(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.StarExpr:
		return receiver(x.X)
	case *ast.IndexExpr:
		return receiver(x.X)
	case *ast.IndexListExpr:
		return receiver(x.X)
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.Ident:
		return x.Name
	}
	return ""
}

var (
	quoted    = regexp.MustCompile("`([^`\n]+)`")
	dotted    = regexp.MustCompile(`^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$`)
	camelCase = regexp.MustCompile(`^[a-z]+[A-Z]\w*$|^[A-Z][a-z0-9]+[A-Z]\w*$`)
)

// cited reports whether name (as cited in backticks) exists: pkg.Name,
// pkg.Type.Member, Type.Member, or a camelCase name declared anywhere.
// Anything else in backticks (paths, commands, SQL) is not checked.
func (d decls) cited(name string) (checked, ok bool) {
	name = strings.TrimSuffix(name, "()")
	if ext := filepath.Ext(name); ext == ".go" || ext == ".html" || ext == ".md" || ext == ".sql" || ext == ".txt" || ext == ".json" {
		return false, false // a file
	}
	switch {
	case dotted.MatchString(name):
		parts := strings.Split(name, ".")
		if names, isPkg := d.pkg[parts[0]]; isPkg && len(parts) <= 3 {
			if !names[parts[1]] {
				return true, false
			}
			return true, len(parts) == 2 || d.members[parts[1]][parts[2]]
		}
		if members, isType := d.members[parts[0]]; isType && len(parts) == 2 {
			return true, members[parts[1]]
		}
		return false, false
	case camelCase.MatchString(name):
		return true, d.any[name]
	}
	return false, false
}

func TestArchitectureNamesExist(t *testing.T) {
	d := load(t, "../..")
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, m := range quoted.FindAllStringSubmatch(string(doc), -1) {
		c, ok := d.cited(m[1])
		if !c {
			continue
		}
		checked++
		if !ok {
			t.Errorf("docs/architecture.md cites `%s`, which the code does not declare", m[1])
		}
	}
	if checked < 40 {
		t.Fatalf("only %d names checked: the scan missed them", checked)
	}
	t.Logf("%d cited names checked", checked)
}

// The check itself: a name that exists passes, one that does not fails.
func TestCitedNames(t *testing.T) {
	d := load(t, "../..")
	for name, want := range map[string]bool{
		"pircan.Caller": true, "Service.Admit": true, "pircan.Service.Caller": true, "Caller.Human": true,
		"pircan.NoSuchThing": false, "Service.NoSuchOp": false, "pircan.Caller.NoField": false, "noSuchHelperFunc": false,
		"checkArgs": true,
	} {
		if c, ok := d.cited(name); !c || ok != want {
			t.Errorf("%s: checked %v, exists %v; want %v", name, c, ok, want)
		}
	}
}
