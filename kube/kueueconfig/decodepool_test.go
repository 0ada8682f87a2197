package kueueconfig_test

import (
	"reflect"
	"testing"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/allot-sched/allot/kube/kueueconfig"
)

// Decoding through the pooled decoders answers each object alone: a
// strict error is the object's own, never one left by an object decoded
// before, and a clean object after a failed one decodes clean.
func TestDecodeJSONPooled(t *testing.T) {
	const (
		clean     = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"a","namespace":"ml","labels":{"k":"v"}},"spec":{"parallelism":2}}`
		unknown   = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"b","namespace":"ml"},"spec":{"paralelism":2}}`
		duplicate = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"c","namespace":"ml"},"spec":{"parallelism":2,"parallelism":3}}`
		trailing  = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"d"}} }`
		mistyped  = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"e"},"spec":{"parallelism":"2"}}`
	)
	want := map[string]string{
		unknown:   `kueueconfig: cannot decode: Job: jobs/ml/b: unknown field "spec.paralelism"`,
		duplicate: `kueueconfig: cannot decode: Job: jobs/ml/c: duplicate field "spec.parallelism"`,
	}
	for i := range 3 {
		for _, js := range []string{clean, unknown, clean, duplicate, trailing, clean, mistyped, clean} {
			objs, err := kueueconfig.DecodeJSON("Job", []byte(js))
			switch js {
			case clean:
				if err != nil || len(objs) != 1 {
					t.Fatalf("round %d: clean Job: %v, %d objects", i, err, len(objs))
				}
				j := objs[0].Value.(*batchv1.Job)
				if j.Name != "a" || *j.Spec.Parallelism != 2 || !reflect.DeepEqual(j.Labels, map[string]string{"k": "v"}) {
					t.Fatalf("round %d: clean Job decoded as %+v", i, j)
				}
			case trailing, mistyped:
				if err == nil {
					t.Errorf("round %d: %s decoded", i, js)
				}
			default:
				if err == nil || err.Error() != want[js] {
					t.Errorf("round %d: %v, want %s", i, err, want[js])
				}
			}
		}
	}
}
