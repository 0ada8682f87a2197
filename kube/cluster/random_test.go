package cluster

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/allot-sched/allot"

	"github.com/allot-sched/allot/kube/kueueconfig"
)

// TestHandlersRandom: random changes to the example cluster's Nodes and
// Pods (cordons, Ready conditions, rack and flavor labels, nodes deleted
// and back, pods bound where their GPUs are free, ending and deleted),
// after each of which the live snapshot is a fresh import of the objects,
// reached by events alone.
func TestHandlersRandom(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			c := newCluster(Options{})
			w := newWorld(readExamples(t))
			for _, o := range w.list() {
				c.Upsert(o.Value)
			}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			gone := map[string]*corev1.Node{} // deleted nodes, to come back
			pods, most := 0, 0
			for i := range 120 {
				what := randomChange(t, rng, c, w, gone, &pods)
				sameAsImport(t, fmt.Sprintf("step %d: %s", i, what), c.Load(), w.list())
				most = max(most, len(c.Load().RunningIDs()))
			}
			if st := c.Stats(); st.Rebuilds != 1 || st.Refused != 0 {
				t.Fatalf("stats %+v, want events alone", st)
			}
			if pods < 10 || most < 4 {
				t.Fatalf("%d pods bound, at most %d gangs running: the changes did not exercise the gangs", pods, most)
			}
		})
	}
}

// randomChange makes one change through the handlers and to w, and says
// what it was.
func randomChange(t *testing.T, rng *rand.Rand, c *Cluster, w *world, gone map[string]*corev1.Node, pods *int) string {
	t.Helper()
	var nodes, bound []string
	for _, n := range w.names {
		switch v := w.objs[n].Value.(type) {
		case *corev1.Node:
			nodes = append(nodes, n)
		case *corev1.Pod:
			if v.Spec.NodeName != "" {
				bound = append(bound, n)
			}
		}
	}
	upsert := func(v any) { c.Upsert(v); w.set(v) }
	switch k := rng.IntN(10); {
	case k < 4 && len(nodes) > 0:
		name := nodes[rng.IntN(len(nodes))]
		n := w.objs[name].Value.(*corev1.Node).DeepCopy()
		switch rng.IntN(5) {
		case 0:
			n.Spec.Unschedulable = !n.Spec.Unschedulable
		case 1:
			st := corev1.ConditionTrue
			if n.Status.Conditions[0].Status == corev1.ConditionTrue {
				st = corev1.ConditionFalse
			}
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}
		case 2:
			n.Labels["cloud.example.com/topology-rack"] = fmt.Sprintf("r%d", rng.IntN(3))
		case 3:
			if _, ok := n.Labels["nvidia.com/gpu.product"]; ok && rng.IntN(2) == 0 {
				delete(n.Labels, "nvidia.com/gpu.product")
			} else {
				n.Labels["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-80GB"
			}
		case 4:
			c.Delete(n)
			w.remove(name)
			gone[name] = n
			return "delete " + name
		}
		upsert(n)
		return "change " + name
	case k < 5 && len(gone) > 0:
		names := slices.Sorted(maps.Keys(gone))
		name := names[rng.IntN(len(names))]
		upsert(gone[name])
		delete(gone, name)
		return "back " + name
	case k < 8:
		// A pod bound where its GPUs are free: a node of the snapshot, or
		// one outside it (quota only).
		if len(nodes) == 0 {
			return "nothing"
		}
		name := nodes[rng.IntN(len(nodes))]
		node := w.objs[name].Value.(*corev1.Node)
		gpus := int64(1 + rng.IntN(4))
		if free, ok := c.Load().NodeFree(node.Name); ok && free["nvidia.com/gpu"] < gpus {
			return "full " + name
		}
		if strings.HasPrefix(node.Name, "a40g-") && worldFree(w, node) < gpus {
			// Outside the snapshot its pods are quota alone; kept within
			// its GPUs all the same, for a label may bring it in.
			return "full " + name
		}
		if !slices.Contains([]string{"gpu-8", "gpu-9", "a40g-0", "a40g-1"}, node.Name) {
			if _, ok := c.Load().NodeFree(node.Name); !ok {
				return "not placed on " + name
			}
		}
		*pods++
		q := *resource.NewQuantity(gpus, resource.DecimalSI)
		p := &corev1.Pod{Spec: corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": q}, Limits: corev1.ResourceList{"nvidia.com/gpu": q}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		p.Name, p.Namespace = fmt.Sprintf("random-%d", *pods), "ml-training"
		// As the API server has them: a UID, and a generation its
		// spec's changes bump.
		p.UID, p.Generation = types.UID(fmt.Sprintf("uid-random-%d", *pods)), 1
		switch rng.IntN(4) {
		case 0:
			p.Labels = map[string]string{kueueconfig.QueueLabel: "training"}
		case 1:
			p.Labels = map[string]string{kueueconfig.PodGroupNameLabel: fmt.Sprintf("group-%d", rng.IntN(3))}
		case 2:
			p.Labels = map[string]string{kueueconfig.QueueLabel: "training", kueueconfig.WorkloadPriorityClassLabel: "high"}
		}
		if strings.HasPrefix(node.Name, "a40g-") {
			// Through team-a-cq, charging its flavor a100 by the node's
			// labels while the flavor is there.
			p.Namespace, p.Labels = "sandbox", map[string]string{kueueconfig.QueueLabel: "batch"}
		}
		if rng.IntN(3) == 0 {
			p.Spec.PriorityClassName = "batch" // its priority unset: the class's, when there is one
		}
		upsert(p)
		return fmt.Sprintf("bind %s to %s (%d GPUs, labels %v)", p.Name, node.Name, gpus, p.Labels)
	case len(bound) > 0:
		name := bound[rng.IntN(len(bound))]
		p := w.objs[name].Value.(*corev1.Pod).DeepCopy()
		switch rng.IntN(5) {
		case 0:
			c.Delete(p)
			w.remove(name)
			return "delete " + name
		case 1:
			// A status heartbeat: nothing allot reads changes.
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
				LastProbeTime: metav1.Unix(int64(1_900_000_000+rng.IntN(1000)), 0)}}
			upsert(p)
			return "heartbeat " + name
		case 2:
			// Its queue label changed, its spec's generation not.
			if p.Labels[kueueconfig.QueueLabel] == "" {
				p.Labels = map[string]string{kueueconfig.QueueLabel: "training"}
			} else {
				p.Labels = nil
			}
			upsert(p)
			return fmt.Sprintf("relabel %s %v", name, p.Labels)
		case 3:
			// Resized in place to one GPU: a new generation.
			one := *resource.NewQuantity(1, resource.DecimalSI)
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": one}, Limits: corev1.ResourceList{"nvidia.com/gpu": one}}
			p.Generation++
			upsert(p)
			return "resize " + name
		}
		p.Status.Phase = corev1.PodSucceeded
		upsert(p)
		return "end " + name
	}
	return "nothing"
}

