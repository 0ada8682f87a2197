package guard_test

import (
	"fmt"
	"sync"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/guard"
)

// Many reviews at once, of gangs old and new, while the store publishes
// new versions: every answer is the one a lone review gives (go test
// -race checks the cache and the flavor counts).
func TestConcurrentReviews(t *testing.T) {
	src := &storeSource{Static: source(t)}
	src.store = allot.NewStore(src.Static.Snapshot())
	obs := &counter{}
	g, err := guard.New(src, guard.Options{Observer: obs, CacheSize: 8, SmallPodMinFreeShare: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	fits := make([][]byte, 16)
	for i := range fits {
		fits[i] = review(t, "Job", admissionv1.Create, job(t, "block-4x8.yaml", named(fmt.Sprintf("fits-%d", i%4))))
	}
	never := review(t, "Job", admissionv1.Create, job(t, "rack-4x8.yaml", parallelism(5)))
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				if resp, _, _ := post(t, g, fits[(w+i)%len(fits)]); resp == nil || !resp.Allowed {
					t.Errorf("a gang that fits: %+v", resp)
				}
				if resp, _, _ := post(t, g, never); resp == nil || resp.Allowed {
					t.Errorf("a gang that never fits: %+v", resp)
				}
			}
		}()
	}
	for range 10 {
		if _, err := src.store.Apply(allot.AdvanceTime{Seconds: 1}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if len(obs.out) != 8*20*2 {
		t.Errorf("%d outcomes, want %d", len(obs.out), 8*20*2)
	}
}
