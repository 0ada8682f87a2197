package examples_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/quantity"
)

// The parts of a Kubernetes cluster's objects that allot reads, in their
// JSON shapes (as kubectl get -o json prints them): core/v1 Nodes, and
// Kueue's ResourceFlavors, ClusterQueues, LocalQueues and Workloads. A
// platform service would use k8s.io/api's and Kueue's own types; these
// few fields keep the module free of dependencies. Quantities stay
// strings ("8", "1500m", "1536Gi") until allot reads them: allot.Resources
// parses them where they are maps of resources, package quantity where
// they stand alone.

type objectMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// classAnnotation says how much a workload loses when it is preempted
// (allot.PreemptionClass: preemptible, checkpointable or never), which
// Kueue's Workload has no field for.
const classAnnotation = "allot.example.com/preemption-class"

// kubeNode is a core/v1 Node.
type kubeNode struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Unschedulable bool `json:"unschedulable,omitempty"`
	} `json:"spec"`
	Status struct {
		// Allocatable is what pods may request: nvidia.com/gpu, cpu,
		// memory, ephemeral-storage, pods.
		Allocatable allot.Resources `json:"allocatable"`
	} `json:"status"`
}

// resourceFlavor is Kueue's ResourceFlavor: its nodes are those with its
// node labels.
type resourceFlavor struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		NodeLabels map[string]string `json:"nodeLabels"`
	} `json:"spec"`
}

// clusterQueue is Kueue's ClusterQueue.
type clusterQueue struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Cohort         string `json:"cohort,omitempty"`
		ResourceGroups []struct {
			CoveredResources []string `json:"coveredResources"`
			Flavors          []struct {
				Name      string `json:"name"`
				Resources []struct {
					Name         string `json:"name"`
					NominalQuota string `json:"nominalQuota"`
				} `json:"resources"`
			} `json:"flavors"`
		} `json:"resourceGroups"`
		Preemption struct {
			WithinClusterQueue  string `json:"withinClusterQueue,omitempty"`
			ReclaimWithinCohort string `json:"reclaimWithinCohort,omitempty"`
		} `json:"preemption"`
	} `json:"spec"`
}

// localQueue is Kueue's LocalQueue: a namespace's name for a ClusterQueue.
type localQueue struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		ClusterQueue string `json:"clusterQueue"`
	} `json:"spec"`
}

