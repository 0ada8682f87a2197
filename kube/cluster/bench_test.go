package cluster

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/kueueconfig"
)

// The benchmark cluster's shape, as bench/cluster.go builds it: racks of
// 16 nodes of 8 GPUs, blocks of 8 racks.
const (
	benchNodesPerRack  = 16
	benchRacksPerBlock = 8
	blockLabel         = "example.com/block"
	rackLabel          = "example.com/rack"
)

// benchObjects are the Kubernetes objects of the benchmark cluster of n
// nodes: a topology-aware ResourceFlavor h100 over a block/rack/hostname
// Topology, a ClusterQueue train whose nominal quota is the whole cluster,
// its LocalQueue and namespace, and every fourth node running a one-pod
// gang of 4 GPUs.
func benchObjects(n int) []any {
	objs := []any{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ml", Labels: map[string]string{"team": "ml"}}},
		&kueue.Topology{ObjectMeta: metav1.ObjectMeta{Name: "t"}, Spec: kueue.TopologySpec{Levels: []kueue.TopologyLevel{
			{NodeLabel: blockLabel}, {NodeLabel: rackLabel}, {NodeLabel: corev1.LabelHostname}}}},
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "h100"}, Spec: kueue.ResourceFlavorSpec{
			NodeLabels: map[string]string{"gpu": "h100"}, TopologyName: ptr.To(kueue.TopologyReference("t"))}},
		benchQueue(n, int64(n)*8),
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "ml"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "train", StopPolicy: ptr.To(kueue.None)}},
	}
	for i := range n {
		objs = append(objs, benchNode(i))
		if i%4 == 0 {
			objs = append(objs, benchPod(fmt.Sprintf("run-%d", i), benchNode(i).Name, 4))
		}
	}
	return objs
}

// benchQueue is the benchmark's ClusterQueue train on n nodes, with a
// nominal quota of gpus GPUs and every node's CPUs.
func benchQueue(n int, gpus int64) *kueue.ClusterQueue {
	return &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "train"}, Spec: kueue.ClusterQueueSpec{
		NamespaceSelector: &metav1.LabelSelector{},
		StopPolicy:        ptr.To(kueue.None),
		// The API server's default: without it Kueue's validation
		// refuses the queue, and every pod runs unmanaged.
		QueueingStrategy: kueue.BestEffortFIFO,
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{"nvidia.com/gpu", "cpu"},
			Flavors: []kueue.FlavorQuotas{{Name: "h100", Resources: []kueue.ResourceQuota{
				{Name: "nvidia.com/gpu", NominalQuota: *resource.NewQuantity(gpus, resource.DecimalSI)},
				{Name: "cpu", NominalQuota: *resource.NewQuantity(int64(n)*192, resource.DecimalSI)}}}}}}}}
}

func benchNode(i int) *corev1.Node {
	rack := i / benchNodesPerRack
	name := fmt.Sprintf("n%d", i)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"gpu": "h100", corev1.LabelHostname: name,
			blockLabel: fmt.Sprintf("b%d", rack/benchRacksPerBlock), rackLabel: fmt.Sprintf("r%d", rack)}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8"), corev1.ResourceCPU: resource.MustParse("192"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
}