// TestHandlersRandomConfig: TestHandlersRandom's changes with, between
// them, the configuration's: ResourceFlavors added (selecting a rack's
// nodes of the topology) and deleted, the quota-only flavor a100 deleted,
// back, given a toleration or none, or a Topology that does not exist or
// none (its nodes' pods, through team-a-cq, charging it or nothing), a flavor's node labels changed (its
// nodes labelled for it or not), the Topology losing its block level and
// getting it back, the quotas covering one resource more and no more, the
// queues and priority classes the running gangs read deleted, back and
// changed (queue). After each step the live snapshot is a fresh import of
// the objects, reached by events alone: one build, nothing refused.
func TestHandlersRandomConfig(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 23))
			c := newCluster(Options{OnEvent: func(ev allot.Event, err error) {
				if err != nil {
					t.Logf("%T refused: %v", ev, err)
				}
			}})
			w := newWorld(readExamples(t))
			for _, o := range w.list() {
				c.Upsert(o.Value)
			}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			gone := map[string]*corev1.Node{}
			pods, config := 0, map[string]int{}
			for i := range 250 {
				what := ""
				if rng.IntN(3) == 0 {
					what = randomConfig(rng, c, w)
					config[strings.Fields(what)[0]]++
				} else {
					what = randomChange(t, rng, c, w, gone, &pods)
				}
				sameAsImport(t, fmt.Sprintf("step %d: %s", i, what), c.Load(), w.list())
			}
			if st := c.Stats(); st.Rebuilds != 1 || st.Refused != 0 {
				t.Fatalf("stats %+v, want events alone", st)
			}
			for _, k := range []string{"add", "delete", "relabel", "levels", "label", "resources", "queue", "flavor"} {
				if config[k] == 0 {
					t.Fatalf("config changes %v: no %s", config, k)
				}
			}
		})
	}
}