// kueueWorkload is Kueue's Workload: pod sets of identical pods, each
// pod's requests the sum of its containers'.
type kueueWorkload struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		QueueName string `json:"queueName"`
		Priority  int32  `json:"priority,omitempty"`
		PodSets   []struct {
			Name     string `json:"name"`
			Count    int32  `json:"count"`
			Template struct {
				Spec struct {
					Containers []struct {
						Resources struct {
							Requests allot.Resources `json:"requests"`
						} `json:"resources"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
			TopologyRequest *struct {
				Required string `json:"required,omitempty"`
			} `json:"topologyRequest,omitempty"`
		} `json:"podSets"`
	} `json:"spec"`
}

// cluster is what a controller lists from the API server.
type cluster struct {
	Nodes         []kubeNode
	Flavors       []resourceFlavor
	ClusterQueues []clusterQueue
	LocalQueues   []localQueue
}

// gpu is the accelerator's Kubernetes name, from NVIDIA's device plugin.
const gpu = "nvidia.com/gpu"

// rackLabel is the node label of the one topology level, as Kueue's
// Topology names levels by node label.
const rackLabel = "topology.example.com/rack"

// builder turns the cluster's objects into allot's description. A node
// is of the first flavor whose node labels it carries; its pods
// allocatable become its pod limit; ephemeral-storage is carried by nodes
// and pods and not tracked.
func (c cluster) builder(now int64) (allot.Builder, error) {
	b := allot.Builder{
		Now:              now,
		Resources:        []string{gpu, "cpu", "memory"},
		GPUResource:      gpu,
		IgnoredResources: []string{"ephemeral-storage"},
		Levels:           []string{rackLabel},
	}
	for _, f := range c.Flavors {
		b.Flavors = append(b.Flavors, allot.Flavor{Name: f.Metadata.Name})
	}
	for _, kn := range c.Nodes {
		n, err := c.node(kn)
		if err != nil {
			return b, err
		}
		b.Nodes = append(b.Nodes, n)
	}
	for _, cq := range c.ClusterQueues {
		q, err := queue(cq)
		if err != nil {
			return b, err
		}
		b.Queues = append(b.Queues, q)
		if cq.Spec.Cohort != "" && !slices.ContainsFunc(b.Cohorts, func(co allot.Cohort) bool { return co.Name == cq.Spec.Cohort }) {
			b.Cohorts = append(b.Cohorts, allot.Cohort{Name: cq.Spec.Cohort})
		}
	}
	return b, nil
}

// node is a Node as allot takes it.
func (c cluster) node(kn kubeNode) (allot.Node, error) {
	n := allot.Node{Name: kn.Metadata.Name, Unschedulable: kn.Spec.Unschedulable,
		Labels: map[string]string{rackLabel: kn.Metadata.Labels[rackLabel]}, Capacity: maps.Clone(kn.Status.Allocatable)}
	for _, f := range c.Flavors {
		if labelsMatch(kn.Metadata.Labels, f.Spec.NodeLabels) {
			n.Flavor = f.Metadata.Name
			break
		}
	}
	if n.Flavor == "" {
		return n, fmt.Errorf("node %s: no ResourceFlavor matches its labels", n.Name)
	}
	if pods, ok := n.Capacity["pods"]; ok {
		n.MaxPods = int32(pods)
		delete(n.Capacity, "pods")
	}
	return n, nil
}

func labelsMatch(labels, want map[string]string) bool {
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// queue is a ClusterQueue as allot takes it: nominal quotas read by
// Kubernetes' rules into allot's base units.
func queue(cq clusterQueue) (allot.Queue, error) {
	q := allot.Queue{Name: cq.Metadata.Name, Cohort: cq.Spec.Cohort, Preemption: allot.QueuePreemption{
		WithinQueue: cq.Spec.Preemption.WithinClusterQueue, ReclaimWithinCohort: cq.Spec.Preemption.ReclaimWithinCohort}}
	for _, rg := range cq.Spec.ResourceGroups {
		for _, f := range rg.Flavors {
			fq := allot.FlavorQuota{Flavor: f.Name}
			for _, r := range f.Resources {
				v, err := quantity.ParseBase(r.Name, r.NominalQuota)
				if err != nil {
					return q, fmt.Errorf("clusterQueue %s: flavor %s: %s: %w", q.Name, f.Name, r.Name, err)
				}
				fq.Resources = append(fq.Resources, allot.ResourceQuota{Name: r.Name, Nominal: v})
			}
			q.Quota = append(q.Quota, fq)
		}
	}
	return q, nil
}

// request is a Workload as a request to Decide: its LocalQueue's
// ClusterQueue, each pod's requests the sum of its containers'.
func (c cluster) request(w kueueWorkload) (allot.Request, error) {
	r := allot.Request{ID: w.Metadata.Namespace + "/" + w.Metadata.Name, Priority: w.Spec.Priority}
	if class, ok := w.Metadata.Annotations[classAnnotation]; ok {
		if err := r.Preemption.Class.UnmarshalText([]byte(class)); err != nil {
			return r, fmt.Errorf("workload %s: %w", r.ID, err)
		}
	}
	for _, lq := range c.LocalQueues {
		if lq.Metadata.Namespace == w.Metadata.Namespace && lq.Metadata.Name == w.Spec.QueueName {
			r.Queue = lq.Spec.ClusterQueue
		}
	}
	if r.Queue == "" {
		return r, fmt.Errorf("workload %s: no LocalQueue %s/%s", r.ID, w.Metadata.Namespace, w.Spec.QueueName)
	}
	for _, ps := range w.Spec.PodSets {
		per := allot.Resources{}
		for _, ct := range ps.Template.Spec.Containers {
			for name, v := range ct.Resources.Requests {
				per[name] += v
			}
		}
		p := allot.PodSet{Name: ps.Name, Count: ps.Count, PerPod: per}
		if ps.TopologyRequest != nil {
			p.Topology.Required = ps.TopologyRequest.Required
		}
		r.PodSets = append(r.PodSets, p)
	}
	return r, nil
}

// decode reads a JSON object into v, panicking on malformed test input.
func decode[T any](js string) T {
	var v T
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		panic(fmt.Sprintf("%v in %s", err, js))
	}
	return v
}

// gpuNode is a Node of 8 H100s in a rack, as its kubelet reports it.
func gpuNode(name, rack string) string {
	return `{"metadata": {"name": "` + name + `", "labels": {"node.kubernetes.io/instance-type": "a3-highgpu-8g", "` + rackLabel + `": "` + rack + `"}},
	 "status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "207", "memory": "1824Gi", "ephemeral-storage": "6Ti", "pods": "110"}}}`
}

// theCluster is three H100 nodes in two racks, a flavor for them and one
// ClusterQueue, team-a, whose higher priorities may preempt lower ones,
// with a LocalQueue in namespace ml.
func theCluster() cluster {
	return cluster{
		Nodes: []kubeNode{decode[kubeNode](gpuNode("gpu-0", "r0")), decode[kubeNode](gpuNode("gpu-1", "r0")),
			decode[kubeNode](gpuNode("gpu-2", "r1"))},
		Flavors: []resourceFlavor{decode[resourceFlavor](`{"metadata": {"name": "h100"},
			"spec": {"nodeLabels": {"node.kubernetes.io/instance-type": "a3-highgpu-8g"}}}`)},
		ClusterQueues: []clusterQueue{decode[clusterQueue](`{"metadata": {"name": "team-a"}, "spec": {
			"preemption": {"withinClusterQueue": "LowerPriority"},
			"resourceGroups": [{"coveredResources": ["nvidia.com/gpu", "cpu", "memory"], "flavors": [{"name": "h100", "resources": [
				{"name": "nvidia.com/gpu", "nominalQuota": "32"}, {"name": "cpu", "nominalQuota": "800"}, {"name": "memory", "nominalQuota": "7Ti"}]}]}]}}`)},
		LocalQueues: []localQueue{decode[localQueue](`{"metadata": {"name": "training", "namespace": "ml"}, "spec": {"clusterQueue": "team-a"}}`)},
	}
}

// job is a Workload in namespace ml of count pods, each of a trainer
// container asking for gpus H100s with cpu, memory and ephemeral-storage
// beside, and a sidecar; rack, when set, is the level its pods must share
// a domain of; it checkpoints.
func job(name string, priority, count int32, gpus int, rack string) kueueWorkload {
	topology := ""
	if rack != "" {
		topology = `, "topologyRequest": {"required": "` + rack + `"}`
	}
	return decode[kueueWorkload](fmt.Sprintf(`{"metadata": {"name": %q, "namespace": "ml", "annotations": {%q: "checkpointable"}},
	  "spec": {"queueName": "training", "priority": %d,
	  "podSets": [{"name": "workers", "count": %d, "template": {"spec": {"containers": [
	    {"name": "trainer", "resources": {"requests": {"nvidia.com/gpu": "%d", "cpu": "24", "memory": "200Gi", "ephemeral-storage": "100Gi"}}},
	    {"name": "sidecar", "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}]}}%s}]}}`, name, classAnnotation, priority, count, gpus, topology))
}
