package res

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestWideSumIsExact adds and subtracts quantities across the edges of
// int64 and uint64 and checks the wide sum, and its clamp, against big
// integers.
func TestWideSumIsExact(t *testing.T) {
	edges := []int64{0, 1, -1, 1 << 56, -(1 << 56), math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1}
	rng := rand.New(rand.NewPCG(1, 2))
	var hi int64
	var lo uint64
	want := new(big.Int)
	for step := range 20000 {
		x := edges[rng.IntN(len(edges))]
		if rng.IntN(2) == 0 {
			x = rng.Int64()
		}
		var d int64
		if rng.IntN(2) == 0 {
			lo, d = AddWide(lo, x)
			want.Add(want, big.NewInt(x))
		} else {
			lo, d = SubWide(lo, x)
			want.Sub(want, big.NewInt(x))
		}
		hi += d
		got := new(big.Int).Lsh(big.NewInt(hi), 64)
		got.Add(got, new(big.Int).SetUint64(lo))
		if got.Cmp(want) != 0 {
			t.Fatalf("step %d: %v, want %v", step, got, want)
		}
		clamped := int64(math.MaxInt64)
		switch {
		case want.IsInt64():
			clamped = want.Int64()
		case want.Sign() < 0:
			clamped = math.MinInt64
		}
		if c := SatWide(hi, lo); c != clamped {
			t.Fatalf("step %d: %v clamps to %d, want %d", step, want, c, clamped)
		}
		if want.BitLen() > 80 {
			// Back near zero, so that every edge is crossed again.
			hi, lo = 0, 0
			want.SetInt64(0)
		}
	}
}
