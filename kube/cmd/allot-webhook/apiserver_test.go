package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/yaml"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/cluster"
	"github.com/allot-sched/allot/kube/guard"
	"github.com/allot-sched/allot/kube/internal/kubetest"
	"github.com/allot-sched/allot/kube/kueueconfig"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

// TestLiveGuard runs the webhook on a real API server: the seeds' Kueue
// objects and the example cluster created through the API (Kueue's as
// v1beta2, as the importer converts them: Kueue's conversion webhook is
// not running), the guard watching them through its informers (no
// --kueue), and the ValidatingWebhookConfiguration of kube/deploy
// registered with the API server, pointed at the test's server and with
// failurePolicy Fail so that a guard that does not answer fails the test.
// Jobs created with client-go: a gang that fits is created; a gang its
// required rack can never hold is refused by the API server with the
// decision's reason; a Job of a namespace its ClusterQueue's selector does
// not select is refused; a Job no LocalQueue takes is created. The
// metrics endpoint serves the health numbers of the live snapshot, the
// example's running Job charged to its ClusterQueue (its pods' queue is
// the Job's label: the guard reads Jobs too).
func TestLiveGuard(t *testing.T) {
	if testing.Short() {
		t.Skip("runs against an API server")
	}
	rc := kubetest.Config(t)
	cl := kubetest.Client(t, rc)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	objs, err := kueueconfig.ReadPaths("../../testdata/seeds/team-a.yaml", "../../testdata/seeds/training-cq-fixed.yaml", "../../testdata/cluster")
	if err != nil {
		t.Fatal(err)
	}
	// sandbox's LocalQueue into team-a-cq, whose selector does not select
	// sandbox.
	objs = append(objs, kueueconfig.Object{Value: &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "batch", Namespace: "sandbox"},
		Spec: kueue.LocalQueueSpec{ClusterQueue: "team-a-cq"}}})
	kubetest.CreateAll(ctx, t, cl, kubetest.Objects(t, objs))

	dir := t.TempDir()
	writeCert(t, dir)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	writeKubeconfig(t, rc, kubeconfig)
	hook := startWebhook(t, ctx, 60*time.Second, func(port int, metricsAddr, probeAddr string) []string {
		return []string{"--kubeconfig", kubeconfig, "--cert-dir", dir, "--port", fmt.Sprint(port),
			"--metrics-bind-address", metricsAddr, "--health-probe-bind-address", probeAddr}
	})
	defer hook.stop(t)
	port, metricsAddr := hook.port, hook.metricsAddr

	ca, err := os.ReadFile(filepath.Join(dir, "tls.crt"))
	if err != nil {
		t.Fatal(err)
	}
	vwc := deployedWebhook(t)
	url := fmt.Sprintf("https://127.0.0.1:%d/validate", port)
	fail := admissionregistrationv1.Fail
	for i := range vwc.Webhooks {
		vwc.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca}
		vwc.Webhooks[i].FailurePolicy = &fail
	}
	kubetest.Create(ctx, t, cl, vwc)

	never := rackJob(t, "rack-5x8", 5)
	// The API server takes a moment to call a webhook it has just been
	// given: until it refuses the gang that can never fit, try again.
	deadline := time.Now().Add(30 * time.Second)
	var refusal error
	for {
		refusal = cl.Create(ctx, never.DeepCopy(), client.DryRunAll)
		if refusal != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if refusal == nil || !strings.Contains(refusal.Error(), "allot: NeverFits") || !strings.Contains(refusal.Error(), "cloud.example.com/topology-rack") {
		t.Fatalf("a 5x8 gang requiring one rack of four 8-GPU nodes: %v, want refused by the guard with NeverFits and the rack level\n%s", refusal, hook.logs.String())
	}
	t.Logf("refused: %v", refusal)

	fits := rackJob(t, "rack-4x8", 4)
	if err := cl.Create(ctx, fits); err != nil {
		t.Errorf("a 4x8 gang requiring a rack, which one rack holds: %v", err)
	}
	sandbox := rackJob(t, "sandboxed", 1)
	sandbox.Namespace, sandbox.Labels["kueue.x-k8s.io/queue-name"] = "sandbox", "batch"
	// team-a-cq's flavor has no topology: Kueue would refuse a topology
	// request there before it looks at the namespace.
	sandbox.Spec.Template.Annotations = nil
	if err := cl.Create(ctx, sandbox); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("a job of namespace sandbox, which team-a-cq's selector does not select: %v, want refused as Unauthorized", err)
	}
	unmanaged := rackJob(t, "unmanaged", 1)
	delete(unmanaged.Labels, "kueue.x-k8s.io/queue-name")
	if err := cl.Create(ctx, unmanaged); err != nil {
		t.Errorf("a job Kueue does not manage: %v, want created", err)
	}

	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := string(body)
	for _, want := range []string{
		`allot_gpus{flavor="a100-80gb"} 64`, "allot_gpu_utilization ", "allot_fragmentation_node_share ",
		`allot_queue_admitted_workloads{queue="training-cq"} 1`,
		`allot_decisions_total{denied="true",kind="Job",reason="NeverFits",verdict="Reject"}`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// rackJob is rack-4x8.yaml of the examples at parallelism pods: pods of 8
// GPUs required in one rack.
func rackJob(t *testing.T, name string, pods int32) *batchv1.Job {
	t.Helper()
	objs, err := kueueconfig.ReadPaths("../../testdata/jobs/rack-4x8.yaml")
	if err != nil || len(objs) != 1 {
		t.Fatalf("rack-4x8.yaml: %v", err)
	}
	j := objs[0].Value.(*batchv1.Job).DeepCopy()
	j.Name, j.Spec.Parallelism, j.Spec.Completions = name, &pods, &pods
	return j
}

// deployedWebhook is kube/deploy's ValidatingWebhookConfiguration.
func deployedWebhook(t *testing.T) *admissionregistrationv1.ValidatingWebhookConfiguration {
	t.Helper()
	data, err := os.ReadFile("../../deploy/webhook.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := yaml.UnmarshalStrict(data, &vwc); err != nil {
		t.Fatal(err)
	}
	return &vwc
}

// writeKubeconfig writes a kubeconfig of the API server rc names, as a
// platform engineer's would be.
func writeKubeconfig(t *testing.T, rc *rest.Config, path string) {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthorityData: rc.CAData}
	kc.AuthInfos["test"] = &clientcmdapi.AuthInfo{ClientCertificateData: rc.CertData, ClientKeyData: rc.KeyData, Token: rc.BearerToken}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	kc.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
}

