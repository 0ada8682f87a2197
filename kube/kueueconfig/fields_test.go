package kueueconfig_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// walk lists the JSON paths of a type's fields, descending into the
// structs of Kueue's API package (a field of another package's type — a
// core/v1 pod template, a label selector, a quantity — is one leaf).
func walk(t reflect.Type, prefix string, out *[]string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		if t.Kind() != reflect.Pointer {
			prefix += "[]"
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.PkgPath() != reflect.TypeFor[kueue.ClusterQueue]().PkgPath() {
		*out = append(*out, prefix)
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		walk(f.Type, prefix+"."+name, out)
	}
}

func TestEveryFieldHasADecision(t *testing.T) {
	var paths []string
	for _, obj := range []any{kueue.ClusterQueueSpec{}, kueue.CohortSpec{}, kueue.ResourceFlavorSpec{}, kueue.LocalQueueSpec{},
		kueue.TopologySpec{}, kueue.WorkloadPriorityClass{}, kueue.WorkloadSpec{}} {
		typ := reflect.TypeOf(obj)
		walk(typ, typ.Name(), &paths)
	}
	for _, p := range paths {
		d, ok := decisions[p]
		switch {
		case !ok:
			t.Errorf("%s: no decision: map it, warn about it or refuse it, and say which here", p)
		case !strings.HasPrefix(d, "mapped: ") && !strings.HasPrefix(d, "warned: ") && !strings.HasPrefix(d, "refused: ") && !strings.HasPrefix(d, "identity: "):
			t.Errorf("%s: decision %q is not mapped, warned, refused or identity", p, d)
		}
	}
	for p := range decisions {
		if !slices.Contains(paths, p) {
			t.Errorf("%s: a decision for a field the API types do not have", p)
		}
	}
}

// decisions say what the importer does with every field of Kueue's
// v1beta2 specs (v1beta1 objects are converted to v1beta2 by Kueue's own
// conversion first). Status fields are Kueue's report, recomputed by
// allot from the objects (usage from bound pods), and not read.
var decisions = map[string]string{
	"ClusterQueueSpec.resourceGroups[].coveredResources[]":                                     "mapped: the snapshot's resources (a second resource group is refused)",
	"ClusterQueueSpec.resourceGroups[].flavors[].name":                                         "mapped: Queue.Quota[].Flavor and Queue.FlavorOrder (a flavor not found holds the queue, warned)",
	"ClusterQueueSpec.resourceGroups[].flavors[].resources[].name":                             "mapped: ResourceQuota.Name",
	"ClusterQueueSpec.resourceGroups[].flavors[].resources[].nominalQuota":                     "mapped: ResourceQuota.Nominal",
	"ClusterQueueSpec.resourceGroups[].flavors[].resources[].borrowingLimit":                   "mapped: ResourceQuota.BorrowingLimit",
	"ClusterQueueSpec.resourceGroups[].flavors[].resources[].lendingLimit":                     "mapped: ResourceQuota.LendingLimit",
	"ClusterQueueSpec.cohortName":                                                              "mapped: Queue.Cohort (an implicit Cohort when no object has the name)",
	"ClusterQueueSpec.queueingStrategy":                                                        "mapped: Queue.QueueingStrategy",
	"ClusterQueueSpec.namespaceSelector":                                                       "mapped: Queue.NamespaceSelector, judged against the Namespaces' labels",
	"ClusterQueueSpec.flavorFungibility.whenCanBorrow":                                         "mapped: FlavorFungibility.WhenCanBorrow",
	"ClusterQueueSpec.flavorFungibility.whenCanPreempt":                                        "mapped: FlavorFungibility.WhenCanPreempt",
	"ClusterQueueSpec.flavorFungibility.preference":                                            "warned: PreemptionOverBorrowing is not modelled (BorrowingOverPreemption is allot's)",
	"ClusterQueueSpec.preemption.reclaimWithinCohort":                                          "mapped: Preemption.ReclaimWithinCohort",
	"ClusterQueueSpec.preemption.borrowWithinCohort.policy":                                    "mapped: Preemption.BorrowWithinCohort.Policy",
	"ClusterQueueSpec.preemption.borrowWithinCohort.maxPriorityThreshold":                      "mapped: Preemption.BorrowWithinCohort.MaxPriorityThreshold",
	"ClusterQueueSpec.preemption.withinClusterQueue":                                           "mapped: Preemption.WithinQueue",
	"ClusterQueueSpec.admissionChecksStrategy.admissionChecks[].name":                          "warned: admission checks are not run",
	"ClusterQueueSpec.admissionChecksStrategy.admissionChecks[].onFlavors[]":                   "warned: admission checks are not run",
	"ClusterQueueSpec.stopPolicy":                                                              "mapped: Queue.Hold (HoldAndDrain also warned: admitted work is not evicted)",
	"ClusterQueueSpec.fairSharing.weight":                                                      "mapped: Queue.FairSharing.Weight",
	"ClusterQueueSpec.admissionScope.admissionMode":                                            "warned: UsageBasedAdmissionFairSharing is not modelled",
	"CohortSpec.parentName":                                                                    "mapped: Cohort.Parent",
	"CohortSpec.resourceGroups[].coveredResources[]":                                           "mapped: the snapshot's resources (a second resource group is refused)",
	"CohortSpec.resourceGroups[].flavors[].name":                                               "mapped: Cohort.Quota[].Flavor (a flavor not found is left out, warned)",
	"CohortSpec.resourceGroups[].flavors[].resources[].name":                                   "mapped: ResourceQuota.Name",
	"CohortSpec.resourceGroups[].flavors[].resources[].nominalQuota":                           "mapped: ResourceQuota.Nominal",
	"CohortSpec.resourceGroups[].flavors[].resources[].borrowingLimit":                         "mapped: ResourceQuota.BorrowingLimit",
	"CohortSpec.resourceGroups[].flavors[].resources[].lendingLimit":                           "mapped: ResourceQuota.LendingLimit",
	"CohortSpec.fairSharing.weight":                                                            "mapped: Cohort.FairSharing.Weight",
	"ResourceFlavorSpec.nodeLabels[]":                                                          "mapped: Flavor.NodeLabels, the flavor of the nodes that carry them (the nodes keep those labels); pods' node selectors and affinity choose flavors by them",
	"ResourceFlavorSpec.nodeTaints[]":                                                          "mapped: Flavor.NodeTaints: a pod set that does not tolerate them cannot use the flavor",
	"ResourceFlavorSpec.tolerations[]":                                                         "mapped: Flavor.Tolerations, added to the pod sets' own toward the flavor's nodeTaints and its nodes' taints (Node.Taints)",
	"ResourceFlavorSpec.topologyName":                                                          "mapped: a topology-aware flavor, its nodes placed on (without it, quota only)",
	"LocalQueueSpec.clusterQueue":                                                              "mapped: LocalQueue.ClusterQueue, a request's queue",
	"LocalQueueSpec.stopPolicy":                                                                "mapped: a request through a stopped LocalQueue is inadmissible (HoldAndDrain also warned)",
	"LocalQueueSpec.fairSharing.weight":                                                        "warned: admission fair sharing among LocalQueues is not modelled",
	"TopologySpec.levels[].nodeLabel":                                                          "mapped: Builder.Levels, named by the label (kubernetes.io/hostname last: the node level)",
	"WorkloadPriorityClass.TypeMeta":                                                           "identity: the object's kind",
	"WorkloadPriorityClass.metadata":                                                           "identity: the name the priority-class label gives",
	"WorkloadPriorityClass.value":                                                              "mapped: the priority of requests and running workloads that name it",
	"WorkloadPriorityClass.description":                                                        "identity: text for people",
	"WorkloadSpec.podSets[].name":                                                              "mapped: PodSet.Name",
	"WorkloadSpec.podSets[].template":                                                          "mapped: PodSet.PerPod (Kueue's effective request), PodSet.Tolerations, the flavors its tolerations, node selector and affinity allow",
	"WorkloadSpec.podSets[].count":                                                             "mapped: PodSet.Count",
	"WorkloadSpec.podSets[].minCount":                                                          "mapped: PodSet.MinCount (partial admission); beside slices, warned and decided at the full count",
	"WorkloadSpec.podSets[].topologyRequest.required":                                          "mapped: Topology.Required",
	"WorkloadSpec.podSets[].topologyRequest.preferred":                                         "mapped: Topology.Preferred",
	"WorkloadSpec.podSets[].topologyRequest.unconstrained":                                     "mapped: neither required nor preferred; topology-aware flavors only",
	"WorkloadSpec.podSets[].topologyRequest.podIndexLabel":                                     "identity: the label Kueue reads pods' indexes from when it assigns them",
	"WorkloadSpec.podSets[].topologyRequest.subGroupIndexLabel":                                "identity: the label Kueue reads sub-groups' indexes from when it assigns them",
	"WorkloadSpec.podSets[].topologyRequest.subGroupCount":                                     "identity: how many sub-groups Kueue numbers when it assigns pods",
	"WorkloadSpec.podSets[].topologyRequest.podSetGroupName":                                   "mapped: Topology.Group",
	"WorkloadSpec.podSets[].topologyRequest.podSetSliceRequiredTopology":                       "mapped: Topology.Slices[0].Level",
	"WorkloadSpec.podSets[].topologyRequest.podSetSliceSize":                                   "mapped: Topology.Slices[0].Size",
	"WorkloadSpec.podSets[].topologyRequest.podsetSliceRequiredTopologyConstraints[].topology": "warned: ignored, as Kueue ignores it without its alpha TASMultiLayerTopology gate",
	"WorkloadSpec.podSets[].topologyRequest.podsetSliceRequiredTopologyConstraints[].size":     "warned: ignored, as Kueue ignores it without its alpha TASMultiLayerTopology gate",
	"WorkloadSpec.queueName":                                                                   "mapped: Request.Queue, through the LocalQueue",
	"WorkloadSpec.priorityClassRef.group":                                                      "mapped: which class the priority comes from",
	"WorkloadSpec.priorityClassRef.kind":                                                       "mapped: which class the priority comes from",
	"WorkloadSpec.priorityClassRef.name":                                                       "mapped: Request.Priority, when spec.priority is not set",
	"WorkloadSpec.priority":                                                                    "mapped: Request.Priority",
	"WorkloadSpec.active":                                                                      "mapped: an inactive Workload is not pending",
	"WorkloadSpec.maximumExecutionTimeSeconds":                                                 "warned: read as ExpectedRuntime; eviction at the limit is not modelled",
	"WorkloadSpec.preemptionGates[].name":                                                      "warned: preemption gates are not modelled",
}
