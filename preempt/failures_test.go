package preempt

import (
	"reflect"
	"testing"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
)

// A failure answers a preemptor that asks the search the same, and only
// such a one: what the search reads tells them apart, what it does not
// (the sizing hint, a submission time no policy compares) does not.
func TestFailuresAnswerTheSameSearchOnly(t *testing.T) {
	fq := &quota.FlavorQuota{}
	base := func() Preemptor {
		return Preemptor{Queue: qa, Policies: Policies{WithinQueue: LowerPriority, Reclaim: Any}, Priority: 5, SubmittedAt: 100,
			Need: []res.Vec{{gpu: 4}}, Open: []res.Vec{{}}, Quota: []*quota.FlavorQuota{fq},
			Sets: []gang.PodSet{{Flavor: 0, Count: 2, GPUs: 2, Res: res.Vec{gpu: 2}, Exclude: []uint64{1}}}}
	}
	for _, c := range []struct {
		name   string
		change func(p *Preemptor)
		same   bool
	}{
		{"the same", func(p *Preemptor) {}, true},
		{"submission, no policy compares it", func(p *Preemptor) { p.SubmittedAt = 7 }, true},
		{"submission under LowerOrNewerEqualPriority", func(p *Preemptor) {
			p.Policies.WithinQueue, p.SubmittedAt = LowerOrNewerEqualPriority, 7
		}, false},
		{"queue", func(p *Preemptor) { p.Queue = qb }, false},
		{"priority", func(p *Preemptor) { p.Priority = 4 }, false},
		{"policies", func(p *Preemptor) { p.Policies.Reclaim = LowerPriority }, false},
		{"exhausted", func(p *Preemptor) { p.Exhausted = true }, false},
		{"need", func(p *Preemptor) { p.Need = []res.Vec{{gpu: 3}} }, false},
		{"open", func(p *Preemptor) { p.Open = []res.Vec{{gpu: 1}} }, false},
		{"no quota", func(p *Preemptor) { p.Quota = []*quota.FlavorQuota{nil} }, false},
		{"no pod sets on nodes", func(p *Preemptor) { p.Sets = nil }, false},
		{"a pod set's count", func(p *Preemptor) {
			p.Sets = []gang.PodSet{{Flavor: 0, Count: 1, GPUs: 2, Res: res.Vec{gpu: 2}, Exclude: []uint64{1}}}
		}, false},
		{"a pod set's exclusions", func(p *Preemptor) { p.Sets = []gang.PodSet{{Flavor: 0, Count: 2, GPUs: 2, Res: res.Vec{gpu: 2}}} }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f Failures
			kept := base()
			c.change(&kept)
			f.Add(&kept)
			// The caller's memory is reused after Add: the failure is a copy.
			kept.Need[0][gpu] = 99
			if kept.Sets != nil {
				kept.Sets[0].Count = 99
			}
			asked := base()
			if c.change(&asked); !f.Failed(&asked) {
				t.Fatal("a preemptor changed the same way is not answered")
			}
			if got := f.Failed(ptr(base())); got != c.same {
				t.Fatalf("the unchanged preemptor answered %v, want %v", got, c.same)
			}
			f.Reset()
			if f.Failed(&asked) || f.Len() != 0 {
				t.Fatal("answered after Reset")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestFailuresKnowEveryField fails when Preemptor gains a field that asks
// does not know of: the failures would answer for a search they never
// ran. Each field is compared by asks, or named here with why it is not.
func TestFailuresKnowEveryField(t *testing.T) {
	known := map[string]string{
		"Queue": "compared", "Policies": "compared", "Priority": "compared", "Need": "compared", "Open": "compared",
		"Exhausted": "compared", "Sets": "compared", "Quota": "compared: which flavors have one",
		"SubmittedAt": "compared where a policy reads it",
	}
	ty := reflect.TypeOf(Preemptor{})
	for i := range ty.NumField() {
		if _, ok := known[ty.Field(i).Name]; !ok {
			t.Errorf("Preemptor.%s: does asks compare it? Add it there and here", ty.Field(i).Name)
		}
	}
	if ty.NumField() != len(known) {
		t.Errorf("Preemptor has %d fields, this test knows %d", ty.NumField(), len(known))
	}
}
