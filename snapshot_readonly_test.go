package allot_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
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
	if p := t.PkgPath(); strings.HasPrefix(p, module+"/") && t.Name() != "" && !apiVocabulary[p] {
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

// apiVocabulary are the subpackages whose types the API speaks in, as
// netip's: package labels' selectors, whose methods only read (Clone
// copies) and which Snapshot hands out as copies.
var apiVocabulary = map[string]bool{"github.com/allot-sched/allot/labels": true}

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

// scribble writes over everything v reaches that a caller could write:
// elements, map entries, exported fields, the targets of pointers.
func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			scribble(v.Elem())
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			scribble(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			scribble(e)
			v.SetMapIndex(k, e)
		}
		if v.Type().Key().Kind() == reflect.String {
			v.SetMapIndex(reflect.ValueOf("scribbled").Convert(v.Type().Key()), reflect.Zero(v.Type().Elem()))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				scribble(v.Field(i))
			}
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(v.String() + "~")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.CanSet() {
			v.SetInt(v.Int() ^ 5)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.CanSet() {
			v.SetUint(v.Uint() ^ 5)
		}
	case reflect.Float32, reflect.Float64:
		if v.CanSet() {
			v.SetFloat(v.Float() + 0.5)
		}
	case reflect.Bool:
		if v.CanSet() {
			v.SetBool(!v.Bool())
		}
	}
}

// readonlySnapshot is a snapshot whose queues, admitted and pending
// workloads have something in every map, slice and pointer an accessor
// might hand out.
func readonlySnapshot(t *testing.T) *allot.Snapshot {
	t.Helper()
	limit, weight, threshold := int64(4), 2.0, int32(5)
	b := baseBuilder()
	q := &b.Queues[0]
	q.Quota[0].Resources[0].BorrowingLimit = &limit
	q.Quota[0].Resources = append(q.Quota[0].Resources, allot.ResourceQuota{Name: "cpu", Nominal: 64_000})
	q.FlavorOrder = []string{"h100"}
	q.FairSharing = &allot.QueueFairSharing{Weight: &weight}
	q.Preemption.ReclaimWithinCohort = "Any"
	q.Preemption.BorrowWithinCohort = allot.BorrowWithinCohort{Policy: "LowerPriority", MaxPriorityThreshold: &threshold}
	q.Tenants = []string{"t"}
	q.UserCap = allot.Resources{"gpu": 12}
	b.Running = []allot.Workload{running("run", "n1", 2, 0, 1)}
	b.Running[0].PodSets[0].Flavors = []string{"h100"}
	b.Running[0].PodSets[0].Topology.Preferred = "rack"
	b.Pending = []allot.Workload{{ID: "wait", Queue: "q", Tenant: "t", User: "u", PodSets: []allot.PodSet{{
		Name: "m", Count: 2, PerPod: allot.Resources{"gpu": 4, "cpu": 1000}, Flavors: []string{"h100"},
		Topology: allot.TopologyRequest{Required: "rack", Slices: []allot.Slice{{Level: "rack", Size: 2}}},
	}}}}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSnapshotAccessorsHandOutCopies calls every exported method of
// Snapshot with every name the snapshot knows, writes over whatever each
// call returns, and checks that every call still answers as before.
func TestSnapshotAccessorsHandOutCopies(t *testing.T) {
	names := []string{"", "run", "wait", "q", "ai", "root", "n0", "n1", "h100", "gpu", "cpu", "rack", "node", "t"}
	type call struct {
		key  string
		m    reflect.Method
		args []reflect.Value // after the receiver
	}
	var calls []call
	for _, m := range snapshotMethods(t) {
		combos := [][]reflect.Value{nil}
		for i := 1; i < m.Type.NumIn(); i++ {
			in := m.Type.In(i)
			var next [][]reflect.Value
			for _, c := range combos {
				if in.Kind() != reflect.String {
					next = append(next, append(slices.Clone(c), reflect.Zero(in)))
					continue
				}
				for _, n := range names {
					next = append(next, append(slices.Clone(c), reflect.ValueOf(n).Convert(in)))
				}
			}
			combos = next
		}
		for _, args := range combos {
			calls = append(calls, call{m.Name + fmt.Sprint(args), m, args})
		}
	}
	do := func(s *allot.Snapshot, c call) []reflect.Value {
		return c.m.Func.Call(append([]reflect.Value{reflect.ValueOf(s)}, c.args...))
	}
	observe := func(s *allot.Snapshot) map[string]string {
		out := map[string]string{}
		for _, c := range calls {
			var parts []any
			for _, r := range do(s, c) {
				parts = append(parts, r.Interface())
			}
			b, err := json.Marshal(parts)
			if err != nil {
				t.Fatalf("%s: %v", c.key, err)
			}
			out[c.key] = string(b)
		}
		return out
	}
	overwrite := func(s *allot.Snapshot, c call) {
		for _, r := range do(s, c) {
			v := reflect.New(r.Type()).Elem()
			v.Set(r)
			scribble(v)
		}
	}
	// changed is the first call that answers otherwise than in want.
	changed := func(s *allot.Snapshot, want map[string]string) (string, bool) {
		got := observe(s)
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if got[k] != want[k] {
				return fmt.Sprintf("%s:\n was %s\n now %s", k, want[k], got[k]), true
			}
		}
		return "", false
	}
	s := readonlySnapshot(t)
	want := observe(s)
	for _, c := range calls {
		overwrite(s, c)
	}
	if _, bad := changed(s, want); !bad {
		return
	}
	// Which call handed out what the snapshot holds: one at a time, each on
	// a snapshot of its own.
	for _, c := range calls {
		s := readonlySnapshot(t)
		overwrite(s, c)
		if diff, bad := changed(s, want); bad {
			t.Fatalf("writing over what %s returned changed %s", c.key, diff)
		}
	}
	t.Fatal("writing over what the calls returned changed the snapshot, no one call alone")
}