func benchPod(name, node string, gpus int64) *corev1.Pod {
	q := *resource.NewQuantity(gpus, resource.DecimalSI)
	return &corev1.Pod{
		// Generation 1, as the API server sets it on a pod it creates.
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", Generation: 1, UID: types.UID("uid-" + name),
			Labels: map[string]string{kueueconfig.QueueLabel: "train"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{"nvidia.com/gpu": q, corev1.ResourceCPU: resource.MustParse("4")},
			Limits:   corev1.ResourceList{"nvidia.com/gpu": q}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

// benchCluster is a synced Cluster of the benchmark cluster, fed through
// its handlers.
func benchCluster(b testing.TB, n int, extra ...any) *Cluster {
	b.Helper()
	c := newCluster(Options{OnEvent: func(ev allot.Event, err error) {
		if err != nil {
			b.Fatalf("%T refused: %v", ev, err)
		}
	}})
	for _, o := range append(benchObjects(n), extra...) {
		c.Upsert(o)
	}
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	if st := c.Stats(); st.Invalid != 0 {
		b.Fatalf("stats %+v: Kueue's validation refused a benchmark object", st)
	}
	return c
}

// podEvents are the pods of the pod events: probe, created bound and
// deleted; pending, bound and done, the informer's updates of one pod the
// scheduler binds, its spec's generation unchanged; and a running pod's
// two status heartbeats, which change nothing allot models.
func podEvents() (probe, pending, bound, done *corev1.Pod, beat [2]*corev1.Pod) {
	probe = benchPod("probe", "n1", 2)
	pending, bound, done = benchPod("bind", "", 2), benchPod("bind", "n1", 2), benchPod("bind", "n1", 2)
	pending.Status.Phase = corev1.PodPending
	done.Status.Phase = corev1.PodSucceeded
	beat = [2]*corev1.Pod{benchPod("run-0", "n0", 4), benchPod("run-0", "n0", 4)}
	for k, p := range beat {
		p.ResourceVersion = fmt.Sprint(k + 1)
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
			LastProbeTime: metav1.Unix(int64(1_900_000_000+k), 0)}}
	}
	return probe, pending, bound, done, beat
}

// BenchmarkEvent: an informer event to a published snapshot, the handler
// called directly on a 10,240-node cluster (a fourth of its nodes running
// a pod): a Node's label allot does not model (described, no store
// event), a Node cordoned and uncordoned (NodeCordon), a Node tainted and
// untainted, its GPUs one fewer and back (SetNode in place), a Node's
// rack label changed and back (SetNode, which renumbers the nodes), a Pod read
// pending then bound to its node (SetRunning) and succeeded (Finish), a
// Pod created bound and deleted (described, SetRunning, then Finish), a
// running Pod's status heartbeat (no store event), a ResourceFlavor
// created and deleted (AddFlavor, RemoveFlavor: every node stays as
// described, no resync), a ResourceFlavor's finalizer added and taken
// away (no store event), a ClusterQueue's
// nominal quota changed and back (SetQueue; the gangs, which do not read
// a quota, stay as described). The events of a pair alternate, one each
// op.
func BenchmarkEvent(b *testing.B) {
	const n = 10_240
	// The objects an informer would hand over are made before the clock
	// runs: the handler's cost is measured, not the test's.
	nodeEventOn := func(i int, edit func(*corev1.Node, bool)) func(*Cluster, int) {
		on, off := benchNode(i), benchNode(i)
		edit(on, true)
		edit(off, false)
		return func(c *Cluster, i int) {
			if i%2 == 0 {
				c.Upsert(on)
			} else {
				c.Upsert(off)
			}
		}
	}
	nodeEvent := func(edit func(*corev1.Node, bool)) func(*Cluster, int) { return nodeEventOn(1, edit) }
	createdDeleted := func(obj any) func(*Cluster, int) {
		return func(c *Cluster, i int) {
			if i%2 == 0 {
				c.Upsert(obj)
			} else {
				c.Delete(obj)
			}
		}
	}
	hasNode := func(name string) func(*allot.Snapshot) error {
		return func(s *allot.Snapshot) error {
			if _, ok := s.Node(name); !ok {
				return fmt.Errorf("no node %s", name)
			}
			return nil
		}
	}
	probe, pending, bound, done, beat := podEvents()
	// The ClusterQueue's nominal GPUs one node fewer and back (SetQueue).
	cqs := [2]*kueue.ClusterQueue{benchQueue(n, int64(n)*8-8), benchQueue(n, int64(n)*8)}
	// A ResourceFlavor no quota names and no topology places on: AddFlavor
	// and RemoveFlavor, the nodes not described again.
	spare := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "spare"}}
	// The flavor h100 with Kueue's finalizer and without: nothing allot
	// reads changes.
	h100s := [2]*kueue.ResourceFlavor{benchObjects(0)[2].(*kueue.ResourceFlavor).DeepCopy(), benchObjects(0)[2].(*kueue.ResourceFlavor)}
	h100s[0].Finalizers = []string{"kueue.x-k8s.io/resource-in-use"}
	// A node more for rack r0, where room waits: its name sorts before
	// the rack's nodes, which move a slot, or after them.
	first, last := benchNode(0), benchNode(0)
	first.Name, first.Labels[corev1.LabelHostname] = "n-extra", "n-extra"
	last.Name, last.Labels[corev1.LabelHostname] = "n99999", "n99999"
	for _, bc := range []struct {
		name  string
		event func(*Cluster, int)
		check func(*allot.Snapshot) error
		quiet bool // no store event: the snapshot published stays
		setup func(*Cluster)
	}{
		{"event=node-label", nodeEvent(func(nd *corev1.Node, on bool) {
			if on {
				nd.Labels["example.com/owner"] = "ops"
			}
		}), nil, true, nil},
		{"event=node-cordon", nodeEvent(func(nd *corev1.Node, on bool) { nd.Spec.Unschedulable = on }), func(s *allot.Snapshot) error {
			if st, _ := s.NodeStatus("n1"); !st.Cordoned {
				return fmt.Errorf("n1 not cordoned after an odd number of events")
			}
			return nil
		}, false, nil},
		{"event=node-taint", nodeEvent(func(nd *corev1.Node, on bool) {
			if on {
				nd.Spec.Taints = []corev1.Taint{{Key: "example.com/maintenance", Effect: corev1.TaintEffectNoSchedule}}
			}
		}), func(s *allot.Snapshot) error {
			if nd, _ := s.Node("n1"); len(nd.Taints) != 1 {
				return fmt.Errorf("n1 has taints %v after an odd number of events", nd.Taints)
			}
			return nil
		}, false, nil},
		{"event=node-gpus", nodeEventOn(3, func(nd *corev1.Node, on bool) {
			if on {
				nd.Status.Allocatable["nvidia.com/gpu"] = resource.MustParse("7")
			}
		}), func(s *allot.Snapshot) error {
			if nd, _ := s.Node("n3"); nd.Capacity["nvidia.com/gpu"] != 7 {
				return fmt.Errorf("n3 has %v after an odd number of events", nd.Capacity)
			}
			return nil
		}, false, nil},
		{"event=node-rack", nodeEvent(func(nd *corev1.Node, on bool) {
			if on {
				nd.Labels[rackLabel] = "r1"
			}
		}), func(s *allot.Snapshot) error {
			if r, _ := s.NodeLabel("n1", rackLabel); r != "r1" {
				return fmt.Errorf("n1 in rack %q", r)
			}
			return nil
		}, false, nil},
		{"event=node-created-deleted-first", createdDeleted(first), hasNode(first.Name), false, nil},
		{"event=node-created-deleted-last", createdDeleted(last), hasNode(last.Name), false, nil},
		{"event=flavor-created-deleted", createdDeleted(spare), func(s *allot.Snapshot) error {
			if !slices.ContainsFunc(s.Flavors(), func(f allot.Flavor) bool { return f.Name == spare.Name }) {
				return fmt.Errorf("no flavor %s", spare.Name)
			}
			return nil
		}, false, nil},
		{"event=flavor-finalizer", func(c *Cluster, i int) { c.Upsert(h100s[i%2]) }, nil, true, nil},
		{"event=pod-bound-succeeded", func(c *Cluster, i int) {
			if i%2 == 0 {
				c.Upsert(bound)
			} else {
				c.Upsert(done)
			}
		}, func(s *allot.Snapshot) error {
			return runsIn(s, "ml/bind", "train")
		}, false, func(c *Cluster) { c.Upsert(pending) }},
		{"event=pod-created-bound", func(c *Cluster, i int) {
			if i%2 == 0 {
				c.Upsert(probe)
			} else {
				c.Delete(probe)
			}
		}, func(s *allot.Snapshot) error {
			return runsIn(s, "ml/probe", "train")
		}, false, nil},
		{"event=clusterqueue-quota", func(c *Cluster, i int) { c.Upsert(cqs[i%2]) }, func(s *allot.Snapshot) error {
			q, _ := s.Queue("train")
			for _, fq := range q.Quota {
				for _, r := range fq.Resources {
					if r.Name == "nvidia.com/gpu" && r.Nominal == int64(n)*8-8 {
						return nil
					}
				}
			}
			return fmt.Errorf("train's quota %+v, want %d nominal GPUs", q.Quota, n*8-8)
		}, false, nil},
		{"event=pod-heartbeat", func(c *Cluster, i int) { c.Upsert(beat[i%2]) }, func(s *allot.Snapshot) error {
			return runsIn(s, "ml/run-0", "train")
		}, true, nil},
	} {
		b.Run(fmt.Sprintf("nodes=%d/%s", n, bc.name), func(b *testing.B) {
			c := benchCluster(b, n)
			if bc.setup != nil {
				bc.setup(c)
			}
			if bc.quiet {
				// The first event may describe anew what the build described.
				bc.event(c, 0)
				bc.event(c, 1)
			}
			published := c.Load()
			timePairs(b, c, bc.event)
			if bc.quiet && c.Load() != published {
				b.Fatal("an event that changes nothing allot models published a version")
			}
			if st := c.Stats(); st.Rebuilds != 1 || st.Refused != 0 {
				b.Fatalf("stats %+v: an event was refused or rebuilt", st)
			}
			if bc.check != nil {
				if err := bc.check(c.Load()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// timePairs times event, one call each op of b with the op's index, and
// ends on the first event of a pair (an even index).
func timePairs(b *testing.B, c *Cluster, event func(*Cluster, int)) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		event(c, i)
		i++
	}
	b.StopTimer()
	if i%2 == 0 {
		event(c, i) // end on the first event of the pair
	}
}

// runsIn checks that a gang runs, in the queue it was submitted to: a
// benchmark of the unmanaged path would measure less than the real one.
func runsIn(s *allot.Snapshot, id, queue string) error {
	w, ok := s.Running(id)
	if !ok {
		return fmt.Errorf("gang %s does not run", id)
	}
	if w.Queue != queue {
		return fmt.Errorf("gang %s runs in queue %q, not %q", id, w.Queue, queue)
	}
	return nil
}

// teams is how many teams BenchmarkQueueEvents adds to the benchmark
// cluster: each a namespace, a ClusterQueue in one cohort selecting it,
// and a LocalQueue there.
const teams = 1_000

// teamQueue is team i's ClusterQueue, of gpus nominal GPUs.
func teamQueue(i int, gpus int64) *kueue.ClusterQueue {
	name := fmt.Sprintf("team-%03d", i)
	return &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{
		CohortName:        "teams",
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": name}},
		StopPolicy:        ptr.To(kueue.None),
		QueueingStrategy:  kueue.BestEffortFIFO,
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{"nvidia.com/gpu", "cpu"},
			Flavors: []kueue.FlavorQuotas{{Name: "h100", Resources: []kueue.ResourceQuota{
				{Name: "nvidia.com/gpu", NominalQuota: *resource.NewQuantity(gpus, resource.DecimalSI)},
				{Name: "cpu", NominalQuota: *resource.NewQuantity(gpus*24, resource.DecimalSI)}}}}}}}}
}

