package allot_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/allot-sched/allot"
)

// TestNodeEqual: Node.Equal tells apart two nodes that differ in any one
// field (every field of Node, found by reflection, so that a field added
// later and not compared fails here), and holds an empty map or list the
// same as none.
func TestNodeEqual(t *testing.T) {
	base := allot.Node{Name: "n", Flavor: "f", Labels: map[string]string{"rack": "r1"}, Taints: []allot.Taint{{Key: "k", Effect: "NoSchedule"}},
		Capacity: allot.Resources{"gpu": 8}, GPUGroups: []int{0, 0, 1, 1}, ShareableGPUs: 3,
		MIG: []allot.MIGPartition{{GPU: 2, Profiles: allot.Resources{"mig-1g.10gb": 7}}}, MaxPods: 110, CooldownUntil: 5, Unschedulable: true, Down: true}
	if !base.Equal(&base) {
		t.Fatal("a node differs from itself")
	}
	rt := reflect.TypeOf(base)
	for i := range rt.NumField() {
		other := base
		other.Labels, other.Capacity = map[string]string{"rack": "r1"}, allot.Resources{"gpu": 8}
		other.MIG = []allot.MIGPartition{{GPU: 2, Profiles: allot.Resources{"mig-1g.10gb": 7}}}
		if !base.Equal(&other) {
			t.Fatal("a copy with its own maps differs")
		}
		f := reflect.ValueOf(&other).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "x")
		case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint64:
			if f.CanInt() {
				f.SetInt(f.Int() + 1)
			} else {
				f.SetUint(f.Uint() + 1)
			}
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Map:
			m := reflect.MakeMap(f.Type())
			for _, k := range f.MapKeys() {
				m.SetMapIndex(k, f.MapIndex(k))
			}
			k := reflect.New(f.Type().Key()).Elem()
			k.SetString("extra")
			m.SetMapIndex(k, reflect.Zero(f.Type().Elem()))
			f.Set(m)
		case reflect.Slice:
			f.Set(reflect.Append(f, reflect.Zero(f.Type().Elem())))
		default:
			t.Fatalf("field %s of kind %s: teach the test to change it", rt.Field(i).Name, f.Kind())
		}
		if base.Equal(&other) {
			t.Errorf("nodes that differ in %s are equal", rt.Field(i).Name)
		}
	}
	a, b := allot.Node{Name: "n"}, allot.Node{Name: "n", Labels: map[string]string{}, Taints: []allot.Taint{}, Capacity: allot.Resources{}}
	if !a.Equal(&b) {
		t.Error("empty maps and lists differ from none")
	}
	// A MIG partition's profiles are compared too.
	c := base
	c.MIG = []allot.MIGPartition{{GPU: 2, Profiles: allot.Resources{"mig-1g.10gb": 6}}}
	if base.Equal(&c) {
		t.Error("nodes whose MIG profiles differ are equal")
	}
}

// TestFlavorEqual: a flavor differing in any one field is not equal, a
// copy with its own maps and lists is, and empty ones are none.
func TestFlavorEqual(t *testing.T) {
	base := allot.Flavor{Name: "f", Spot: true, NodeLabels: map[string]string{"pool": "a"},
		NodeTaints: []allot.Taint{{Key: "k", Effect: "NoSchedule"}}, Tolerations: []allot.Toleration{{Key: "k", Operator: "Exists"}}}
	same := base
	same.NodeLabels = map[string]string{"pool": "a"}
	same.NodeTaints, same.Tolerations = slices.Clone(base.NodeTaints), slices.Clone(base.Tolerations)
	if !base.Equal(&same) {
		t.Fatal("a copy with its own maps and lists differs")
	}
	rt := reflect.TypeOf(base)
	for i := range rt.NumField() {
		other := same
		other.NodeLabels = map[string]string{"pool": "a"}
		f := reflect.ValueOf(&other).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "x")
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Map:
			other.NodeLabels["extra"] = ""
		case reflect.Slice:
			f.Set(reflect.Append(f, reflect.Zero(f.Type().Elem())))
		default:
			t.Fatalf("field %s of kind %s: teach the test to change it", rt.Field(i).Name, f.Kind())
		}
		if base.Equal(&other) {
			t.Errorf("flavors that differ in %s are equal", rt.Field(i).Name)
		}
	}
	a, b := allot.Flavor{Name: "f"}, allot.Flavor{Name: "f", NodeLabels: map[string]string{}, NodeTaints: []allot.Taint{}, Tolerations: []allot.Toleration{}}
	if !a.Equal(&b) {
		t.Error("empty maps and lists differ from none")
	}
}
