package kueueconfig_test

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

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
