package scenario_test

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/scenario"
	"github.com/allot-sched/allot/labels"
)

// tenancyCluster is cluster with namespaces, priority classes, a queue
// that restricts both and a local queue into it.
const tenancyCluster = `"name": "t", "now": 10,
 "resources": ["gpu"],
 "flavors": [{"name": "a100"}],
 "nodes": [{"name": "n0", "flavor": "a100", "capacity": {"gpu": 8}}],
 "namespaces": [{"name": "ml", "labels": {"team": "ml"}}, {"name": "web"}],
 "priorityClasses": [{"name": "low", "value": 10}, {"name": "high", "value": 1000}],
 "queues": [{"name": "q", "quota": {"a100": {"gpu": {"nominal": 8}}},
             "namespaceSelector": {"matchLabels": {"team": "ml"},
                                   "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["free"]},
                                                        {"key": "frozen", "operator": "DoesNotExist"}]},
             "priorityClasses": ["low"]},
            {"name": "open", "quota": {"a100": {"gpu": {"nominal": 8}}}, "namespaceSelector": {}}],
 "localQueues": [{"namespace": "ml", "name": "train", "clusterQueue": "q"}]`

func TestParseTenancy(t *testing.T) {
	data := "{" + tenancyCluster + `,
	 "pending": [{"id": "p", "tenant": "ml", "localQueue": "train", "priorityClass": "low", "priority": 10,
	              "podSets": [{"name": "main", "count": 1, "perPod": {"gpu": 1}}]}],
	 "steps": [{"setNamespace": {"name": "web", "labels": {"team": "ml"}}},
	           {"removeNamespace": "web"},
	           {"setLocalQueue": {"namespace": "web", "name": "train", "clusterQueue": "q"}},
	           {"removeLocalQueue": {"namespace": "ml", "name": "train"}},
	           {"setPriorityClass": {"name": "low", "value": 5}},
	           {"removePriorityClass": "high"},
	           {"decide": {"id": "r", "tenant": "ml", "localQueue": "train", "priorityClass": "low", "priority": 5,
	                       "podSets": [{"name": "main", "count": 1, "perPod": {"gpu": 1}}]}}]}`
	s, err := scenario.Parse("t.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	b := s.Builder()
	want := allot.Builder{
		Namespaces:      []allot.Namespace{{Name: "ml", Labels: map[string]string{"team": "ml"}}, {Name: "web"}},
		PriorityClasses: []allot.PriorityClass{{Name: "low", Value: 10}, {Name: "high", Value: 1000}},
		LocalQueues:     []allot.LocalQueue{{Namespace: "ml", Name: "train", ClusterQueue: "q"}},
	}
	if !reflect.DeepEqual(b.Namespaces, want.Namespaces) || !reflect.DeepEqual(b.PriorityClasses, want.PriorityClasses) ||
		!reflect.DeepEqual(b.LocalQueues, want.LocalQueues) {
		t.Fatalf("%+v %+v %+v", b.Namespaces, b.PriorityClasses, b.LocalQueues)
	}
	sel := &labels.Selector{MatchLabels: map[string]string{"team": "ml"}, MatchExpressions: []labels.Requirement{
		{Key: "tier", Operator: labels.NotIn, Values: []string{"free"}}, {Key: "frozen", Operator: labels.DoesNotExist}}}
	if q := b.Queues[0]; !reflect.DeepEqual(q.NamespaceSelector, sel) || !reflect.DeepEqual(q.PriorityClasses, []string{"low"}) {
		t.Fatalf("queue %+v %+v", q.NamespaceSelector, q.PriorityClasses)
	}
	if q := b.Queues[1]; q.NamespaceSelector == nil || q.NamespaceSelector.MatchLabels != nil || q.NamespaceSelector.MatchExpressions != nil {
		t.Fatalf("the empty selector: %+v", q.NamespaceSelector)
	}
	if p := b.Pending[0]; p.Queue != "" || p.LocalQueue != "train" || p.PriorityClass != "low" {
		t.Fatalf("pending %+v", p)
	}
	events := []allot.Event{
		allot.SetNamespace{Namespace: allot.Namespace{Name: "web", Labels: map[string]string{"team": "ml"}}},
		allot.RemoveNamespace{Name: "web"},
		allot.SetLocalQueue{LocalQueue: allot.LocalQueue{Namespace: "web", Name: "train", ClusterQueue: "q"}},
		allot.RemoveLocalQueue{Namespace: "ml", Name: "train"},
		allot.SetPriorityClass{PriorityClass: allot.PriorityClass{Name: "low", Value: 5}},
		allot.RemovePriorityClass{Name: "high"},
	}
	names := []string{`setNamespace "web"`, `removeNamespace "web"`, `setLocalQueue "web/train"`, `removeLocalQueue "ml/train"`,
		`setPriorityClass "low"`, `removePriorityClass "high"`}
	for i, ev := range events {
		got, ok := s.Steps[i].Event()
		if !ok || !reflect.DeepEqual(got, ev) || s.Steps[i].String() != names[i] {
			t.Errorf("step %d: %#v %v (%s), want %#v (%s)", i, got, ok, s.Steps[i], ev, names[i])
		}
	}
	if r := s.Steps[6].Request; r.LocalQueue != "train" || r.Tenant != "ml" || r.PriorityClass != "low" {
		t.Fatalf("request %+v", r)
	}
}

func TestParseTenancyErrors(t *testing.T) {
	for _, c := range []struct {
		name, data, path, want string
	}{
		{"unknown namespace field", `{"namespaces": [{"name": "ml", "lables": {}}]}`, "$.namespaces[0].lables", `unknown field "lables"`},
		{"duplicate namespace", `{"namespaces": [{"name": "ml"}, {"name": "ml"}]}`, "$.namespaces[1].name", `duplicate namespace "ml"`},
		{"namespace without a name", `{"namespaces": [{"labels": {}}]}`, "$.namespaces[0]", `missing field "name"`},
		{"class without a value", `{"priorityClasses": [{"name": "low"}]}`, "$.priorityClasses[0]", `missing field "value"`},
		{"class value out of range", `{"priorityClasses": [{"name": "low", "value": 3000000000}]}`, "$.priorityClasses[0].value", "out of range"},
		{"duplicate class", `{"priorityClasses": [{"name": "low", "value": 1}, {"name": "low", "value": 2}]}`, "$.priorityClasses[1].name", `duplicate priority class "low"`},
		{"queue names an unknown class", `{"flavors": [{"name": "f"}], "queues": [{"name": "q", "priorityClasses": ["high"]}]}`,
			"$.queues[0].priorityClasses[0]", `unknown priority class "high"`},
		{"unknown selector field", `{"queues": [{"name": "q", "namespaceSelector": {"matchLabel": {}}}]}`,
			"$.queues[0].namespaceSelector.matchLabel", `unknown field "matchLabel"`},
		{"unknown operator", `{"queues": [{"name": "q", "namespaceSelector": {"matchExpressions": [{"key": "a", "operator": "Equals"}]}}]}`,
			"$.queues[0].namespaceSelector.matchExpressions[0].operator", `"Equals" is not one of In, NotIn, Exists, DoesNotExist`},
		{"expression without an operator", `{"queues": [{"name": "q", "namespaceSelector": {"matchExpressions": [{"key": "a"}]}}]}`,
			"$.queues[0].namespaceSelector.matchExpressions[0]", `missing field "operator"`},
		{"label value of the wrong type", `{"queues": [{"name": "q", "namespaceSelector": {"matchLabels": {"a": 1}}}]}`,
			"$.queues[0].namespaceSelector.matchLabels.a", "want a string"},
		{"local queue in an unknown namespace", `{"queues": [{"name": "q"}], "localQueues": [{"namespace": "ml", "name": "t", "clusterQueue": "q"}]}`,
			"$.localQueues[0].namespace", `unknown namespace "ml"`},
		{"local queue to an unknown queue", `{"namespaces": [{"name": "ml"}], "localQueues": [{"namespace": "ml", "name": "t", "clusterQueue": "q"}]}`,
			"$.localQueues[0].clusterQueue", `unknown queue "q"`},
		{"duplicate local queue", `{"namespaces": [{"name": "ml"}], "queues": [{"name": "q"}], "localQueues": [{"namespace": "ml", "name": "t", "clusterQueue": "q"},
			{"namespace": "ml", "name": "t", "clusterQueue": "q"}]}`, "$.localQueues[1].name", `duplicate local queue "t" of namespace "ml"`},
		{"pending without queue or local queue", `{"pending": [{"id": "p", "podSets": [{"name": "m", "count": 1}]}]}`, "$.pending[0]", `missing field "queue"`},
		{"unknown step field", `{"steps": [{"setNamespace": {"name": "ml", "label": {}}}]}`, "$.steps[0].setNamespace.label", `unknown field "label"`},
		{"remove local queue without namespace", `{"steps": [{"removeLocalQueue": {"name": "t"}}]}`, "$.steps[0].removeLocalQueue", `missing field "namespace"`},
		{"remove class of the wrong type", `{"steps": [{"removePriorityClass": {"name": "low"}}]}`, "$.steps[0].removePriorityClass", "want a string"},
		{"two actions", `{"steps": [{"removeNamespace": "a", "removePriorityClass": "b"}]}`, "$.steps[0]", "a step has one action"},
	} {
		_, err := scenario.Parse("t.json", []byte(c.data))
		var se *scenario.Error
		if !errors.As(err, &se) || se.Path != c.path || !strings.Contains(se.Reason, c.want) {
			t.Errorf("%s: %v, want %s: ...%s...", c.name, err, c.path, c.want)
		}
	}
}

// TestRunTenancy: a scenario's steps change namespaces, local queues and
// classes on the store, and the decisions follow.
func TestRunTenancy(t *testing.T) {
	req := func(id, tenant, class string, priority int, reason string) string {
		return `{"decide": {"id": "` + id + `", "tenant": "` + tenant + `", "localQueue": "train", "priorityClass": "` + class +
			`", "priority": ` + strconv.Itoa(priority) +
			`, "podSets": [{"name": "main", "count": 1, "perPod": {"gpu": 1}}]}, "expect": {"reason": "` + reason + `"}}`
	}
	data := "{" + tenancyCluster + `, "steps": [` + strings.Join([]string{
		req("a", "ml", "low", 10, "Fits"),
		req("b", "web", "low", 10, "UnknownQueue"),
		`{"setLocalQueue": {"namespace": "web", "name": "train", "clusterQueue": "q"}}`,
		req("c", "web", "low", 10, "Unauthorized"),
		`{"setNamespace": {"name": "web", "labels": {"team": "ml"}}}`,
		req("d", "web", "low", 10, "Fits"),
		`{"setPriorityClass": {"name": "low", "value": 5}}`,
		req("e", "web", "low", 10, "PriorityNotAllowed"),
		req("f", "web", "high", 1000, "PriorityNotAllowed"),
	}, ", ") + `]}`
	s, err := scenario.Parse("t.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if res := s.Run(); !res.Passed {
		t.Fatalf("%s", strings.Join(res.Failures, "\n"))
	}
	// An event the store refuses ends the run with its error.
	s, err = scenario.Parse("t.json", []byte("{"+tenancyCluster+`, "steps": [{"removeNamespace": "ml"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if res := s.Run(); res.Passed || !strings.HasPrefix(res.Failures[0], `step 1 (removeNamespace "ml"): `) ||
		!strings.Contains(res.Failures[0], `local queue "train" lives in namespace "ml": remove it first`) {
		t.Fatalf("%v", res.Failures)
	}
}
