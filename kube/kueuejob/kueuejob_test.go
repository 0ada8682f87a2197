package kueuejob_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/kueueconfig"
	"github.com/allot-sched/allot/kube/kueuejob"
)

// config is the seeds' configuration on the example cluster, with a
// tainted quota-only flavor beside the topology-aware one.
func config(t *testing.T, extra string) *kueueconfig.Config {
	t.Helper()
	objs, err := kueueconfig.ReadPaths("../testdata/seeds/training-cq-fixed.yaml", "../testdata/seeds/team-a.yaml", "../testdata/cluster")
	if err != nil {
		t.Fatal(err)
	}
	more, err := kueueconfig.Decode("extra", []byte(extra))
	if err != nil {
		t.Fatal(err)
	}
	c, err := kueueconfig.Import(append(objs, more...), kueueconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func request(t *testing.T, c *kueueconfig.Config, yaml string) (allot.Request, []kueueconfig.Warning, error) {
	t.Helper()
	objs, err := kueueconfig.Decode("job", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	job, err := kueuejob.FromObjects(objs)
	if err != nil {
		t.Fatal(err)
	}
	return kueuejob.Request(c, job)
}

const job = `apiVersion: batch/v1
kind: Job
metadata:
  name: j
  namespace: ml-training
  labels: {kueue.x-k8s.io/queue-name: training}
spec:
PARALLELISM
  template:
    metadata:
      annotations: {ANNOTATIONS}
    spec:
      restartPolicy: Never
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
POD
`

const plainPod = `      containers:
      - name: c
        image: i
        resources: {requests: {nvidia.com/gpu: "1", cpu: "1"}}`

func jobYAML(parallelism, annotations, pod string) string {
	r := strings.NewReplacer("PARALLELISM", parallelism, "ANNOTATIONS", annotations, "POD", pod)
	return r.Replace(job)
}

// TestPodSetCount is Kueue's count of a Job's pods: min(parallelism,
// completions), parallelism 1 when unset.
func TestPodSetCount(t *testing.T) {
	c := config(t, "")
	for _, tc := range []struct {
		spec string
		want int32
	}{
		{"  parallelism: 4", 4},
		{"  parallelism: 4\n  completions: 2", 2},
		{"  completions: 5", 1},
		{"  parallelism: 3\n  completions: 9", 3},
	} {
		req, _, err := request(t, c, jobYAML(tc.spec, "", plainPod))
		if err != nil {
			t.Fatal(err)
		}
		if got := req.PodSets[0].Count; got != tc.want || req.PodSets[0].Name != "main" {
			t.Errorf("%q: pod set %s of %d, want main of %d", tc.spec, req.PodSets[0].Name, got, tc.want)
		}
	}
}

// TestEffectiveRequest is a pod's request as Kueue sums it: limits stand
// in for missing requests; the larger of the init containers' peak and
// the containers' sum; plus the overhead.
func TestEffectiveRequest(t *testing.T) {
	c := config(t, "")
	pod := `      overhead: {cpu: 250m}
      initContainers:
      - name: init
        image: i
        resources: {requests: {cpu: "6", memory: 1Gi}}
      containers:
      - name: a
        image: i
        resources: {limits: {nvidia.com/gpu: "2", cpu: "2"}}
      - name: b
        image: i
        resources: {requests: {cpu: "1", memory: 4Gi}, limits: {memory: 8Gi}}`
	req, _, err := request(t, c, jobYAML("  parallelism: 1", "", pod))
	if err != nil {
		t.Fatal(err)
	}
	want := allot.Resources{"nvidia.com/gpu": 2, "cpu": 6250, "memory": 4 << 30}
	got := req.PodSets[0].PerPod
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d, want %d", k, got[k], v)
		}
	}
}

// TestTopologyAnnotations are read from the pod template as Kueue reads
// them, kubernetes.io/hostname as allot's node level.
func TestTopologyAnnotations(t *testing.T) {
	c := config(t, "")
	for _, tc := range []struct {
		annotations string
		want        allot.TopologyRequest
	}{
		{"kueue.x-k8s.io/podset-required-topology: cloud.example.com/topology-rack", allot.TopologyRequest{Required: "cloud.example.com/topology-rack"}},
		{"kueue.x-k8s.io/podset-preferred-topology: cloud.example.com/topology-block", allot.TopologyRequest{Preferred: "cloud.example.com/topology-block"}},
		{"kueue.x-k8s.io/podset-required-topology: kubernetes.io/hostname", allot.TopologyRequest{Required: "node"}},
		{`kueue.x-k8s.io/podset-unconstrained-topology: "true"`, allot.TopologyRequest{}},
		{`kueue.x-k8s.io/podset-required-topology: cloud.example.com/topology-block, kueue.x-k8s.io/podset-slice-required-topology: cloud.example.com/topology-rack, kueue.x-k8s.io/podset-slice-size: "2"`,
			allot.TopologyRequest{Required: "cloud.example.com/topology-block", Slices: []allot.Slice{{Level: "cloud.example.com/topology-rack", Size: 2}}}},
	} {
		req, _, err := request(t, c, jobYAML("  parallelism: 4", tc.annotations, plainPod))
		if err != nil {
			t.Fatalf("%s: %v", tc.annotations, err)
		}
		got := req.PodSets[0].Topology
		if got.Required != tc.want.Required || got.Preferred != tc.want.Preferred || len(got.Slices) != len(tc.want.Slices) ||
			(len(got.Slices) > 0 && got.Slices[0] != tc.want.Slices[0]) {
			t.Errorf("%s: %+v, want %+v", tc.annotations, got, tc.want)
		}
	}
}

// TestJobWebhookRules are the job webhooks' checks of the topology
// annotations, refused with Kueue's message.
func TestJobWebhookRules(t *testing.T) {
	c := config(t, "")
	for _, tc := range []struct{ annotations, want string }{
		{"kueue.x-k8s.io/podset-required-topology: r, kueue.x-k8s.io/podset-preferred-topology: r", "must not contain more than one topology annotation"},
		{`kueue.x-k8s.io/podset-unconstrained-topology: "maybe"`, "must be a boolean value"},
		{`kueue.x-k8s.io/podset-slice-required-topology: r`, "kueue.x-k8s.io/podset-slice-size]: Required value: must be set when 'kueue.x-k8s.io/podset-slice-required-topology' is specified"},
		{`kueue.x-k8s.io/podset-slice-size: "2"`, "may not be set when 'kueue.x-k8s.io/podset-slice-required-topology' is not specified"},
		{`kueue.x-k8s.io/podset-slice-required-topology: r, kueue.x-k8s.io/podset-slice-size: "0"`, "must be greater than or equal to 1"},
		{`kueue.x-k8s.io/podset-group-name: "12"`, "must not be a number"},
		{"kueue.x-k8s.io/podset-required-topology: bad label!", "name part must consist of alphanumeric characters"},
	} {
		_, _, err := request(t, c, jobYAML("  parallelism: 2", tc.annotations, plainPod))
		var oe *kueueconfig.ObjectError
		if !errors.As(err, &oe) || !strings.Contains(err.Error(), "jobs/ml-training/j: spec.template.metadata.annotations") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an *ObjectError with %q", tc.annotations, err, tc.want)
		}
	}
}

