package cluster

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/scenario"
	"github.com/allot-sched/allot/kube/kueueconfig"
	"github.com/allot-sched/allot/kube/kueuejob"
)

// The examples a live cluster is checked on: both seeds' Kueue objects
// (training-cq as Kueue accepts it, with a cohort) and a cluster of
// Nodes, Namespaces and Pods.
var examplePaths = []string{"../testdata/seeds/team-a.yaml", "../testdata/seeds/training-cq-fixed.yaml", "../testdata/cluster"}

// watched tells the objects a Cluster's informers read: the examples'
// kinds, Jobs among them.
func watched(v any) bool {
	switch v.(type) {
	case *jobset.JobSet, *rayv1.RayJob:
		return false
	}
	return true
}

// readExamples reads the examples' objects a Cluster watches, and a
// LocalQueue in namespace sandbox for team-a-cq, whose namespaceSelector
// does not select sandbox (until a step labels it).
func readExamples(t testing.TB) []kueueconfig.Object {
	t.Helper()
	objs, err := kueueconfig.ReadPaths(examplePaths...)
	if err != nil {
		t.Fatal(err)
	}
	objs = slices.DeleteFunc(objs, func(o kueueconfig.Object) bool { return !watched(o.Value) })
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "batch", Namespace: "sandbox"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "team-a-cq"}}
	lq.Spec.StopPolicy = ptr.To(kueue.None)
	return append(objs, kueueconfig.Object{Source: "sandbox-batch", Value: lq})
}

// probeJob is a suspended one-pod Job of gpus GPUs through a LocalQueue.
func probeJob(namespace, queue string, gpus int64) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: namespace, Labels: map[string]string{kueueconfig.QueueLabel: queue}},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1), Suspend: ptr.To(true),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "example.com/probe:1", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI), corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
					Limits:   corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)}}}},
				Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}}},
	}
}

// decideJob decides a job on the live snapshot, as a webhook would: the
// request from the live configuration, the decision from the snapshot,
// nothing asked of the API server.
func decideJob(t testing.TB, c *Cluster, job *batchv1.Job) allot.Decision {
	t.Helper()
	var req allot.Request
	if err := c.WithConfig(func(cfg *kueueconfig.Config) error {
		var err error
		req, _, err = kueuejob.Request(cfg, job)
		return err
	}); err != nil {
		t.Fatalf("request: %v", err)
	}
	return allot.Decide(c.Load(), req)
}

// checkAdmission decides two probes after each step: a Job in sandbox is
// never admitted until the namespace carries team-a-cq's selector's label
// (namespaceSelector), and none through training-cq once it is held.
func checkAdmission(t testing.TB, c *Cluster, done map[string]bool) {
	t.Helper()
	d := decideJob(t, c, probeJob("sandbox", "batch", 1))
	if admitted := d.Verdict == allot.VerdictAdmit; admitted != done["namespace label"] {
		t.Errorf("a job in sandbox: %v %v (%s); the namespace labelled: %v", d.Verdict, d.Reason, d.Message, done["namespace label"])
	}
	if done["namespace deleted"] {
		return // nothing is submitted from ml-training any more
	}
	d = decideJob(t, c, probeJob("ml-training", "training", 1))
	if held := d.Reason == allot.QueueHeld; held != done["Hold"] {
		t.Errorf("a job through training-cq: %v %v (%s); held: %v", d.Verdict, d.Reason, d.Message, done["Hold"])
	}
}

// canonical is the form in which a live snapshot and a fresh import of
// the same objects must agree: the scenario file of the description, with
// what a live store accumulates and an import does not left out — its
// clock and version (time only moves forward, and an import's is its
// latest pod's), its fairness history (which moving the clock adds to),
// the resources it tolerates and ignores (a rebuild's, kept while the
// objects that carried them go) and which GPU indices each pod holds
// (Kubernetes does not say; Build gives the lowest free ones in an order
// of its own) —, lists sorted by name.
func canonical(t testing.TB, b allot.Builder) string {
	t.Helper()
	b.Now, b.Version, b.History, b.IgnoredResources = 0, 0, allot.History{}, nil
	for i := range b.Running {
		b.Running[i].AdmittedAt, b.Running[i].SubmittedAt = 0, 0
		for j := range b.Running[i].PodSets {
			b.Running[i].PodSets[j].GPUIndices = nil
		}
	}
	byName := func(a, b string) int { return strings.Compare(a, b) }
	slices.SortFunc(b.Nodes, func(x, y allot.Node) int { return byName(x.Name, y.Name) })
	slices.SortFunc(b.Queues, func(x, y allot.Queue) int { return byName(x.Name, y.Name) })
	slices.SortFunc(b.Cohorts, func(x, y allot.Cohort) int { return byName(x.Name, y.Name) })
	slices.SortFunc(b.Running, func(x, y allot.Workload) int { return byName(x.ID, y.ID) })
	out, err := scenario.Marshal("live", b, nil)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(out)
}

// freshImport is the canonical form of importing objs afresh.
func freshImport(t testing.TB, objs []kueueconfig.Object) string {
	t.Helper()
	c, err := kueueconfig.Import(objs, kueueconfig.Options{})
	if err != nil {
		t.Fatalf("fresh import: %v", err)
	}
	b, _, err := c.Builder()
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return canonical(t, s.Builder())
}

