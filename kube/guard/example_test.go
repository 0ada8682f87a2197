package guard_test

import (
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/allot-sched/allot/kube/guard"
	"github.com/allot-sched/allot/kube/kueueconfig"
)

// A guard over the seeds' configuration and a cluster of two racks of
// four 8-GPU nodes: a Job of five 8-GPU pods that requires one rack can
// never be admitted, and is denied with the decision's reason.
func Example() {
	src, _, err := guard.LoadStatic(kueueconfig.Options{}, "../testdata/seeds/training-cq-fixed.yaml", "../testdata/cluster")
	if err != nil {
		panic(err)
	}
	g, err := guard.New(src, guard.Options{})
	if err != nil {
		panic(err)
	}
	job := `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"rack-5x8","namespace":"ml-training","labels":{"kueue.x-k8s.io/queue-name":"training"}},
	"spec":{"parallelism":5,"completions":5,"suspend":true,"template":{"metadata":{"annotations":{"kueue.x-k8s.io/podset-required-topology":"cloud.example.com/topology-rack"}},
	"spec":{"restartPolicy":"Never","containers":[{"name":"train","image":"train","resources":{"requests":{"nvidia.com/gpu":"8"}}}],
	"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]}}}}`
	resp, out := g.Review(&admissionv1.AdmissionRequest{UID: "1", Operation: admissionv1.Create,
		Kind: metav1.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, Object: runtime.RawExtension{Raw: []byte(job)}})
	fmt.Println(resp.Allowed, out.Verdict, out.Reason)
	fmt.Println(resp.Result.Code, resp.Result.Message)
	// Output:
	// false Reject NeverFits
	// 403 allot: NeverFits: no domain of a100-80gb could ever hold pod set "main": on an empty cluster it fits only 4 of 5 pods at level cloud.example.com/topology-rack
}