// randomConfig makes one change of the configuration through the
// handlers and to w, and says what it was.
func randomConfig(rng *rand.Rand, c *Cluster, w *world) string {
	upsert := func(v any) { c.Upsert(v); w.set(v) }
	var added []string
	for _, name := range w.names {
		if strings.HasPrefix(name, "resourceflavors/pool-") {
			added = append(added, name)
		}
	}
	base := w.objs["resourceflavors/a100-80gb"].Value.(*kueue.ResourceFlavor)
	switch k := rng.IntN(9); {
	case k == 8:
		return "flavor " + randomQuotaFlavor(rng, c, w)
	case k >= 6:
		return "queue " + randomQueueChange(rng, c, w)
	case k == 0 && len(added) < 3:
		rf := base.DeepCopy()
		rf.Name = fmt.Sprintf("pool-%d", rng.IntN(100))
		rf.Spec.NodeLabels = map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
			"cloud.example.com/topology-rack": fmt.Sprintf("r%d", rng.IntN(3))}
		upsert(rf)
		return "add " + rf.Name
	case k <= 1 && len(added) > 0:
		name := added[rng.IntN(len(added))]
		c.Delete(w.objs[name].Value)
		w.remove(name)
		return "delete " + name
	case k == 2:
		rf := base.DeepCopy()
		rf.Spec.NodeLabels = maps.Clone(rf.Spec.NodeLabels)
		if _, ok := rf.Spec.NodeLabels["cloud.example.com/pool"]; ok {
			delete(rf.Spec.NodeLabels, "cloud.example.com/pool")
		} else {
			rf.Spec.NodeLabels["cloud.example.com/pool"] = "training"
		}
		upsert(rf)
		return fmt.Sprintf("relabel a100-80gb %v", rf.Spec.NodeLabels)
	case k == 4 && w.objs["clusterqueues/training-cq"].Value != nil:
		// The quotas come to cover ephemeral-storage, which the nodes
		// carry, or cover it no more.
		cq := w.objs["clusterqueues/training-cq"].Value.(*kueue.ClusterQueue).DeepCopy()
		rg := &cq.Spec.ResourceGroups[0]
		if len(rg.CoveredResources) == 3 {
			rg.CoveredResources = append(rg.CoveredResources, corev1.ResourceEphemeralStorage)
			for i := range rg.Flavors {
				rg.Flavors[i].Resources = append(rg.Flavors[i].Resources, kueue.ResourceQuota{Name: corev1.ResourceEphemeralStorage, NominalQuota: resource.MustParse("100Ti")})
			}
		} else {
			rg.CoveredResources = rg.CoveredResources[:3]
			for i := range rg.Flavors {
				rg.Flavors[i].Resources = rg.Flavors[i].Resources[:3]
			}
		}
		upsert(cq)
		return fmt.Sprintf("resources %v", rg.CoveredResources)
	case k == 3:
		topo := w.objs["topologys/gpu-topology"].Value.(*kueue.Topology).DeepCopy()
		if len(topo.Spec.Levels) == 3 {
			topo.Spec.Levels = topo.Spec.Levels[1:]
		} else {
			topo.Spec.Levels = append([]kueue.TopologyLevel{{NodeLabel: "cloud.example.com/topology-block"}}, topo.Spec.Levels...)
		}
		upsert(topo)
		return fmt.Sprintf("levels %v", topo.Spec.Levels)
	}
	// A node labelled for the pool, or not.
	var nodes []string
	for _, name := range w.names {
		if _, ok := w.objs[name].Value.(*corev1.Node); ok {
			nodes = append(nodes, name)
		}
	}
	if len(nodes) == 0 {
		return "label nothing"
	}
	name := nodes[rng.IntN(len(nodes))]
	n := w.objs[name].Value.(*corev1.Node).DeepCopy()
	n.Labels = maps.Clone(n.Labels)
	if n.Labels["cloud.example.com/pool"] != "" {
		delete(n.Labels, "cloud.example.com/pool")
	} else {
		n.Labels["cloud.example.com/pool"] = "training"
	}
	upsert(n)
	return "label " + name
}

// worldFree is how many of a node's GPUs w's active pods bound to it
// leave.
func worldFree(w *world, node *corev1.Node) int64 {
	free := node.Status.Allocatable.Name("nvidia.com/gpu", resource.DecimalSI).Value()
	for _, name := range w.names {
		if p, ok := w.objs[name].Value.(*corev1.Pod); ok && p.Spec.NodeName == node.Name &&
			p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			free -= p.Spec.Containers[0].Resources.Requests.Name("nvidia.com/gpu", resource.DecimalSI).Value()
		}
	}
	return free
}