// TestInadmissible are Kueue's noes before quota and placement.
func TestInadmissible(t *testing.T) {
	c := config(t, `apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: paused, namespace: ml-training}
spec: {clusterQueue: training-cq, stopPolicy: Hold}
`)
	for _, tc := range []struct{ yaml, reason string }{
		{strings.Replace(jobYAML("", "", plainPod), "queue-name: training", "queue-name: nope", 1), kueueconfig.ReasonLocalQueueNotFound},
		{strings.Replace(jobYAML("", "", plainPod), "queue-name: training", "queue-name: paused", 1), kueueconfig.ReasonLocalQueueStopped},
		{strings.Replace(jobYAML("", "", plainPod), "  labels: {kueue.x-k8s.io/queue-name: training}\n", "", 1), kueueconfig.ReasonNoQueue},
		{jobYAML("", "", strings.Replace(plainPod, `cpu: "1"`, `example.com/fpga: "1"`, 1)), kueueconfig.ReasonResourceNotCovered},
		// A node selector no flavor of training-cq matches.
		{jobYAML("", "", plainPod+"\n      nodeSelector: {nvidia.com/gpu.product: H100}"), kueueconfig.ReasonNoFlavor},
		{strings.Replace(jobYAML("", "", plainPod), "kueue.x-k8s.io/queue-name: training", "kueue.x-k8s.io/queue-name: training, kueue.x-k8s.io/priority-class: urgent", 1), "WorkloadPriorityClassNotFound"},
	} {
		_, _, err := request(t, c, tc.yaml)
		var inad *kueueconfig.InadmissibleError
		if !errors.As(err, &inad) || inad.Reason != tc.reason || inad.Object != "jobs/ml-training/j" {
			t.Errorf("%v, want an InadmissibleError %s of jobs/ml-training/j", err, tc.reason)
		}
	}
}

