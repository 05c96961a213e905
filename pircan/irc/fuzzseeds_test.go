package irc

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// fuzzCorpusDir is the repository's shared fuzz corpus (testdata/README.md):
// one folder per fuzz target, files in Go's "go test fuzz v1" format. Go
// itself only reads testdata/fuzz of the package under test, so the seeds are
// added by hand; the files stay valid Go corpus files and can be copied back
// and forth (`go test -fuzz` writes new failing inputs to
// pircan/irc/testdata/fuzz/<Name>/, which is where they are moved from).
const fuzzCorpusDir = "../../testdata/fuzz"

// addFuzzSeeds adds every file of testdata/fuzz/<f's name>/ as a seed and
// fails unless at least min were found, so that a moved folder cannot turn the
// seeds silently off. The count is logged (go test -v).
func addFuzzSeeds(f *testing.F, min int) {
	f.Helper()
	dir := filepath.Join(fuzzCorpusDir, f.Name())
	entries, err := os.ReadDir(dir)
	if err != nil {
		f.Fatalf("fuzz seeds: %v", err)
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatalf("fuzz seeds: %v", err)
		}
		vals, err := parseFuzzCorpusFile(b)
		if err != nil {
			f.Fatalf("fuzz seeds: %s: %v", p, err)
		}
		f.Add(vals...) // fails the target if the types do not match its arguments
		n++
	}
	f.Logf("%d seeds from %s", n, dir)
	if n < min {
		f.Fatalf("fuzz seeds: %d files in %s, want at least %d", n, dir, min)
	}
}

const fuzzCorpusHeader = "go test fuzz v1"

// parseFuzzCorpusFile reads a "go test fuzz v1" file: the header line, then
// one Go expression per line, T(literal), for the types the targets here use
// (string, []byte, bool and the integer types). Like Go's reader it skips
// blank lines and knows no comments.
func parseFuzzCorpusFile(b []byte) ([]any, error) {
	lines := bytes.Split(b, []byte("\n"))
	if string(bytes.TrimSuffix(lines[0], []byte("\r"))) != fuzzCorpusHeader {
		return nil, fmt.Errorf("first line is not %q", fuzzCorpusHeader)
	}
	var vals []any
	for i, line := range lines[1:] {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		v, err := parseFuzzCorpusValue(string(line))
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", i+2, err)
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("no values")
	}
	return vals, nil
}

func parseFuzzCorpusValue(line string) (any, error) {
	expr, err := parser.ParseExpr(line)
	if err != nil {
		return nil, err
	}
	call, ok := expr.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil, fmt.Errorf("want T(value), got %q", line)
	}
	if arr, ok := call.Fun.(*ast.ArrayType); ok {
		if id, ok := arr.Elt.(*ast.Ident); ok && arr.Len == nil && (id.Name == "byte" || id.Name == "uint8") {
			s, err := fuzzStringLit(call.Args[0])
			return []byte(s), err
		}
		return nil, fmt.Errorf("unsupported type in %q", line)
	}
	typ, ok := call.Fun.(*ast.Ident)
	if !ok {
		return nil, fmt.Errorf("unsupported type in %q", line)
	}
	arg := call.Args[0]
	switch typ.Name {
	case "string":
		return fuzzStringLit(arg)
	case "bool":
		id, ok := arg.(*ast.Ident)
		if !ok || (id.Name != "true" && id.Name != "false") {
			return nil, fmt.Errorf("bad bool in %q", line)
		}
		return id.Name == "true", nil
	}
	// Integers: an optional minus sign, then a literal Go accepts (0x…, 'c').
	neg := false
	if u, ok := arg.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		neg, arg = true, u.X
	}
	lit, ok := arg.(*ast.BasicLit)
	if !ok || (lit.Kind != token.INT && lit.Kind != token.CHAR) {
		return nil, fmt.Errorf("bad %s literal in %q", typ.Name, line)
	}
	text := lit.Value
	if lit.Kind == token.CHAR {
		r, _, _, err := strconv.UnquoteChar(text[1:len(text)-1], '\'')
		if err != nil {
			return nil, err
		}
		text = strconv.Itoa(int(r))
	}
	if neg {
		text = "-" + text
	}
	bits := map[string]int{"int": 0, "int8": 8, "int16": 16, "int32": 32, "rune": 32, "int64": 64,
		"uint": 0, "uint8": 8, "byte": 8, "uint16": 16, "uint32": 32, "uint64": 64}
	size, ok := bits[typ.Name]
	if !ok {
		return nil, fmt.Errorf("unsupported type %s", typ.Name)
	}
	if typ.Name[0] == 'u' || typ.Name == "byte" {
		u, err := strconv.ParseUint(text, 0, size)
		if err != nil {
			return nil, err
		}
		switch typ.Name {
		case "uint":
			return uint(u), nil
		case "uint8", "byte":
			return uint8(u), nil
		case "uint16":
			return uint16(u), nil
		case "uint32":
			return uint32(u), nil
		}
		return u, nil
	}
	i, err := strconv.ParseInt(text, 0, size)
	if err != nil {
		return nil, err
	}
	switch typ.Name {
	case "int":
		return int(i), nil
	case "int8":
		return int8(i), nil
	case "int16":
		return int16(i), nil
	case "int32", "rune":
		return int32(i), nil
	}
	return i, nil
}

func fuzzStringLit(e ast.Expr) (string, error) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", fmt.Errorf("want a string literal")
	}
	return strconv.Unquote(lit.Value)
}

// The reader must agree with Go's own corpus writer (%q for strings and
// []byte, %v for bool and integers) on every type it accepts.
func TestParseFuzzCorpusFile(t *testing.T) {
	in := "go test fuzz v1\n" +
		"string(\"a\\\"\\x00\\xffé😀\")\n" +
		"\n" +
		"[]byte(\"\\x01\\n\")\n" +
		"bool(true)\n" +
		"bool(false)\n" +
		"int(-42)\n" +
		"int64(0x10)\n" +
		"uint8(255)\n" +
		"rune('é')\n" +
		"string(`raw\\n`)\r\n"
	want := []any{"a\"\x00\xffé😀", []byte("\x01\n"), true, false, -42, int64(16), uint8(255), int32('é'), `raw\n`}
	got, err := parseFuzzCorpusFile([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	for _, bad := range []string{
		"",
		"go test fuzz v2\nstring(\"x\")\n",
		"go test fuzz v1\n",
		"go test fuzz v1\nstring(x)\n",
		"go test fuzz v1\nfloat64(1)\n",
		"go test fuzz v1\nuint8(256)\n",
		"go test fuzz v1\nbool(1)\n",
		"go test fuzz v1\n\"x\"\n",
		"go test fuzz v1\n// a comment\nstring(\"x\")\n",
	} {
		if v, err := parseFuzzCorpusFile([]byte(bad)); err == nil {
			t.Errorf("parseFuzzCorpusFile(%q) = %#v, want an error", bad, v)
		}
	}
}
