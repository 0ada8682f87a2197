package cluster

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/kueueconfig"
)

// TestHandlers: the examples' objects through the handlers, then each
// step's change; after each, the live snapshot is a fresh import of the
// objects as they stand, reached by events alone (no rebuild after the
// first snapshot).
func TestHandlers(t *testing.T) {
	events := 0
	c := newCluster(Options{Log: testr.New(t), OnEvent: func(ev allot.Event, err error) {
		events++
		if err != nil {
			t.Errorf("%T refused: %v", ev, err)
		}
	}})
	w := newWorld(readExamples(t))
	for _, o := range w.list() {
		c.Upsert(o.Value)
	}
	if c.Synced() || c.Load() != nil {
		t.Fatal("synced before Start")
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if !c.WaitForSync(ctx) {
		t.Fatal("not synced after Start")
	}
	sameAsImport(t, "synced", c.Load(), w.list())
	done := map[string]bool{}
	checkAdmission(t, c, done)
	for _, s := range exampleSteps() {
		before := events
		o, ok := w.objs[s.object]
		if !ok {
			t.Fatalf("%s: no %s", s.name, s.object)
		}
		if s.delete {
			c.Delete(o.Value)
			w.remove(s.object)
		} else {
			v := s.edit(o.Value)
			c.Upsert(v)
			w.set(v)
		}
		sameAsImport(t, s.name, c.Load(), w.list())
		done[s.name] = true
		checkAdmission(t, c, done)
		if (events == before) != s.quiet {
			t.Errorf("%s: %d store events", s.name, events-before)
		}
	}
	if st := c.Stats(); st.Rebuilds != 1 || st.Refused != 0 || st.Invalid != 0 {
		t.Fatalf("stats %+v, want the first snapshot's build only", st)
	}
}

// TestRebuilds: only the first snapshot is built; every change after it
// is store events, the flavors', topology levels' and a refusal's resync
// among them (a ResourceFlavor's tolerations are SetFlavor, its finalizer
// nothing, its node labels SetFlavor with its nodes, a ResourceFlavor
// added or deleted AddFlavor or RemoveFlavor, the Topology's levels
// SetLevels); a store event the store refuses is counted, and the store
// catches up with the objects by events once they fit. The version goes
// on throughout.
func TestRebuilds(t *testing.T) {
	c := newCluster(Options{Log: testr.New(t)})
	w := newWorld(readExamples(t))
	for _, o := range w.list() {
		c.Upsert(o.Value)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// A ResourceFlavor's tolerations change: one store event, SetFlavor.
	rf := w.objs["resourceflavors/a100-80gb"].Value.(*kueue.ResourceFlavor).DeepCopy()
	rf.Spec.Tolerations = nil
	version := c.Load().Version()
	c.Upsert(rf)
	w.set(rf)
	sameAsImport(t, "a flavor's tolerations", c.Load(), w.list())
	if st := c.Stats(); st.Rebuilds != 1 || st.Refused != 0 || c.Load().Version() != version+1 {
		t.Fatalf("after a ResourceFlavor's tolerations changed: %+v, version %d after %d, want one event", st, c.Load().Version(), version)
	}
	// Kueue's finalizer put on: nothing allot reads, nothing published.
	rf = rf.DeepCopy()
	rf.Finalizers = append(rf.Finalizers, "kueue.x-k8s.io/resource-in-use")
	before := c.Load()
	c.Upsert(rf)
	w.set(rf)
	if st := c.Stats(); st.Rebuilds != 1 || c.Load() != before {
		t.Fatalf("after a ResourceFlavor's finalizer: %+v, want nothing", st)
	}
	// A pod bound beyond its node's GPUs: SetRunning is refused, and again
	// by the resync that follows; the store stays at its last version.
	before = c.Load()
	over := w.objs["pods/ml-training/resnet-0"].Value.(*corev1.Pod).DeepCopy()
	over.Name, over.UID = "squatter", ""
	c.Upsert(over)
	if st := c.Stats(); st.Refused != 2 {
		t.Fatalf("a pod beyond its node's GPUs: %+v, want the event and its resync refused", st)
	}
	if c.Load() != before {
		t.Fatal("a refused event published a version")
	}
	// The pod goes: the next change resyncs, by events.
	c.Delete(over)
	sameAsImport(t, "the squatter gone", c.Load(), w.list())
	check := func(what string) {
		t.Helper()
		sameAsImport(t, what, c.Load(), w.list())
		st := c.Stats()
		if st.Rebuilds != 1 || st.Refused != 2 || c.Load().Version() <= version {
			t.Fatalf("after %s: %+v, version %d after %d, want events alone", what, st, c.Load().Version(), version)
		}
		version = c.Load().Version()
	}
	check("the squatter gone")
	// The flavor's node labels change: its nodes carry the new one.
	for _, name := range w.names {
		if n, ok := w.objs[name].Value.(*corev1.Node); ok && n.Labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-80GB" {
			n = n.DeepCopy()
			n.Labels = maps.Clone(n.Labels)
			n.Labels["cloud.example.com/pool"] = "training"
			c.Upsert(n)
			w.set(n)
		}
	}
	sameAsImport(t, "the nodes labelled", c.Load(), w.list()) // a label no flavor selects by: nothing
	rf = rf.DeepCopy()
	rf.Spec.NodeLabels = maps.Clone(rf.Spec.NodeLabels)
	rf.Spec.NodeLabels["cloud.example.com/pool"] = "training"
	c.Upsert(rf)
	w.set(rf)
	check("a flavor's node labels")
	// A ResourceFlavor added, selecting nodes of the topology, then
	// deleted: AddFlavor, RemoveFlavor, the nodes moved with them.
	added := rf.DeepCopy()
	added.Name, added.UID, added.Finalizers = "a100-pool", "", nil
	added.Spec.NodeLabels = map[string]string{"cloud.example.com/pool": "training", "cloud.example.com/topology-rack": "rack-1"}
	c.Upsert(added)
	w.set(added)
	check("a ResourceFlavor added")
	c.Delete(added)
	w.remove("resourceflavors/a100-pool")
	check("a ResourceFlavor deleted")
	// The Topology loses a level, and gets it back.
	topo := w.objs["topologys/gpu-topology"].Value.(*kueue.Topology).DeepCopy()
	levels := topo.Spec.Levels
	topo.Spec.Levels = slices.Delete(slices.Clone(levels), 0, 1)
	c.Upsert(topo)
	w.set(topo)
	check("a level fewer")
	topo = topo.DeepCopy()
	topo.Spec.Levels = levels
	c.Upsert(topo)
	w.set(topo)
	check("the level back")
}

// TestQuietPodUpdates: a running pod's updates that change nothing allot
// models (a status heartbeat, an annotation, a new resourceVersion)
// apply no store event and publish nothing.
func TestQuietPodUpdates(t *testing.T) {
	events := 0
	c := newCluster(Options{Log: testr.New(t), OnEvent: func(allot.Event, error) { events++ }})
	w := newWorld(readExamples(t))
	for _, o := range w.list() {
		c.Upsert(o.Value)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pod := w.objs["pods/ml-training/resnet-0"].Value.(*corev1.Pod)
	if _, ok := c.Load().Running(gangOf(t, c, pod)); !ok {
		t.Fatal("resnet-0's gang does not run")
	}
	for _, tc := range []struct {
		name string
		edit func(*corev1.Pod)
	}{
		{"heartbeat", func(p *corev1.Pod) {
			p.ResourceVersion += "1"
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue,
				LastProbeTime: metav1.NewTime(time.Unix(1_900_000_000, 0))})
		}},
		{"annotation", func(p *corev1.Pod) { p.Annotations = map[string]string{"example.com/owner": "ops"} }},
		{"container status", func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Ready: true, RestartCount: 1}}
		}},
	} {
		before, n := c.Load(), events
		p := pod.DeepCopy()
		tc.edit(p)
		c.Upsert(p)
		if events != n {
			t.Errorf("%s: %d store events", tc.name, events-n)
		}
		if c.Load() != before {
			t.Errorf("%s: a version was published", tc.name)
		}
	}
}

func gangOf(t *testing.T, c *Cluster, p *corev1.Pod) string {
	t.Helper()
	var id string
	if err := c.WithConfig(func(cfg *kueueconfig.Config) error { id = cfg.GangID(p); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}
