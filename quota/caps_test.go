package quota

import (
	"maps"
	"testing"

	"github.com/allot-sched/allot/internal/res"
)

func TestCapOver(t *testing.T) {
	// Resource 0 capped at 8 and resource 2 at 4; resource 1 uncapped.
	c := Cap{Limit: res.Vec{8, 0, 4}, Mask: 0b101}
	type out struct {
		r           int
		over, alone bool
	}
	cases := []struct {
		name       string
		used, need res.Vec
		want       out
	}{
		{"within", res.Vec{2, 0, 1}, res.Vec{6, 0, 3}, out{}},
		{"an uncapped resource is never over", res.Vec{}, res.Vec{0, 1 << 40}, out{}},
		{"alone", res.Vec{}, res.Vec{9}, out{0, true, true}},
		{"with what is held", res.Vec{5}, res.Vec{4}, out{0, true, false}},
		{"exactly at the cap", res.Vec{4}, res.Vec{4}, out{}},
		{"alone on any resource before with usage on an earlier one", res.Vec{8}, res.Vec{1, 0, 5}, out{2, true, true}},
		{"the first resource over with usage", res.Vec{8, 0, 4}, res.Vec{1, 0, 1}, out{0, true, false}},
		{"held over the cap but not asked for", res.Vec{9, 0, 1}, res.Vec{0, 0, 1}, out{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, over, alone := c.Over(tc.used, tc.need)
			if got := (out{r, over, alone}); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	var none Cap
	if none.Set() || !c.Set() {
		t.Error("Set")
	}
	if _, over, _ := none.Over(res.Vec{}, res.Vec{1 << 50}); over {
		t.Error("an unset cap caps nothing")
	}
}

func TestUserUsageWith(t *testing.T) {
	var u UserUsage
	a := u.With("ann", res.Vec{2, 1}, 1)
	b := a.With("bob", res.Vec{1}, 1)
	c := b.With("ann", res.Vec{2, 1}, -1)
	for _, tc := range []struct {
		name string
		got  UserUsage
		want UserUsage
	}{
		{"from nil", a, UserUsage{"ann": {2, 1}}},
		{"another user", b, UserUsage{"ann": {2, 1}, "bob": {1}}},
		{"a user holding nothing is dropped", c, UserUsage{"bob": {1}}},
	} {
		if !maps.Equal(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if u != nil || len(a) != 1 || len(b) != 2 {
		t.Errorf("With changed its receiver: %v %v %v", u, a, b)
	}
}
