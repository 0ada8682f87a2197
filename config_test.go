package allot

import (
	"errors"
	"testing"
)

// TestParseFungibility pins how Kueue's flavorFungibility reads: its
// defaults, its MayStopSearch spellings, and the field a bad value names.
func TestParseFungibility(t *testing.T) {
	for _, c := range []struct {
		f                      FlavorFungibility
		tryNext, stopAtPreempt bool
		path                   string // of the refusal, "" for none
	}{
		{f: FlavorFungibility{}},
		{f: FlavorFungibility{WhenCanBorrow: "Borrow", WhenCanPreempt: "TryNextFlavor"}},
		{f: FlavorFungibility{WhenCanBorrow: "MayStopSearch", WhenCanPreempt: "MayStopSearch"}, stopAtPreempt: true},
		{f: FlavorFungibility{WhenCanBorrow: "TryNextFlavor"}, tryNext: true},
		{f: FlavorFungibility{WhenCanBorrow: "TryNextFlavor", WhenCanPreempt: "Preempt"}, tryNext: true, stopAtPreempt: true},
		{f: FlavorFungibility{WhenCanPreempt: "preempt"}, path: "q.whenCanPreempt"},
		{f: FlavorFungibility{WhenCanBorrow: "Preempt"}, path: "q.whenCanBorrow"},
		{f: FlavorFungibility{WhenCanBorrow: "x", WhenCanPreempt: "y"}, path: "q.whenCanPreempt"},
	} {
		tryNext, stop, err := parseFungibility(c.f, "q")
		if c.path != "" {
			var be *BuildError
			if !errors.As(err, &be) || !errors.Is(err, ErrInvalid) || be.Path != c.path {
				t.Errorf("%+v: got %v, want a refusal at %s", c.f, err, c.path)
			}
			continue
		}
		if err != nil || tryNext != c.tryNext || stop != c.stopAtPreempt {
			t.Errorf("%+v: got %v %v %v, want %v %v", c.f, tryNext, stop, err, c.tryNext, c.stopAtPreempt)
		}
	}
}