// sameAsImport fails the test when the live snapshot is not a fresh
// import of objs.
func sameAsImport(t testing.TB, what string, snap *allot.Snapshot, objs []kueueconfig.Object) {
	t.Helper()
	if snap == nil {
		t.Fatalf("%s: no snapshot", what)
	}
	got, want := canonical(t, snap.Builder()), freshImport(t, objs)
	if got != want {
		t.Fatalf("%s: the live snapshot differs from a fresh import:\n%s", what, lineDiff(want, got))
	}
}

// lineDiff shows the lines of want and got that differ, in order.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var buf bytes.Buffer
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			buf.WriteString("- import: " + a + "\n+ live:   " + b + "\n")
		}
	}
	return buf.String()
}

// A step changes the cluster: a copy of an object changed, or deleted.
type step struct {
	name   string
	object string // kubectl-style name of the object it starts from
	edit   func(v any) any
	delete bool
	quiet  bool // a change allot does not model: no store event
}

// exampleSteps are the changes both the handler test and the API
// server's test make, in order: each object by its kubectl-style name.
func exampleSteps() []step {
	node := func(f func(*corev1.Node)) func(any) any {
		return func(v any) any { n := v.(*corev1.Node).DeepCopy(); f(n); return n }
	}
	return []step{
		{name: "cordon", object: "nodes/gpu-2", edit: node(func(n *corev1.Node) { n.Spec.Unschedulable = true })},
		{name: "NotReady", object: "nodes/gpu-3", edit: node(func(n *corev1.Node) {
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}
		})},
		{name: "rack label", object: "nodes/gpu-4", edit: node(func(n *corev1.Node) { n.Labels["cloud.example.com/topology-rack"] = "r9" })},
		{name: "label of no level", object: "nodes/gpu-5", edit: node(func(n *corev1.Node) { n.Labels["example.com/owner"] = "ops" }), quiet: true},
		{name: "uncordon", object: "nodes/gpu-2", edit: node(func(n *corev1.Node) { n.Spec.Unschedulable = false })},
		{name: "flavor label off", object: "nodes/gpu-6", edit: node(func(n *corev1.Node) { delete(n.Labels, "nvidia.com/gpu.product") })},
		{name: "pod ends", object: "pods/ml-training/resnet-2", edit: func(v any) any {
			p := v.(*corev1.Pod).DeepCopy()
			p.Status.Phase = corev1.PodSucceeded
			return p
		}},
		{name: "pod bound", object: "pods/ml-training/resnet-2", edit: func(v any) any {
			p := v.(*corev1.Pod).DeepCopy()
			p.Name, p.UID, p.Spec.NodeName, p.Status.Phase = "resnet-3", "", "gpu-7", corev1.PodRunning
			return p
		}},
		{name: "pod deleted", object: "pods/ml-training/resnet-1", delete: true},
		{name: "namespace label", object: "namespaces/sandbox", edit: func(v any) any {
			ns := v.(*corev1.Namespace).DeepCopy()
			ns.Labels = map[string]string{"team": "team-a"}
			return ns
		}},
		{name: "nominal quota", object: "clusterqueues/team-a-cq", edit: func(v any) any {
			cq := v.(*kueue.ClusterQueue).DeepCopy()
			cq.Spec.ResourceGroups[0].Flavors[0].Resources[0].NominalQuota = resource.MustParse("24")
			return cq
		}},
		{name: "Hold", object: "clusterqueues/training-cq", edit: func(v any) any {
			cq := v.(*kueue.ClusterQueue).DeepCopy()
			hold := kueue.Hold
			cq.Spec.StopPolicy = &hold
			return cq
		}},
		{name: "node deleted", object: "nodes/gpu-0", delete: true},
		{name: "local queue deleted", object: "localqueues/team-a/batch", delete: true},
		// Its LocalQueue training still read: the store's goes first.
		{name: "namespace deleted", object: "namespaces/ml-training", delete: true},
	}
}

// world is a set of objects by kubectl-style name, in the order first
// added.
type world struct {
	names []string
	objs  map[string]kueueconfig.Object
	gone  map[string]any // objects deleted, to come back
}

func newWorld(objs []kueueconfig.Object) *world {
	w := &world{objs: map[string]kueueconfig.Object{}, gone: map[string]any{}}
	for _, o := range objs {
		w.set(o.Value)
	}
	return w
}

func (w *world) set(v any) {
	o := kueueconfig.Object{Source: source, Value: v}
	if _, ok := w.objs[o.Name()]; !ok {
		w.names = append(w.names, o.Name())
	}
	w.objs[o.Name()] = o
}

func (w *world) remove(name string) {
	delete(w.objs, name)
	w.names = slices.DeleteFunc(w.names, func(n string) bool { return n == name })
}

func (w *world) list() []kueueconfig.Object {
	out := make([]kueueconfig.Object, 0, len(w.names))
	for _, n := range w.names {
		out = append(out, w.objs[n])
	}
	return out
}