// TestReplicasAgree: two guards side by side, each with its own informers
// and snapshot of the same API server, answer the same reviews alike once
// their snapshots hold the same cluster: decisions are deterministic, so
// replicas need no coordination.
func TestReplicasAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("runs against an API server")
	}
	rc := kubetest.Config(t)
	cl := kubetest.Client(t, rc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A cluster of its own, beside what other tests create: a rack of
	// four 8-GPU nodes under a ClusterQueue of namespace replicas.
	objs, err := kueueconfig.Decode("replicas", []byte(replicasCluster))
	if err != nil {
		t.Fatal(err)
	}
	kubetest.CreateAll(ctx, t, cl, kubetest.Objects(t, objs))

	var guards [2]*guard.Guard
	var clusters [2]*cluster.Cluster
	for i := range guards {
		c, err := cluster.New(rc, cluster.Options{})
		if err != nil {
			t.Fatal(err)
		}
		kubetest.Run(ctx, t, fmt.Sprintf("replica %d: Run", i), c.Run)
		if !c.WaitForSync(ctx) {
			t.Fatalf("replica %d not synced", i)
		}
		if guards[i], err = guard.New(guard.NewLive(c), guard.Options{}); err != nil {
			t.Fatal(err)
		}
		clusters[i] = c
	}
	// Both hold the same cluster once their informers have seen every
	// object: until then, look again.
	sameCluster := func() (string, string) {
		var out [2]string
		for i, c := range clusters {
			b := c.Load().Builder()
			b.Now, b.Version, b.History = 0, 0, allot.History{}
			js, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = string(js)
		}
		return out[0], out[1]
	}
	deadline := time.Now().Add(30 * time.Second)
	for a, b := sameCluster(); a != b || !strings.Contains(a, `"replicas-cq"`); a, b = sameCluster() {
		if time.Now().After(deadline) {
			t.Fatalf("the replicas' snapshots differ:\n%s\n%s", a, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	answers := map[string]string{}
	for _, job := range []struct {
		name string
		pods int32
		rack bool
	}{{"fits", 4, true}, {"never", 5, true}, {"loose", 2, false}} {
		j := rackJob(t, job.name, job.pods)
		j.Namespace, j.Labels["kueue.x-k8s.io/queue-name"] = "replicas", "q"
		delete(j.Labels, "kueue.x-k8s.io/priority-class")
		if !job.rack {
			j.Spec.Template.Annotations = nil
		}
		raw, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		req := &admissionv1.AdmissionRequest{UID: types.UID("uid-" + job.name), Kind: metav1.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"},
			Resource: metav1.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, Name: j.Name, Namespace: j.Namespace,
			Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw}}
		var got [2]string
		for i, g := range guards {
			resp, _ := g.Review(req)
			js, err := json.Marshal(resp)
			if err != nil {
				t.Fatal(err)
			}
			got[i] = string(js)
		}
		if got[0] != got[1] {
			t.Errorf("%s: the replicas answer\n%s\n%s", job.name, got[0], got[1])
		}
		answers[job.name] = got[0]
	}
	// What the replicas agree on is what the cluster says: the gangs a
	// rack of four nodes holds are allowed, the one it never can denied.
	for name, allowed := range map[string]bool{"fits": true, "never": false, "loose": true} {
		if strings.Contains(answers[name], `"allowed":true`) != allowed {
			t.Errorf("%s: %s, want allowed %v", name, answers[name], allowed)
		}
	}
	if !strings.Contains(answers["never"], "NeverFits") {
		t.Errorf("never: %s, want NeverFits", answers["never"])
	}
}

// replicasCluster is TestReplicasAgree's cluster: a rack of four 8-GPU
// nodes of its own flavor, over a Topology of the examples' levels (a
// snapshot has one set of levels), and a ClusterQueue of namespace
// replicas.
var replicasCluster = `apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: replicas-topology}
spec:
  levels:
  - nodeLabel: cloud.example.com/topology-block
  - nodeLabel: cloud.example.com/topology-rack
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: replicas-h100}
spec:
  nodeLabels: {allot.example.com/pool: replicas}
  topologyName: replicas-topology
` + replicasNodes(4) + `---
apiVersion: v1
kind: Namespace
metadata: {name: replicas, labels: {team: replicas}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: replicas}
spec: {clusterQueue: replicas-cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: replicas-cq}
spec:
  namespaceSelector: {matchLabels: {team: replicas}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, cpu, memory]
    flavors:
    - name: replicas-h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 64}
      - {name: cpu, nominalQuota: 1000}
      - {name: memory, nominalQuota: 8Ti}
`

// replicasNodes are n Ready nodes of 8 GPUs in rack rr0 of block rb0.
func replicasNodes(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Node
metadata:
  name: replicas-%d
  labels: {allot.example.com/pool: replicas, cloud.example.com/topology-block: rb0, cloud.example.com/topology-rack: rr0, kubernetes.io/hostname: replicas-%d}
status:
  allocatable: {nvidia.com/gpu: "8", cpu: "96", memory: 1Ti, pods: "110"}
  capacity: {nvidia.com/gpu: "8", cpu: "96", memory: 1Ti, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
`, i, i)
	}
	return b.String()
}
