package guard_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/allot-sched/allot/bench"
	"github.com/allot-sched/allot/kube/guard"
	"github.com/allot-sched/allot/kube/kueueconfig"
)

// benchCluster is the project's benchmark cluster (bench.Cluster: n
// 8-GPU nodes, 16 a rack, 8 racks a block, fragmented by its running
// workloads) as Kueue's objects: a topology-aware flavor h100, one
// ClusterQueue train over all of it with a LocalQueue q in namespace ml,
// the Nodes, and a bound pod per running workload.
func benchCluster(tb testing.TB, n int) *guard.Static {
	tb.Helper()
	b := bench.Cluster(n, true)
	gpus := int64(8 * n)
	objs := []kueueconfig.Object{
		{Version: "kueue.x-k8s.io/v1beta2", Value: &kueue.Topology{TypeMeta: metav1.TypeMeta{APIVersion: "kueue.x-k8s.io/v1beta2", Kind: "Topology"}, ObjectMeta: metav1.ObjectMeta{Name: "t"},
			Spec: kueue.TopologySpec{Levels: []kueue.TopologyLevel{{NodeLabel: "block"}, {NodeLabel: "rack"}, {NodeLabel: corev1.LabelHostname}}}}},
		{Version: "kueue.x-k8s.io/v1beta2", Value: &kueue.ResourceFlavor{TypeMeta: metav1.TypeMeta{APIVersion: "kueue.x-k8s.io/v1beta2", Kind: "ResourceFlavor"}, ObjectMeta: metav1.ObjectMeta{Name: "h100"},
			Spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"gpu": "h100"}, TopologyName: ptr.To(kueue.TopologyReference("t"))}}},
		{Version: "kueue.x-k8s.io/v1beta2", Value: &kueue.ClusterQueue{TypeMeta: metav1.TypeMeta{APIVersion: "kueue.x-k8s.io/v1beta2", Kind: "ClusterQueue"}, ObjectMeta: metav1.ObjectMeta{Name: "train"},
			Spec: kueue.ClusterQueueSpec{NamespaceSelector: &metav1.LabelSelector{}, ResourceGroups: []kueue.ResourceGroup{{
				CoveredResources: []corev1.ResourceName{"nvidia.com/gpu", corev1.ResourceCPU, corev1.ResourceMemory},
				Flavors: []kueue.FlavorQuotas{{Name: "h100", Resources: []kueue.ResourceQuota{
					{Name: "nvidia.com/gpu", NominalQuota: *resource.NewQuantity(gpus, resource.DecimalSI)},
					{Name: corev1.ResourceCPU, NominalQuota: *resource.NewQuantity(int64(n)*192, resource.DecimalSI)},
					{Name: corev1.ResourceMemory, NominalQuota: *resource.NewQuantity(int64(n)<<41, resource.BinarySI)},
				}}},
			}}}}},
		{Version: "v1", Value: &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "ml", Labels: map[string]string{corev1.LabelMetadataName: "ml"}}}},
		{Version: "kueue.x-k8s.io/v1beta2", Value: &kueue.LocalQueue{TypeMeta: metav1.TypeMeta{APIVersion: "kueue.x-k8s.io/v1beta2", Kind: "LocalQueue"}, ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ml"},
			Spec: kueue.LocalQueueSpec{ClusterQueue: "train"}}},
	}
	for _, nd := range b.Nodes {
		objs = append(objs, kueueconfig.Object{Version: "v1", Value: &corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{Name: nd.Name, Labels: map[string]string{"gpu": "h100", "block": nd.Labels["block"], "rack": nd.Labels["rack"], corev1.LabelHostname: nd.Name}},
			Status: corev1.NodeStatus{
				Allocatable: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8"), corev1.ResourceCPU: resource.MustParse("192"), corev1.ResourceMemory: resource.MustParse("2Ti"), corev1.ResourcePods: resource.MustParse("110")},
				Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			},
		}})
	}
	for _, w := range b.Running {
		ps := w.PodSets[0]
		objs = append(objs, kueueconfig.Object{Version: "v1", Value: &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: w.ID, Namespace: "ml", Labels: map[string]string{kueueconfig.QueueLabel: "q"}},
			Spec: corev1.PodSpec{NodeName: ps.Nodes[0], Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				"nvidia.com/gpu": *resource.NewQuantity(ps.PerPod["gpu"], resource.DecimalSI), corev1.ResourceCPU: resource.MustParse("4")}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		}})
	}
	// Through JSON, as from the API server: decoding applies Kueue's
	// defaults.
	var docs bytes.Buffer
	for _, o := range objs {
		js, err := json.Marshal(o.Value)
		if err != nil {
			tb.Fatal(err)
		}
		docs.Write(js)
		docs.WriteString("\n---\n")
	}
	decoded, err := kueueconfig.Decode("bench", docs.Bytes())
	if err != nil {
		tb.Fatal(err)
	}
	c, err := kueueconfig.Import(decoded, kueueconfig.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	src, _, err := guard.NewStatic(c)
	if err != nil {
		tb.Fatal(err)
	}
	return src
}

