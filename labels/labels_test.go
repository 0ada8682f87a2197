package labels

import (
	"errors"
	"strings"
	"testing"
)

func TestMatches(t *testing.T) {
	ml := map[string]string{"team": "ml", "tier": "gold", "empty": ""}
	for _, c := range []struct {
		name string
		sel  *Selector
		want bool
	}{
		{"nil is nothing", nil, false},
		{"empty is everything", &Selector{}, true},
		{"matchLabels", &Selector{MatchLabels: map[string]string{"team": "ml"}}, true},
		{"matchLabels wrong value", &Selector{MatchLabels: map[string]string{"team": "web"}}, false},
		{"matchLabels absent", &Selector{MatchLabels: map[string]string{"zone": "a"}}, false},
		{"matchLabels empty value", &Selector{MatchLabels: map[string]string{"empty": ""}}, true},
		{"matchLabels empty value absent", &Selector{MatchLabels: map[string]string{"zone": ""}}, false},
		{"in", &Selector{MatchExpressions: []Requirement{{Key: "tier", Operator: In, Values: []string{"silver", "gold"}}}}, true},
		{"in absent", &Selector{MatchExpressions: []Requirement{{Key: "zone", Operator: In, Values: []string{"a"}}}}, false},
		{"in other", &Selector{MatchExpressions: []Requirement{{Key: "tier", Operator: In, Values: []string{"silver"}}}}, false},
		{"notin other", &Selector{MatchExpressions: []Requirement{{Key: "tier", Operator: NotIn, Values: []string{"silver"}}}}, true},
		{"notin absent", &Selector{MatchExpressions: []Requirement{{Key: "zone", Operator: NotIn, Values: []string{"a"}}}}, true},
		{"notin listed", &Selector{MatchExpressions: []Requirement{{Key: "tier", Operator: NotIn, Values: []string{"gold"}}}}, false},
		{"exists", &Selector{MatchExpressions: []Requirement{{Key: "empty", Operator: Exists}}}, true},
		{"exists absent", &Selector{MatchExpressions: []Requirement{{Key: "zone", Operator: Exists}}}, false},
		{"doesnotexist", &Selector{MatchExpressions: []Requirement{{Key: "zone", Operator: DoesNotExist}}}, true},
		{"doesnotexist present", &Selector{MatchExpressions: []Requirement{{Key: "team", Operator: DoesNotExist}}}, false},
		{"all must hold", &Selector{MatchLabels: map[string]string{"team": "ml"},
			MatchExpressions: []Requirement{{Key: "tier", Operator: Exists}, {Key: "team", Operator: NotIn, Values: []string{"ml"}}}}, false},
	} {
		if err := c.sel.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := c.sel.Matches(ml); got != c.want {
			t.Errorf("%s: Matches %v, want %v", c.name, got, c.want)
		}
		req, mismatched := c.sel.Mismatch(ml)
		if mismatched == c.want || mismatched != (req != "") && c.sel != nil {
			t.Errorf("%s: Mismatch %q %v, Matches %v", c.name, req, mismatched, c.want)
		}
	}
	if (&Selector{}).Matches(nil) != true || (*Selector)(nil).Matches(nil) {
		t.Error("nil labels: the empty selector matches them, nil does not")
	}
}

