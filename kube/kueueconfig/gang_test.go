package kueueconfig_test

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/kueueconfig"
)

// TestRunningGang: each gang described alone (RunningGang, as a live
// cluster describes one pod's change) is what Running describes, and a
// removed pod leaves its gang, and the gang and node indexes, as if it had
// never been added.
func TestRunningGang(t *testing.T) {
	objs, err := kueueconfig.ReadPaths("../testdata/seeds/team-a.yaml", "../testdata/seeds/training-cq-fixed.yaml", "../testdata/cluster")
	if err != nil {
		t.Fatal(err)
	}
	c, err := kueueconfig.Import(objs, kueueconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string) {
		t.Helper()
		all, _, err := c.Running()
		if err != nil {
			t.Fatal(err)
		}
		var alone []allot.Workload
		for _, id := range c.Gangs() {
			w, ok, _, err := c.RunningGang(id)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				alone = append(alone, w)
			}
		}
		if !reflect.DeepEqual(all, alone) {
			t.Fatalf("%s: RunningGang, gang by gang:\n%+v\nRunning:\n%+v", what, alone, all)
		}
	}
	check("imported")
	if len(c.Gangs()) == 0 {
		t.Fatal("the cluster has no gangs")
	}
	var pod *corev1.Pod
	for _, o := range objs {
		if p, ok := o.Value.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			pod = p
			break
		}
	}
	gangs, onNode := len(c.Gangs()), len(c.GangsOn(pod.Spec.NodeName))
	if err := c.Remove(pod); err != nil {
		t.Fatal(err)
	}
	check("a pod removed")
	if err := c.Add(kueueconfig.Object{Value: pod}); err != nil {
		t.Fatal(err)
	}
	check("the pod back")
	if len(c.Gangs()) != gangs || len(c.GangsOn(pod.Spec.NodeName)) != onNode {
		t.Fatalf("indexes: %d gangs, %d on %s; want %d and %d", len(c.Gangs()), len(c.GangsOn(pod.Spec.NodeName)), pod.Spec.NodeName, gangs, onNode)
	}
}

// TestGangReads: a gang reads the LocalQueue its pods name, that one's
// ClusterQueue and its WorkloadPriorityClass; what it reads of them (View)
// changes with the flavors the ClusterQueue lists and the class's value,
// not with a quota.
func TestGangReads(t *testing.T) {
	objs, err := kueueconfig.ReadPaths("../testdata/seeds/training-cq-fixed.yaml", "../testdata/cluster")
	if err != nil {
		t.Fatal(err)
	}
	c, err := kueueconfig.Import(objs, kueueconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var r kueueconfig.Reads
	for _, id := range c.Gangs() {
		// The description reads what GangReads says it does.
		var described kueueconfig.Reads
		if _, _, _, err := c.RunningGangReads(id, &described); err != nil || described != c.GangReads(id) {
			t.Fatalf("gang %s: described reading %+v (%v), GangReads %+v", id, described, err, c.GangReads(id))
		}
		if r = c.GangReads(id); r.LocalQueue != "" && r.WorkloadPriorityClass != "" {
			break
		}
	}
	// Its pods' priority is unset: the global default's may count.
	want := kueueconfig.Reads{Namespace: "ml-training", LocalQueue: "training", ClusterQueue: "training-cq",
		WorkloadPriorityClass: r.WorkloadPriorityClass, DefaultPriority: true}
	if r.WorkloadPriorityClass == "" || r != want {
		t.Fatalf("reads %+v, want %+v with a WorkloadPriorityClass", r, want)
	}
	var keys []kueueconfig.Key
	for k := range r.Objects() {
		keys = append(keys, k)
	}
	if len(keys) != 4 || keys[1] != (kueueconfig.Key{Kind: "ClusterQueue", Name: "training-cq"}) || keys[3] != kueueconfig.DefaultPriorityKey {
		t.Fatalf("objects %v", keys)
	}
	var cq *kueue.ClusterQueue
	var wpc *kueue.WorkloadPriorityClass
	for _, o := range objs {
		switch v := o.Value.(type) {
		case *kueue.ClusterQueue:
			cq = v
		case *kueue.WorkloadPriorityClass:
			if v.Name == r.WorkloadPriorityClass {
				wpc = v
			}
		}
	}
	views := func() []string {
		var out []string
		for _, k := range keys {
			out = append(out, c.View(k))
		}
		return out
	}
	before := views()
	if slices.Contains(before, "") {
		t.Fatalf("views %q: an object read is missing", before)
	}
	change := func(what string, v any, same bool) {
		t.Helper()
		if err := c.Add(kueueconfig.Object{Source: "test", Value: v}); err != nil {
			t.Fatal(err)
		}
		if now := views(); slices.Equal(now, before) != same {
			t.Fatalf("%s: views %q, before %q", what, now, before)
		}
	}
	more := cq.DeepCopy()
	q := &more.Spec.ResourceGroups[0].Flavors[0].Resources[0]
	q.NominalQuota.Add(resource.MustParse("8"))
	change("a quota", more, true)
	other := more.DeepCopy()
	other.Spec.ResourceGroups[0].Flavors[0].Name = "other-flavor"
	change("the flavor listed", other, false)
	change("the flavor back", more, true)
	wpc = wpc.DeepCopy()
	wpc.Value++
	change("the class's value", wpc, false)
}
