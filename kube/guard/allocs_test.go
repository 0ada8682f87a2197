package guard_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/allot-sched/allot/kube/guard"
)

// The handler's allocation budgets on the 10,240-node benchmark cluster
// (issue 18: at most 100 a request), pinned a little above what they
// are: a new gang's review decoded, translated, decided and answered,
// and the review of a gang already answered.
func TestReviewAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the 10,240-node cluster")
	}
	if raceEnabled {
		t.Skip("the race detector drops pooled buffers at random")
	}
	benchOnce.Do(func() { benchSrc = benchCluster(t, 10240) })
	for _, c := range []struct {
		path string
		new  bool
		max  float64
	}{{"decide", true, 96}, {"cached", false, 13}} {
		t.Run(c.path, func(t *testing.T) {
			g, err := guard.New(benchSrc, guard.Options{})
			if err != nil {
				t.Fatal(err)
			}
			const runs = 200
			reviews := make([][]byte, runs+1)
			for i := range reviews {
				reviews[i] = gangReview(t, fmt.Sprintf("gang-%d", i), 8)
			}
			body := bytes.NewReader(nil)
			req, err := http.NewRequest(http.MethodPost, "/validate", nil)
			if err != nil {
				t.Fatal(err)
			}
			rc := io.NopCloser(body)
			w := &discard{h: http.Header{}}
			i := 0
			allocs := testing.AllocsPerRun(runs, func() {
				body.Reset(reviews[i])
				req.Body, req.ContentLength = rc, int64(body.Len())
				w.body.Reset()
				g.ServeHTTP(w, req)
				if c.new {
					i++
				}
			})
			if !bytes.Contains(w.body.Bytes(), []byte(`"allowed":true`)) {
				t.Fatalf("answer %s: want the gang allowed", w.body.Bytes())
			}
			if allocs > c.max {
				t.Errorf("%v allocations a review, want at most %v", allocs, c.max)
			}
			t.Logf("%v allocations a review", allocs)
		})
	}
}