func TestValidate(t *testing.T) {
	long := strings.Repeat("a", 64)
	for _, c := range []struct {
		sel   Selector
		field string // "" for valid
	}{
		{Selector{MatchLabels: map[string]string{"example.com/team": "ml", "a.b_c-d": "A.b_c-9"}}, ""},
		{Selector{MatchLabels: map[string]string{"team": ""}}, ""},
		{Selector{MatchLabels: map[string]string{"": "x"}}, `matchLabels[""]`},
		{Selector{MatchLabels: map[string]string{"-team": "x"}}, `matchLabels.-team`},
		{Selector{MatchLabels: map[string]string{"team": "-x"}}, `matchLabels.team`},
		{Selector{MatchLabels: map[string]string{long: "x"}}, "matchLabels." + long},
		{Selector{MatchLabels: map[string]string{"team": long}}, "matchLabels.team"},
		{Selector{MatchLabels: map[string]string{"Example.com/team": "x"}}, `matchLabels["Example.com/team"]`},
		{Selector{MatchLabels: map[string]string{"/team": "x"}}, `matchLabels["/team"]`},
		{Selector{MatchLabels: map[string]string{"a/b/c": "x"}}, `matchLabels["a/b/c"]`},
		{Selector{MatchLabels: map[string]string{"a/": "x"}}, `matchLabels["a/"]`},
		{Selector{MatchLabels: map[string]string{strings.Repeat("a.", 125) + "abc/x": "x"}}, ""},                                                        // a 253-character prefix
		{Selector{MatchLabels: map[string]string{strings.Repeat("a.", 125) + "abcd/x": "x"}}, `matchLabels["` + strings.Repeat("a.", 125) + `abcd/x"]`}, // 254
		{Selector{MatchExpressions: []Requirement{{Key: "team", Operator: In}}}, "matchExpressions[0].values"},
		{Selector{MatchExpressions: []Requirement{{Key: "team", Operator: NotIn}}}, "matchExpressions[0].values"},
		{Selector{MatchExpressions: []Requirement{{Key: "team", Operator: Exists, Values: []string{"x"}}}}, "matchExpressions[0].values"},
		{Selector{MatchExpressions: []Requirement{{Key: "team", Operator: DoesNotExist, Values: []string{"x"}}}}, "matchExpressions[0].values"},
		{Selector{MatchExpressions: []Requirement{{Key: "team", Operator: "Equals", Values: []string{"x"}}}}, "matchExpressions[0].operator"},
		{Selector{MatchExpressions: []Requirement{{Key: "team", Operator: "in", Values: []string{"x"}}}}, "matchExpressions[0].operator"},
		{Selector{MatchExpressions: []Requirement{{Key: "team", Operator: equals, Values: []string{"x"}}}}, "matchExpressions[0].operator"},
		{Selector{MatchExpressions: []Requirement{{Key: "team", Operator: In, Values: []string{"ok", "not ok"}}}}, "matchExpressions[0].values[1]"},
		{Selector{MatchExpressions: []Requirement{{Key: "team", Operator: Exists}, {Key: "a b", Operator: Exists}}}, "matchExpressions[1].key"},
	} {
		err := c.sel.Validate()
		var le *Error
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%+v: %v", c.sel, err)
		case c.field != "" && (!errors.As(err, &le) || le.Field != c.field):
			t.Errorf("%+v: %v, want a fault at %s", c.sel, err, c.field)
		}
	}
}

func TestString(t *testing.T) {
	s := &Selector{MatchLabels: map[string]string{"team": "ml", "a": "b"},
		MatchExpressions: []Requirement{{Key: "tier", Operator: NotIn, Values: []string{"z", "b"}}, {Key: "gone", Operator: DoesNotExist},
			{Key: "team", Operator: Exists}, {Key: "b", Operator: In, Values: []string{"x"}}}}
	if got, want := s.String(), "a=b,b in (x),!gone,team=ml,team,tier notin (b,z)"; got != want {
		t.Errorf("String %q, want %q", got, want)
	}
	if got, ok := s.Mismatch(map[string]string{"a": "b", "b": "x", "team": "ml", "tier": "z"}); !ok || got != "tier notin (b,z)" {
		t.Errorf("Mismatch %q %v", got, ok)
	}
}

func TestDNSLabelFault(t *testing.T) {
	for name, ok := range map[string]bool{"team-a": true, "a": true, "0": true, strings.Repeat("a", 63): true,
		"": false, "-a": false, "a-": false, "Team": false, "a_b": false, "a.b": false, strings.Repeat("a", 64): false} {
		if got := DNSLabelFault(name) == ""; got != ok {
			t.Errorf("%q: valid %v, want %v", name, got, ok)
		}
	}
}

func TestValidateSet(t *testing.T) {
	if err := ValidateSet(map[string]string{"kubernetes.io/metadata.name": "team-a", "team": ""}); err != nil {
		t.Fatal(err)
	}
	var le *Error
	if err := ValidateSet(map[string]string{"ok": "x", "team": "a b"}); !errors.As(err, &le) || le.Field != ".team" {
		t.Fatalf("%v", err)
	}
}

func TestMatchesDoesNotAllocate(t *testing.T) {
	s := &Selector{MatchLabels: map[string]string{"team": "ml"}, MatchExpressions: []Requirement{{Key: "tier", Operator: In, Values: []string{"a", "gold"}}}}
	ls := map[string]string{"team": "ml", "tier": "gold"}
	if n := testing.AllocsPerRun(100, func() {
		if !s.Matches(ls) {
			t.Fatal("no match")
		}
	}); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}
