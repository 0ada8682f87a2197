package cluster

import (
	"context"
	"maps"
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

// TestRebuilds: what no event expresses rebuilds, and only that (a
// ResourceFlavor's tolerations are an event, its finalizer nothing, its
// node labels a rebuild); a store event the store refuses is counted, and
// the snapshot is built again from the objects once they build.
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
	// A pod bound beyond its node's GPUs: SetRunning is refused, and the
	// objects do not build either; the store stays at its last version.
	before = c.Load()
	over := w.objs["pods/ml-training/resnet-0"].Value.(*corev1.Pod).DeepCopy()
	over.Name, over.UID = "squatter", ""
	c.Upsert(over)
	if st := c.Stats(); st.Refused != 1 {
		t.Fatalf("a pod beyond its node's GPUs: %+v, want one refused event", st)
	}
	if c.Load() != before {
		t.Fatal("a refused event published a version")
	}
	// The pod goes: the next change builds again.
	c.Delete(over)
	sameAsImport(t, "the squatter gone", c.Load(), w.list())
	if st := c.Stats(); st.Rebuilds != 2 {
		t.Fatalf("after the squatter went: %+v, want a second build", st)
	}
	// The flavor's node labels change: the labels a snapshot keeps are its
	// flavors', so the cluster is described anew.
	rf = rf.DeepCopy()
	rf.Spec.NodeLabels = maps.Clone(rf.Spec.NodeLabels)
	rf.Spec.NodeLabels["cloud.example.com/pool"] = "training"
	c.Upsert(rf)
	w.set(rf)
	sameAsImport(t, "a flavor's node labels", c.Load(), w.list())
	if st := c.Stats(); st.Rebuilds != 3 || st.Refused != 1 {
		t.Fatalf("after a ResourceFlavor's node labels changed: %+v, want a third build", st)
	}
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
