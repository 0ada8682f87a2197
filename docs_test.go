package allot_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
)

// The API's documentation as the code holds it: the Event doc lists every
// event, and the fields and constants an embedder fills in or reads in a
// trail each say what they are.

// rootFiles parses the root package's non-test files, with comments.
func rootFiles(t *testing.T) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// typeSpec finds the declaration of a type and its doc comment.
func typeSpec(t *testing.T, files []*ast.File, name string) (*ast.TypeSpec, string) {
	t.Helper()
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				if ts.Name.Name != name {
					continue
				}
				doc := ts.Doc
				if doc == nil {
					doc = g.Doc
				}
				return ts, doc.Text()
			}
		}
	}
	t.Fatalf("no type %s", name)
	return nil, ""
}

// TestEventDocListsEveryEvent holds the Event interface's doc to the
// events there are: every type with an apply method is named in one of its
// list items, and every name there is such a type.
func TestEventDocListsEveryEvent(t *testing.T) {
	files := rootFiles(t)
	var events []string
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "apply" {
				continue
			}
			if id, ok := fn.Recv.List[0].Type.(*ast.Ident); ok {
				events = append(events, id.Name)
			}
		}
	}
	if len(events) < 17 {
		t.Fatalf("found %d events, %v: the search is broken", len(events), events)
	}
	_, doc := typeSpec(t, files, "Event")
	var listed []string
	for _, line := range strings.Split(doc, "\n") {
		item, ok := strings.CutPrefix(strings.TrimSpace(line), "- ")
		if !ok {
			continue
		}
		names, _, ok := strings.Cut(item, ":")
		if !ok {
			t.Errorf("list item %q names no event before a colon", line)
			continue
		}
		listed = append(listed, strings.Split(names, ", ")...)
	}
	for _, e := range events {
		if !slices.Contains(listed, e) {
			t.Errorf("the Event doc does not list %s", e)
		}
	}
	for _, name := range listed {
		if !slices.Contains(events, name) {
			t.Errorf("the Event doc lists %s, which is no event", name)
		}
	}
}

// TestFieldsDocumented: every field of the Builder and of a trail's Check,
// and every Stage, has a doc comment; Builder.Now says its unit.
func TestFieldsDocumented(t *testing.T) {
	files := rootFiles(t)
	for _, name := range []string{"Builder", "Check"} {
		ts, _ := typeSpec(t, files, name)
		for _, field := range ts.Type.(*ast.StructType).Fields.List {
			// Fields declared together share one comment.
			if field.Doc == nil {
				t.Errorf("%s.%s has no doc comment", name, field.Names[0].Name)
			}
			if name == "Builder" && field.Names[0].Name == "Now" && !strings.Contains(field.Doc.Text(), "seconds") {
				t.Errorf("Builder.Now does not say its unit: %q", field.Doc.Text())
			}
		}
	}
	stages := 0
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				if !strings.HasPrefix(vs.Names[0].Name, "Stage") {
					continue
				}
				stages++
				if vs.Doc == nil {
					t.Errorf("%s has no doc comment", vs.Names[0].Name)
				}
			}
		}
	}
	if stages != 9 {
		t.Errorf("found %d stages, want the 9 of the pipeline", stages)
	}
}
