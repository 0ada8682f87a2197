// Package labels_test holds allot's labels package to apimachinery's label
// selectors: what metav1.LabelSelectorAsSelector refuses, Validate
// refuses, and what it accepts, both match alike on every set of labels,
// and both write alike; namespace labels and names are held to
// apimachinery's validation of them.
package labels_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/allot-sched/allot/labels"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	klabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// keys and values mix valid and invalid ones around each rule's edges.
var (
	keys = []string{"team", "tier", "zone", "kubernetes.io/metadata.name", "example.com/team", "a.b_c-d", "A9",
		"", "-team", "team-", "a b", "/team", "team/", "a/b/c", "Example.com/x", "ex_ample.com/x", "x." + strings.Repeat("a", 62),
		strings.Repeat("k", 63), strings.Repeat("k", 64), strings.Repeat("a.", 125) + "abc/x", strings.Repeat("a.", 125) + "abcd/x"}
	values = []string{"ml", "web", "gold", "", "A.b_c-9", "-x", "x-", "a b", "x/y", strings.Repeat("v", 63), strings.Repeat("v", 64), "team-a"}
	ops    = []metav1.LabelSelectorOperator{metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn, metav1.LabelSelectorOpExists,
		metav1.LabelSelectorOpDoesNotExist, "Equals", "in", ""}
)

// selector draws a selector and its Kubernetes twin; valid ones mostly.
func selector(rng *rand.Rand) (*labels.Selector, *metav1.LabelSelector) {
	pick := func(xs []string, tame int) string {
		if rng.IntN(6) != 0 {
			return xs[rng.IntN(tame)]
		}
		return xs[rng.IntN(len(xs))]
	}
	var s labels.Selector
	var k metav1.LabelSelector
	for range rng.IntN(3) {
		if s.MatchLabels == nil {
			s.MatchLabels, k.MatchLabels = map[string]string{}, map[string]string{}
		}
		key, v := pick(keys, 5), pick(values, 4)
		s.MatchLabels[key], k.MatchLabels[key] = v, v
	}
	for range rng.IntN(4) {
		op := ops[rng.IntN(4)]
		if rng.IntN(12) == 0 {
			op = ops[rng.IntN(len(ops))]
		}
		var vs []string
		n := 0
		switch op {
		case metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn:
			n = 1 + rng.IntN(3)
		}
		if rng.IntN(12) == 0 {
			n = rng.IntN(3)
		}
		for range n {
			vs = append(vs, pick(values, 4))
		}
		key := pick(keys, 5)
		s.MatchExpressions = append(s.MatchExpressions, labels.Requirement{Key: key, Operator: labels.Operator(op), Values: vs})
		k.MatchExpressions = append(k.MatchExpressions, metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: append([]string(nil), vs...)})
	}
	return &s, &k
}

// set draws a set of labels from the tame keys and values.
func set(rng *rand.Rand) map[string]string {
	out := map[string]string{}
	for range rng.IntN(5) {
		out[keys[rng.IntN(5)]] = values[rng.IntN(4)]
	}
	return out
}

func TestSelectorsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for i := range 100_000 {
		s, k := selector(rng)
		ks, kerr := metav1.LabelSelectorAsSelector(k)
		err := s.Validate()
		if (err == nil) != (kerr == nil) {
			js, _ := json.Marshal(s)
			t.Fatalf("selector %d %s: Validate %v, apimachinery %v", i, js, err, kerr)
		}
		if err != nil {
			continue
		}
		accepted++
		distinct := len(s.MatchLabels)+len(s.MatchExpressions) == len(keysOf(s))
		if distinct && s.String() != ks.String() {
			js, _ := json.Marshal(s)
			t.Fatalf("selector %d %s: String %q, apimachinery %q", i, js, s.String(), ks.String())
		}
		for range 8 {
			ls := set(rng)
			if got, want := s.Matches(ls), ks.Matches(klabels.Set(ls)); got != want {
				js, _ := json.Marshal(s)
				t.Fatalf("selector %d %s on %v: Matches %v, apimachinery %v", i, js, ls, got, want)
			}
			if _, mismatched := s.Mismatch(ls); mismatched == s.Matches(ls) {
				t.Fatalf("selector %d on %v: Mismatch says %v, Matches %v", i, ls, mismatched, s.Matches(ls))
			}
		}
	}
	if accepted < 30_000 {
		t.Fatalf("only %d of 100000 selectors valid: the test draws too many bad ones", accepted)
	}
}

// keysOf is the distinct keys of s's requirements.
func keysOf(s *labels.Selector) map[string]bool {
	out := map[string]bool{}
	for k := range s.MatchLabels {
		out[k] = true
	}
	for _, r := range s.MatchExpressions {
		out[r.Key] = true
	}
	return out
}

func TestNilAndEmpty(t *testing.T) {
	nothing, _ := metav1.LabelSelectorAsSelector(nil)
	everything, _ := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{})
	for _, ls := range []map[string]string{nil, {}, {"team": "ml"}} {
		if got, want := (*labels.Selector)(nil).Matches(ls), nothing.Matches(klabels.Set(ls)); got != want {
			t.Errorf("nil on %v: %v, apimachinery %v", ls, got, want)
		}
		if got, want := (&labels.Selector{}).Matches(ls), everything.Matches(klabels.Set(ls)); got != want {
			t.Errorf("empty on %v: %v, apimachinery %v", ls, got, want)
		}
	}
}

func TestLabelSetsAndNamesAgree(t *testing.T) {
	for _, k := range keys {
		for _, v := range values {
			err := labels.ValidateSet(map[string]string{k: v})
			kerrs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...)
			if (err == nil) != (len(kerrs) == 0) {
				t.Errorf("label %q: %q: ValidateSet %v, apimachinery %v", k, v, err, kerrs)
			}
		}
	}
	for _, name := range append(append([]string{"a", "0", "a-b", "A", "a_b", "a.b"}, keys...), values...) {
		if got, want := labels.DNSLabelFault(name) == "", len(validation.IsDNS1123Label(name)) == 0; got != want {
			t.Errorf("namespace name %q: valid %v, apimachinery %v", name, got, want)
		}
	}
}
