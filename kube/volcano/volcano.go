package volcano

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/kueueconfig"
)

// Errors, wrapped with the object and field at fault.
var (
	ErrInvalid        = errors.New("volcano: invalid object")
	ErrNotExpressible = errors.New("volcano: not expressible in allot")
)

// Group is Volcano's API group and version of Queue and PodGroup.
const Group = "scheduling.volcano.sh/v1beta1"

// Root is Volcano's root queue: every queue without a parent is its child.
const Root = "root"

// Queue is what allot reads of a Volcano Queue.
type Queue struct {
	Name string
	// Weight is spec.weight (Volcano's default 1).
	Weight int32
	// Capability is spec.capability, Guarantee spec.guarantee.resource,
	// in allot's base units.
	Capability, Guarantee allot.Resources
	// Reclaimable is spec.reclaimable (Volcano's default true).
	Reclaimable bool
	// Parent is spec.parent (hierarchical queues); empty is the root.
	Parent string
}

// PodGroup is what allot reads of a Volcano PodGroup.
type PodGroup struct {
	Name, Namespace   string
	MinMember         int32
	MinTaskMember     map[string]int32
	MinResources      allot.Resources
	Queue             string
	PriorityClassName string
}

// Warning names a field allot decides otherwise than Volcano would.
type Warning struct {
	Object, Field, Message string
}

func (w Warning) String() string { return w.Object + ": " + w.Field + ": " + w.Message }

// Decode reads the Queues and PodGroups of YAML or JSON documents (a
// document may be a List); other kinds are an error.
func Decode(docs [][]byte) ([]Queue, []PodGroup, error) {
	var qs []Queue
	var pgs []PodGroup
	var read func(u *unstructured.Unstructured) error
	read = func(u *unstructured.Unstructured) error {
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return fmt.Errorf("%w: %v", ErrInvalid, err)
			}
			for i := range list.Items {
				if err := read(&list.Items[i]); err != nil {
					return err
				}
			}
			return nil
		}
		switch u.GetAPIVersion() + "/" + u.GetKind() {
		case Group + "/Queue":
			q, err := DecodeQueue(u)
			if err != nil {
				return err
			}
			qs = append(qs, q)
		case Group + "/PodGroup":
			pg, err := DecodePodGroup(u)
			if err != nil {
				return err
			}
			pgs = append(pgs, pg)
		default:
			return fmt.Errorf("%w: %s %s %q is neither a Queue nor a PodGroup of %s", ErrInvalid, u.GetAPIVersion(), u.GetKind(), u.GetName(), Group)
		}
		return nil
	}
	for i, d := range docs {
		var obj map[string]any
		if err := yaml.Unmarshal(d, &obj); err != nil {
			return nil, nil, fmt.Errorf("%w: document %d: %v", ErrInvalid, i, err)
		}
		if obj == nil {
			continue
		}
		if err := read(&unstructured.Unstructured{Object: obj}); err != nil {
			return nil, nil, err
		}
	}
	return qs, pgs, nil
}

// DecodeQueue reads a Queue's fields.
func DecodeQueue(u *unstructured.Unstructured) (Queue, error) {
	obj := "queues/" + u.GetName()
	q := Queue{Name: u.GetName(), Weight: 1, Reclaimable: true}
	if q.Name == "" {
		return Queue{}, fmt.Errorf("%w: a Queue: metadata.name: empty", ErrInvalid)
	}
	if w, ok, err := unstructured.NestedFieldNoCopy(u.Object, "spec", "weight"); err != nil || ok {
		n, isInt := asInt(w)
		if err != nil || !isInt || n < 1 || n > 1<<16 {
			return Queue{}, fmt.Errorf("%w: %s: spec.weight: %v is not a weight of 1 to 65536", ErrInvalid, obj, w)
		}
		q.Weight = int32(n)
	}
	var err error
	if q.Capability, err = resources(u.Object, obj, "spec", "capability"); err != nil {
		return Queue{}, err
	}
	if q.Guarantee, err = resources(u.Object, obj, "spec", "guarantee", "resource"); err != nil {
		return Queue{}, err
	}
	if r, ok, err := unstructured.NestedBool(u.Object, "spec", "reclaimable"); err != nil {
		return Queue{}, fmt.Errorf("%w: %s: spec.reclaimable: %v", ErrInvalid, obj, err)
	} else if ok {
		q.Reclaimable = r
	}
	if p, _, err := unstructured.NestedString(u.Object, "spec", "parent"); err != nil {
		return Queue{}, fmt.Errorf("%w: %s: spec.parent: %v", ErrInvalid, obj, err)
	} else if p != Root {
		q.Parent = p
	}
	return q, nil
}