// teamObjects are team i's namespace (labelled env=env), ClusterQueue and
// LocalQueue.
func teamObjects(i int, env string) (*corev1.Namespace, *kueue.ClusterQueue, *kueue.LocalQueue) {
	name := fmt.Sprintf("team-%03d", i)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": name, "env": env}}}
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "batch", Namespace: name},
		Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(name), StopPolicy: ptr.To(kueue.None)}}
	return ns, teamQueue(i, 8), lq
}

// BenchmarkQueueEvents: the configuration's events on the benchmark
// cluster of 1,024 nodes with 1,000 teams more (their namespaces,
// ClusterQueues and LocalQueues): one team's ClusterQueue's nominal
// quota changed and back (SetQueue), its LocalQueue deleted and created
// (RemoveLocalQueue, SetLocalQueue), its namespace relabelled and back
// (SetNamespace), its namespace deleted and created (its LocalQueue
// removed with it and back). The events of a pair alternate, one each
// op; each costs what it touches, not the teams.
func BenchmarkQueueEvents(b *testing.B) {
	const n, team = 1_024, teams / 2
	ns, _, lq := teamObjects(team, "a")
	relabelled, _, _ := teamObjects(team, "b")
	cqs := [2]*kueue.ClusterQueue{teamQueue(team, 16), teamQueue(team, 8)}
	pair := func(add, other any, remove bool) func(*Cluster, int) {
		return func(c *Cluster, i int) {
			switch {
			case i%2 == 1:
				c.Upsert(add)
			case remove:
				c.Delete(add)
			default:
				c.Upsert(other)
			}
		}
	}
	hasLocal := func(want bool) func(*allot.Snapshot) error {
		return func(s *allot.Snapshot) error {
			there := slices.ContainsFunc(s.LocalQueues(), func(l allot.LocalQueue) bool { return l.Namespace == ns.Name && l.Name == lq.Name })
			if there != want {
				return fmt.Errorf("local queue %s/%s there: %t, want %t", ns.Name, lq.Name, there, want)
			}
			return nil
		}
	}
	for _, bc := range []struct {
		name  string
		event func(*Cluster, int)
		check func(*allot.Snapshot) error // after the first event of a pair
	}{
		{"event=clusterqueue-quota", pair(cqs[1], cqs[0], false), func(s *allot.Snapshot) error {
			q, ok := s.Queue(cqs[0].Name)
			if !ok || len(q.Quota) != 1 || q.Quota[0].Resources[0].Nominal != 16 {
				return fmt.Errorf("queue %s: %+v, want 16 nominal GPUs", cqs[0].Name, q.Quota)
			}
			return nil
		}},
		{"event=localqueue-deleted-created", pair(lq, nil, true), hasLocal(false)},
		{"event=namespace-relabelled", pair(ns, relabelled, false), func(s *allot.Snapshot) error {
			if got, ok := s.NamespaceLabels(ns.Name); !ok || got["env"] != "b" {
				return fmt.Errorf("namespace %s: %v, want env=b", ns.Name, got)
			}
			return nil
		}},
		{"event=namespace-deleted-created", pair(ns, nil, true), hasLocal(false)},
	} {
		b.Run(fmt.Sprintf("nodes=%d/teams=%d/%s", n, teams, bc.name), func(b *testing.B) {
			var extra []any
			for i := range teams {
				ns, cq, lq := teamObjects(i, "a")
				extra = append(extra, ns, cq, lq)
			}
			c := benchCluster(b, n, extra...)
			if err := hasLocal(true)(c.Load()); err != nil {
				b.Fatal(err)
			}
			timePairs(b, c, bc.event)
			if st := c.Stats(); st.Rebuilds != 1 || st.Refused != 0 {
				b.Fatalf("stats %+v: an event was refused or rebuilt", st)
			}
			if err := bc.check(c.Load()); err != nil {
				b.Fatal(err)
			}
		})
	}
}