// randomQuotaFlavor deletes the ResourceFlavor a100, which team-a-cq
// names and no node is placed under (it has no topology), brings it back,
// or gives it a toleration or takes it away, and says which: changes that
// leave every node described as it was, the queue held or freed, the pods
// on its nodes charging it or not.
func randomQuotaFlavor(rng *rand.Rand, c *Cluster, w *world) string {
	v := w.objs["resourceflavors/a100"].Value
	if v == nil {
		rf := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "a100"},
			Spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"}}}
		c.Upsert(rf)
		w.set(rf)
		return "a100 back"
	}
	if rng.IntN(2) == 0 {
		c.Delete(v)
		w.remove("resourceflavors/a100")
		return "a100 deleted"
	}
	rf := v.(*kueue.ResourceFlavor).DeepCopy()
	if rng.IntN(2) == 0 {
		// Topology-aware on a Topology that does not exist: team-a-cq
		// held, no node placed under it, its pods charging nothing.
		if rf.Spec.TopologyName == nil {
			rf.Spec.TopologyName = ptr.To(kueue.TopologyReference("missing"))
		} else {
			rf.Spec.TopologyName = nil
		}
		c.Upsert(rf)
		w.set(rf)
		return fmt.Sprintf("a100 topologyName %v", rf.Spec.TopologyName != nil)
	}
	if len(rf.Spec.Tolerations) == 0 {
		rf.Spec.Tolerations = []corev1.Toleration{{Key: "example.com/spot", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	} else {
		rf.Spec.Tolerations = nil
	}
	c.Upsert(rf)
	w.set(rf)
	return fmt.Sprintf("a100 tolerations %d", len(rf.Spec.Tolerations))
}

// randomQueueChange makes one change to the queues, the namespaces and
// what the running gangs read of them and of the priority classes, and
// says what it was: the LocalQueue training or the ClusterQueue
// training-cq deleted or back, the WorkloadPriorityClass high's value
// changed, the PriorityClass batch (which some pods name, their priority
// unset) added, made the global default or not, changed or deleted; the
// namespace sandbox or its LocalQueue batch deleted or back, sandbox
// labelled for team-a-cq's selector or not, training-cq moved from the
// cohort research to one of its own (named by it alone) and back.
func randomQueueChange(rng *rand.Rand, c *Cluster, w *world) string {
	upsert := func(v any) { c.Upsert(v); w.set(v) }
	toggle := func(name string) string {
		if v, ok := w.gone[name]; ok {
			delete(w.gone, name)
			upsert(v)
			return "back " + name
		}
		v := w.objs[name].Value
		c.Delete(v)
		w.remove(name)
		w.gone[name] = v
		return "delete " + name
	}
	switch rng.IntN(8) {
	case 7:
		o, ok := w.objs["clusterqueues/training-cq"]
		if !ok {
			return "move nothing"
		}
		cq := o.Value.(*kueue.ClusterQueue).DeepCopy()
		cq.Spec.CohortName = map[kueue.CohortReference]kueue.CohortReference{"research": "training-only"}[cq.Spec.CohortName]
		if cq.Spec.CohortName == "" {
			cq.Spec.CohortName = "research"
		}
		upsert(cq)
		return fmt.Sprintf("move training-cq to cohort %s", cq.Spec.CohortName)
	case 4:
		return toggle("namespaces/sandbox")
	case 5:
		return toggle("localqueues/sandbox/batch")
	case 6:
		o, ok := w.objs["namespaces/sandbox"]
		if !ok {
			return "relabel nothing"
		}
		ns := o.Value.(*corev1.Namespace).DeepCopy()
		if ns.Labels["team"] == "team-a" {
			delete(ns.Labels, "team")
		} else {
			ns.Labels = maps.Clone(ns.Labels)
			if ns.Labels == nil {
				ns.Labels = map[string]string{}
			}
			ns.Labels["team"] = "team-a"
		}
		upsert(ns)
		return fmt.Sprintf("relabel sandbox %v", ns.Labels)
	case 0:
		return toggle("localqueues/ml-training/training")
	case 1:
		return toggle("clusterqueues/training-cq")
	case 2:
		wpc := w.objs["workloadpriorityclasses/high"].Value.(*kueue.WorkloadPriorityClass).DeepCopy()
		wpc.Value = 1000 + int32(rng.IntN(3))*500
		upsert(wpc)
		return fmt.Sprintf("high = %d", wpc.Value)
	}
	const name = "priorityclasses/batch"
	if o, ok := w.objs[name]; ok && rng.IntN(3) == 0 {
		c.Delete(o.Value)
		w.remove(name)
		return "delete " + name
	}
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "batch"}, Value: int32(10 + rng.IntN(3)*10), GlobalDefault: rng.IntN(2) == 0}
	upsert(pc)
	return fmt.Sprintf("%s = %d (global default %t)", name, pc.Value, pc.GlobalDefault)
}
