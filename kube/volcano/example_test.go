package volcano_test

import (
	"fmt"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/volcano"
)

// Two Volcano queues on a cluster of 32 GPUs: each is guaranteed 8, and
// the root cohort holds the 16 the guarantees leave, for both to borrow
// by weight.
func ExampleBuilder() {
	docs := [][]byte{
		[]byte("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: a}\nspec:\n  weight: 3\n  guarantee: {resource: {nvidia.com/gpu: 8}}\n"),
		[]byte("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: b}\nspec:\n  guarantee: {resource: {nvidia.com/gpu: 8}}\n  capability: {nvidia.com/gpu: 12}\n"),
	}
	qs, _, err := volcano.Decode(docs)
	if err != nil {
		panic(err)
	}
	b, _, err := volcano.Builder(qs, volcano.Options{Capacity: allot.Resources{"nvidia.com/gpu": 32}})
	if err != nil {
		panic(err)
	}
	fmt.Println("root holds", b.Cohorts[0].Quota[0].Resources[0].Nominal)
	for _, q := range b.Queues {
		rq := q.Quota[0].Resources[0]
		limit := "none"
		if rq.BorrowingLimit != nil {
			limit = fmt.Sprint(*rq.BorrowingLimit)
		}
		fmt.Printf("%s: weight %v, nominal %d, lends %d, borrows up to %s\n", q.Name, *q.FairSharing.Weight, rq.Nominal, *rq.LendingLimit, limit)
	}
	// Output:
	// root holds 16
	// a: weight 3, nominal 8, lends 0, borrows up to none
	// b: weight 1, nominal 8, lends 0, borrows up to 4
}