// DecodePodGroup reads a PodGroup's fields.
func DecodePodGroup(u *unstructured.Unstructured) (PodGroup, error) {
	obj := "podgroups/" + u.GetNamespace() + "/" + u.GetName()
	pg := PodGroup{Name: u.GetName(), Namespace: u.GetNamespace(), Queue: "default"}
	if m, ok, err := unstructured.NestedFieldNoCopy(u.Object, "spec", "minMember"); err != nil || ok {
		n, isInt := asInt(m)
		if err != nil || !isInt || n < 0 || n > 1<<20 {
			return PodGroup{}, fmt.Errorf("%w: %s: spec.minMember: %v is not a count", ErrInvalid, obj, m)
		}
		pg.MinMember = int32(n)
	}
	if mt, ok, err := unstructured.NestedMap(u.Object, "spec", "minTaskMember"); err != nil {
		return PodGroup{}, fmt.Errorf("%w: %s: spec.minTaskMember: %v", ErrInvalid, obj, err)
	} else if ok {
		pg.MinTaskMember = map[string]int32{}
		for task, v := range mt {
			n, isInt := asInt(v)
			if !isInt || n < 0 || n > 1<<20 {
				return PodGroup{}, fmt.Errorf("%w: %s: spec.minTaskMember.%s: %v is not a count", ErrInvalid, obj, task, v)
			}
			pg.MinTaskMember[task] = int32(n)
		}
	}
	var err error
	if pg.MinResources, err = resources(u.Object, obj, "spec", "minResources"); err != nil {
		return PodGroup{}, err
	}
	for _, f := range []struct {
		path []string
		to   *string
	}{{[]string{"spec", "queue"}, &pg.Queue}, {[]string{"spec", "priorityClassName"}, &pg.PriorityClassName}} {
		if v, ok, err := unstructured.NestedString(u.Object, f.path...); err != nil {
			return PodGroup{}, fmt.Errorf("%w: %s: spec.%s: %v", ErrInvalid, obj, f.path[1], err)
		} else if ok && v != "" {
			*f.to = v
		}
	}
	return pg, nil
}

// asInt reads a whole number as YAML or JSON decoding gives it.
func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case float64:
		return int64(n), n == float64(int64(n))
	}
	return 0, false
}

// resources reads a ResourceList at path in allot's base units (cpu in
// millicores, every other resource whole), nil when absent.
func resources(o map[string]any, obj string, path ...string) (allot.Resources, error) {
	m, ok, err := unstructured.NestedMap(o, path...)
	field := strings.Join(path, ".")
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s: %v", ErrInvalid, obj, field, err)
	}
	if !ok {
		return nil, nil
	}
	out := allot.Resources{}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		q, err := resource.ParseQuantity(fmt.Sprint(m[name]))
		if err != nil || q.Sign() < 0 {
			return nil, fmt.Errorf("%w: %s: %s.%s: %v is not a quantity", ErrInvalid, obj, field, name, m[name])
		}
		out[name] = kueueconfig.BaseUnits(corev1.ResourceName(name), q)
	}
	return out, nil
}
