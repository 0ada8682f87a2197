package allot

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The heads queueLines reads ahead of the cursors are those one seek from
// each cursor finds (Snapshot.queueHead), through random sequences of
// heads stepping aside, admissions committed and heard of (as cycles and
// filling hear them), rewinds and submissions from elsewhere, on queues
// long enough to read past a batch.
func TestQueueLinesReadAheadAsSeek(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 43))
	heads, batches := 0, 0
	for world := range 100 {
		b := fillingWorld(rng)
		for q := range b.Queues {
			for k := range rng.IntN(3 * aheadRead) {
				b.Pending = append(b.Pending, Workload{ID: fmt.Sprintf("x%d-%02d", q, k), Queue: b.Queues[q].Name, Priority: int32(rng.IntN(2)),
					SubmittedAt: int64(rng.IntN(20)), PodSets: []PodSet{{Name: "a", Count: 1, PerPod: Resources{"gpu": 1}}}})
			}
		}
		s, err := b.Build()
		if err != nil {
			t.Fatalf("world %d: %v", world, err)
		}
		st := NewStore(s)
		l := newLines(s)
		stepped := make([]int, len(s.queues))
		for step := range 400 {
			s := st.Load()
			q := int32(rng.IntN(len(s.queues)))
			at := l.after[q]
			if at == nil {
				at = &l.start[q]
			}
			want := s.queueHead(s.queues[q].Name, at, l.skip)
			got := l.head(s, q)
			if got != want {
				t.Fatalf("world %d step %d queue %d: head %v, one seek %v", world, step, q, got, want)
			}
			if got == nil {
				continue
			}
			heads++
			switch k := rng.IntN(20); {
			case k < 14:
				l.stepAside(q, got)
				if stepped[q]++; stepped[q] == aheadRead+1 {
					batches++
				}
			case k < 17:
				d := Decide(s, Request(*got))
				if d.Verdict != VerdictAdmit {
					l.stepAside(q, got)
					continue
				}
				next, err := st.Commit(d)
				if err != nil {
					t.Fatalf("world %d step %d: commit: %v", world, step, err)
				}
				if rng.IntN(2) == 0 {
					l.committed(q, &d, next)
				} else {
					l.admitted(q, s.version, next.version)
				}
			case k < 18:
				l.rewind()
			default:
				w := Workload{ID: fmt.Sprintf("y%03d", step), Queue: s.queues[q].Name, Priority: int32(rng.IntN(2)), SubmittedAt: int64(rng.IntN(20)),
					PodSets: []PodSet{{Name: "a", Count: 1, PerPod: Resources{"gpu": 1}}}}
				if _, err := st.Apply(Submit{Workload: w}); err != nil {
					t.Fatalf("world %d step %d: submit: %v", world, step, err)
				}
			}
		}
	}
	t.Logf("%d heads compared, %d queues read past a batch", heads, batches)
	if batches < 100 {
		t.Errorf("only %d queues read past a batch: the test reaches too little", batches)
	}
}