// TestFlavorEligibility: Kueue tries a topology-aware flavor only for a
// pod set that asks for topology-aware scheduling (or in a ClusterQueue of
// only such flavors), and a flavor whose taints the pods do not tolerate
// not at all.
func TestFlavorEligibility(t *testing.T) {
	extra := `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: spot}
spec:
  nodeLabels: {pool: spot}
  nodeTaints: [{key: spot, value: "true", effect: NoSchedule}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: ondemand}
spec:
  nodeLabels: {pool: ondemand}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: mixed}
spec:
  cohortName: research
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, cpu]
    flavors:
    - {name: spot, resources: [{name: nvidia.com/gpu, nominalQuota: 8}, {name: cpu, nominalQuota: 8}]}
    - {name: a100-80gb, resources: [{name: nvidia.com/gpu, nominalQuota: 8}, {name: cpu, nominalQuota: 8}]}
    - {name: ondemand, resources: [{name: nvidia.com/gpu, nominalQuota: 8}, {name: cpu, nominalQuota: 8}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: mixed, namespace: ml-training}
spec: {clusterQueue: mixed}
`
	c := config(t, extra)
	mixed := func(y string) string { return strings.Replace(y, "queue-name: training", "queue-name: mixed", 1) }
	for _, tc := range []struct {
		yaml string
		want []string
	}{
		{mixed(jobYAML("", "", plainPod)), []string{"ondemand"}},
		{mixed(jobYAML("", "", plainPod+"\n      - {key: spot, operator: Exists}")), []string{"spot", "ondemand"}},
		{mixed(jobYAML("", "kueue.x-k8s.io/podset-required-topology: cloud.example.com/topology-rack", plainPod)), []string{"a100-80gb"}},
		// The pod set of a queue of only topology-aware flavors asks
		// for it implicitly.
		{jobYAML("", "", plainPod), []string{"a100-80gb"}},
	} {
		tc.yaml = strings.Replace(tc.yaml, "tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n", "tolerations:\n      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n", 1)
		if strings.Contains(tc.yaml, "- {key: spot") {
			// move the spot toleration into the tolerations list
			tc.yaml = strings.Replace(tc.yaml, "\n      - {key: spot, operator: Exists}", "", 1)
			tc.yaml = strings.Replace(tc.yaml, "      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n", "      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n      - {key: spot, operator: Exists}\n", 1)
		}
		req, _, err := request(t, c, tc.yaml)
		if err != nil {
			t.Fatal(err)
		}
		if got := req.PodSets[0].Flavors; strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("flavors %v, want %v\n%s", got, tc.want, tc.yaml)
		}
	}
}

// TestPodGroup: a pod group's roles are Kueue's role hashes; its count
// is the total-count annotation's.
func TestPodGroup(t *testing.T) {
	c := config(t, "")
	pod := func(name, gpus string) string {
		return `apiVersion: v1
kind: Pod
metadata:
  name: ` + name + `
  namespace: ml-training
  labels: {kueue.x-k8s.io/queue-name: training, kueue.x-k8s.io/pod-group-name: g}
  annotations: {kueue.x-k8s.io/pod-group-total-count: "3"}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers: [{name: c, image: i, resources: {requests: {nvidia.com/gpu: "` + gpus + `"}}}]
`
	}
	req, _, err := request(t, c, pod("a", "1")+"---\n"+pod("b", "2")+"---\n"+pod("c", "1"))
	if err != nil {
		t.Fatal(err)
	}
	if req.ID != "ml-training/g" || len(req.PodSets) != 2 || req.PodSets[0].Count+req.PodSets[1].Count != 3 {
		t.Fatalf("%+v", req)
	}
	// One role, fewer pods than the total: counted at the total.
	req, _, err = request(t, c, pod("a", "1"))
	if err != nil || len(req.PodSets) != 1 || req.PodSets[0].Count != 3 {
		t.Fatalf("%+v %v", req, err)
	}
	// Two roles, fewer pods than the total: refused.
	if _, _, err = request(t, c, pod("a", "1")+"---\n"+pod("b", "2")); !errors.Is(err, kueuejob.ErrNoJob) {
		t.Fatalf("%v, want ErrNoJob", err)
	}
}

// TestJobSetAndRayJobCounts follow Kueue's JobSet and RayJob pod sets.
func TestJobSetAndRayJobCounts(t *testing.T) {
	c := config(t, "")
	for _, tc := range []struct {
		file string
		want map[string]int32
	}{
		{"../testdata/jobs/jobset.yaml", map[string]int32{"driver": 1, "workers": 4}},
		{"../testdata/jobs/rayjob.yaml", map[string]int32{"head": 1, "gpu": 2, "submitter": 1}},
	} {
		objs, err := kueueconfig.ReadPaths(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		job, err := kueuejob.FromObjects(objs)
		if err != nil {
			t.Fatal(err)
		}
		req, _, err := kueuejob.Request(c, job)
		if err != nil {
			t.Fatal(err)
		}
		if len(req.PodSets) != len(tc.want) {
			t.Fatalf("%s: %+v", tc.file, req.PodSets)
		}
		for _, ps := range req.PodSets {
			if ps.Count != tc.want[ps.Name] {
				t.Errorf("%s: %s has %d pods, want %d", tc.file, ps.Name, ps.Count, tc.want[ps.Name])
			}
		}
	}
}
