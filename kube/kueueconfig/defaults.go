// The defaults Kueue's CRDs give the fields an object leaves out, applied
// before validation as the API server applies them.

package kueueconfig

import (
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// applyDefaults fills in the CRD defaults of a Kueue object (the
// kubebuilder:default markers of its API types); other objects are left
// as they are.
func applyDefaults(v any) {
	switch o := v.(type) {
	case *kueue.ClusterQueue:
		s := &o.Spec
		if s.QueueingStrategy == "" {
			s.QueueingStrategy = kueue.BestEffortFIFO
		}
		if s.FlavorFungibility == nil {
			s.FlavorFungibility = &kueue.FlavorFungibility{}
		}
		if s.FlavorFungibility.WhenCanBorrow == "" {
			s.FlavorFungibility.WhenCanBorrow = kueue.MayStopSearch
		}
		if s.FlavorFungibility.WhenCanPreempt == "" {
			s.FlavorFungibility.WhenCanPreempt = kueue.TryNextFlavor
		}
		if s.Preemption == nil {
			s.Preemption = &kueue.ClusterQueuePreemption{}
		}
		if s.Preemption.ReclaimWithinCohort == "" {
			s.Preemption.ReclaimWithinCohort = kueue.PreemptionPolicyNever
		}
		if s.Preemption.WithinClusterQueue == "" {
			s.Preemption.WithinClusterQueue = kueue.PreemptionPolicyNever
		}
		if s.Preemption.BorrowWithinCohort == nil {
			s.Preemption.BorrowWithinCohort = &kueue.BorrowWithinCohort{}
		}
		if s.Preemption.BorrowWithinCohort.Policy == "" {
			s.Preemption.BorrowWithinCohort.Policy = kueue.BorrowWithinCohortPolicyNever
		}
		if s.StopPolicy == nil {
			s.StopPolicy = ptr.To(kueue.None)
		}
		defaultWeight(s.FairSharing)
	case *kueue.Cohort:
		defaultWeight(o.Spec.FairSharing)
	case *kueue.LocalQueue:
		if o.Spec.StopPolicy == nil {
			o.Spec.StopPolicy = ptr.To(kueue.None)
		}
		defaultWeight(o.Spec.FairSharing)
	case *kueue.Workload:
		if o.Spec.Active == nil {
			o.Spec.Active = ptr.To(true)
		}
		for i := range o.Spec.PodSets {
			if o.Spec.PodSets[i].Name == "" {
				o.Spec.PodSets[i].Name = kueue.DefaultPodSetName
			}
		}
	}
}

func defaultWeight(fs *kueue.FairSharing) {
	if fs != nil && fs.Weight == nil {
		fs.Weight = ptr.To(resource.MustParse("1"))
	}
}
