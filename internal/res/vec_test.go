package res

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestMulAgainstBig holds MulOK and MulSat to exact products of
// non-negative quantities: at the edges of int64 and at random.
func TestMulAgainstBig(t *testing.T) {
	edges := []int64{0, 1, 2, 3, 1 << 31, 1<<32 - 1, 1 << 32, 1 << 56, 1 << 61, 1 << 62, math.MaxInt64 / 2, math.MaxInt64 - 1, math.MaxInt64}
	check := func(a, b int64) {
		exact := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
		fits := exact.IsInt64()
		p, ok := MulOK(a, b)
		if ok != fits || ok && p != exact.Int64() {
			t.Fatalf("MulOK(%d, %d) = %d, %v; exact %s", a, b, p, ok, exact)
		}
		want := int64(math.MaxInt64)
		if fits {
			want = exact.Int64()
		}
		if got := MulSat(a, b); got != want {
			t.Fatalf("MulSat(%d, %d) = %d, want %d", a, b, got, want)
		}
	}
	for _, a := range edges {
		for _, b := range edges {
			check(a, b)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		check(rng.Int64N(math.MaxInt64)>>rng.IntN(63), rng.Int64N(math.MaxInt64)>>rng.IntN(63))
	}
}
