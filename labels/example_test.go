package labels_test

import (
	"fmt"

	"github.com/allot-sched/allot/labels"
)

func ExampleSelector_Matches() {
	sel := &labels.Selector{
		MatchLabels:      map[string]string{"team": "ml"},
		MatchExpressions: []labels.Requirement{{Key: "restricted", Operator: labels.DoesNotExist}},
	}
	fmt.Println(sel.String())
	fmt.Println(sel.Matches(map[string]string{"team": "ml"}))
	fmt.Println(sel.Matches(map[string]string{"team": "ml", "restricted": "true"}))
	fmt.Println(sel.Mismatch(map[string]string{"team": "web"}))
	var nothing *labels.Selector
	fmt.Println((&labels.Selector{}).Matches(nil), nothing.Matches(nil))
	// Output:
	// !restricted,team=ml
	// true
	// false
	// team=ml true
	// true false
}
