package allot_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
)

// snapshotMethods lists the exported methods of Snapshot that the package
// declares, read from its source: the methods export_test.go adds for
// tests are not part of what a caller gets.
func snapshotMethods(t *testing.T) []reflect.Method {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var names []string
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || !fd.Name.IsExported() {
				continue
			}
			recv := fd.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if id, ok := recv.(*ast.Ident); ok && id.Name == "Snapshot" {
				names = append(names, fd.Name.Name)
			}
		}
	}
	slices.Sort(names)
	if len(names) < 10 {
		t.Fatalf("found only %d methods of Snapshot: %v", len(names), names)
	}
	var out []reflect.Method
	for _, name := range names {
		m, ok := reflect.TypeFor[*allot.Snapshot]().MethodByName(name)
		if !ok {
			t.Fatalf("Snapshot.%s is declared but not a method of *Snapshot", name)
		}
		out = append(out, m)
	}
	return out
}

// behaviour returns a type of one of the module's subpackages with methods
// that t reaches (through pointers, elements, fields, parameters), if any.
func behaviour(t reflect.Type, seen map[reflect.Type]bool) reflect.Type {
	if seen[t] {
		return nil
	}
	seen[t] = true
	const module = "github.com/allot-sched/allot"
	if p := t.PkgPath(); strings.HasPrefix(p, module+"/") && t.Name() != "" {
		if t.NumMethod() > 0 || (t.Kind() != reflect.Interface && reflect.PointerTo(t).NumMethod() > 0) {
			return t
		}
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
		return behaviour(t.Elem(), seen)
	case reflect.Map:
		if b := behaviour(t.Key(), seen); b != nil {
			return b
		}
		return behaviour(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if b := behaviour(t.Field(i).Type, seen); b != nil {
				return b
			}
		}
	case reflect.Func:
		for i := range t.NumIn() {
			if b := behaviour(t.In(i), seen); b != nil {
				return b
			}
		}
		for i := range t.NumOut() {
			if b := behaviour(t.Out(i), seen); b != nil {
				return b
			}
		}
	}
	return nil
}

// TestSnapshotHandsOutNoMutator: what Snapshot's methods return is allot's
// own types and plain values, never a type of the packages it is built
// from that has methods (topology.State, topology.Topology, gang.Placer,
// quota.Tree...): through those a caller could change a published
// snapshot for every reader.
func TestSnapshotHandsOutNoMutator(t *testing.T) {
	for _, m := range snapshotMethods(t) {
		for i := range m.Type.NumOut() {
			if b := behaviour(m.Type.Out(i), map[reflect.Type]bool{}); b != nil {
				t.Errorf("Snapshot.%s returns %v, which reaches %v and its methods", m.Name, m.Type.Out(i), b)
			}
		}
	}
}
