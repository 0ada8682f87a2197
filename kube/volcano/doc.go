// Package volcano reads Volcano's Queues and PodGroups as allot's queues,
// cohorts and requests.
//
// Volcano's API module (volcano.sh/apis) is not served by the module proxy
// this project installs from, so the objects are read unstructured, by
// apimachinery, field by field as Volcano's scheduling.volcano.sh/v1beta1
// types name them: Decode takes the YAML or JSON of Queue and PodGroup
// objects (one or many, or a List), DecodeQueue and DecodePodGroup one
// unstructured object.
//
// A Queue is a queue of one flavor under a cohort shared by all (Volcano's
// root queue): its guarantee its nominal quota, never lent; its capability
// its hard cap; its weight its fair-sharing weight; a hierarchical queue's
// parent its cohort, a queue that is some queue's parent a cohort itself.
// The root cohort holds the cluster's capacity beyond the guarantees, which
// the queues borrow by weight, reclaiming it from each other as Volcano's
// reclaim action does. A PodGroup, with the tasks its pods make, is a
// request: minMember and minTaskMember its pod sets' minimums, queue its
// queue, priorityClassName its priority, minResources checked against the
// pods' own requests. The README's table lists each field.
package volcano
