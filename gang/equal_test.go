package gang

import (
	"reflect"
	"testing"

	"github.com/allot-sched/allot/internal/res"
)

// TestPodSetEqualReadsEveryField changes each field of a pod set in turn,
// found by reflection, and fails unless Equal tells the copy apart and
// Clone's copy is equal: a field added to PodSet and left out of Equal
// would let the loop's memories answer for a pod set they never placed.
func TestPodSetEqualReadsEveryField(t *testing.T) {
	base := PodSet{Flavor: 1, Count: 4, GPUs: 2, Share: 0, Res: res.Vec{2, 8}, Mode: Required, Level: 2, Policy: Pack,
		Slices: []SliceSpec{{Level: 1, Size: 2}}, Group: 1, Exclude: []uint64{0b10}}
	if c := base.Clone(); !base.Equal(&c) {
		t.Fatal("a clone is not equal")
	}
	v := reflect.ValueOf(&base).Elem()
	for i := range v.NumField() {
		c := base.Clone()
		f := reflect.ValueOf(&c).Elem().Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Int32, reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Uint8:
			f.SetUint(f.Uint() + 1)
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Array: // res.Vec
			f.Index(0).SetInt(f.Index(0).Int() + 1)
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 0, 0))
		default:
			t.Fatalf("field %s of kind %v: teach this test to change it", v.Type().Field(i).Name, f.Kind())
		}
		if base.Equal(&c) {
			t.Errorf("Equal does not read field %s", v.Type().Field(i).Name)
		}
	}
}
