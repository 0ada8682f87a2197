package explain_test

import (
	"os"

	"github.com/allot-sched/allot/kube/explain"
	"github.com/allot-sched/allot/kube/kueueconfig"
)

// Kueue's no before quota and placement, for a person and as JSON.
func ExampleWriteInadmissible() {
	e := &kueueconfig.InadmissibleError{Object: "jobs/ml/train", Reason: kueueconfig.ReasonLocalQueueNotFound, Message: "LocalQueue batch doesn't exist"}
	explain.WriteInadmissible(os.Stdout, e, false)
	explain.WriteInadmissible(os.Stdout, e, true)
	// Output:
	// jobs/ml/train
	// verdict: Queue (LocalQueueNotFound): Kueue keeps it pending before quota and placement are looked at
	// message: LocalQueue batch doesn't exist
	// {
	//   "verdict": "Queue",
	//   "reason": "LocalQueueNotFound",
	//   "message": "LocalQueue batch doesn't exist",
	//   "object": "jobs/ml/train"
	// }
}