// gangReview is the AdmissionReview of a Job of pods 8-GPU pods that
// requires one rack, named name.
func gangReview(tb testing.TB, name string, pods int32) []byte {
	tb.Helper()
	j := batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", Labels: map[string]string{kueueconfig.QueueLabel: "q"}},
		Spec: batchv1.JobSpec{Parallelism: &pods, Completions: &pods, Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{kueue.PodSetRequiredTopologyAnnotation: "rack"}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "train", Image: "example.com/train:1",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8"), corev1.ResourceCPU: resource.MustParse("32")}}}}},
		}},
	}
	obj, err := json.Marshal(&j)
	if err != nil {
		tb.Fatal(err)
	}
	r := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: types.UID("uid-" + name), Operation: admissionv1.Create, Namespace: "ml", Name: name,
			Kind: metav1.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, Object: runtime.RawExtension{Raw: obj}},
	}
	out, err := json.Marshal(&r)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// discard is a ResponseWriter that keeps the last answer.
type discard struct {
	h    http.Header
	body bytes.Buffer
	code int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return d.body.Write(p) }
func (d *discard) WriteHeader(code int)        { d.code = code }

var (
	benchOnce sync.Once
	benchSrc  *guard.Static
)

// BenchmarkReview is the handler on the 10,240-node benchmark cluster:
// the AdmissionReview's JSON decoded, the Job turned into its gang's
// request, decided, the answer encoded. path=decide names a new Job every
// time (no cache hit); path=cached sends one Job's review again, as the
// rest of a gang's pods are answered. p99-ns is the 99th percentile of
// the iterations' times.
func BenchmarkReview(b *testing.B) {
	benchOnce.Do(func() { benchSrc = benchCluster(b, 10240) })
	for _, c := range []struct {
		path  string
		names int
	}{{"decide", 1 << 14}, {"cached", 1}} {
		b.Run(fmt.Sprintf("nodes=10240/gang=8x8/path=%s", c.path), func(b *testing.B) {
			g, err := guard.New(benchSrc, guard.Options{})
			if err != nil {
				b.Fatal(err)
			}
			reviews := make([][]byte, c.names)
			for i := range reviews {
				reviews[i] = gangReview(b, fmt.Sprintf("gang-%d", i), 8)
			}
			body := bytes.NewReader(nil)
			req, err := http.NewRequest(http.MethodPost, "/validate", nil)
			if err != nil {
				b.Fatal(err)
			}
			w := &discard{h: http.Header{}}
			times := make([]time.Duration, 0, 1<<16)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				body.Reset(reviews[i%len(reviews)])
				req.Body, req.ContentLength = io.NopCloser(body), int64(body.Len())
				w.body.Reset()
				start := time.Now()
				g.ServeHTTP(w, req)
				if len(times) < cap(times) {
					times = append(times, time.Since(start))
				}
				i++
			}
			b.StopTimer()
			var out admissionv1.AdmissionReview
			if err := json.Unmarshal(w.body.Bytes(), &out); err != nil || out.Response == nil || !out.Response.Allowed || len(out.Response.Warnings) > 0 {
				b.Fatalf("answer %s (%v): want the gang allowed", w.body.Bytes(), err)
			}
			slices.Sort(times)
			if len(times) > 0 {
				b.ReportMetric(float64(times[(len(times)*99)/100].Nanoseconds()), "p99-ns")
			}
		})
	}
}

// The benchmark's gang fits the cluster: the handler's answer is a
// decision, not a failure.
func TestBenchmarkGangFits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the 10,240-node cluster")
	}
	benchOnce.Do(func() { benchSrc = benchCluster(t, 10240) })
	obs := &counter{}
	g, err := guard.New(benchSrc, guard.Options{Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if resp, code, body := post(t, g, gangReview(t, "gang", 8)); resp == nil || !resp.Allowed {
		t.Fatalf("HTTP %d %s: %+v", code, body, resp)
	}
	if obs.out[0].Reason != "Fits" {
		t.Errorf("outcome %+v, want Fits", obs.out[0])
	}
	// 17 racks of 16 nodes cannot be one rack: denied.
	if resp, _, _ := post(t, g, gangReview(t, "huge", 17)); resp == nil || resp.Allowed {
		t.Fatalf("a gang larger than a rack: %+v", resp)
	}
}
