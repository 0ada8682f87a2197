package cow

// Block hands out fresh slices of T carved from arrays allocated ahead, for
// a writer that makes a small copy at nearly every version (a store's
// master): the copies of many versions then cost one allocation. Each
// slice is handed out once, zeroed and with its capacity clipped, so no two
// versions ever share one. An array lives while any slice carved from it
// is in some version; its size bounds what that keeps.
//
// A Block has one writer. A nil *Block allocates every slice apart, so
// that a version that is not a store's master needs none.
type Block[T any] struct {
	free []T
}

// blockSlices is how many slices of the length asked for an array holds at
// least, and blockMin how many elements; a slice longer than blockMax (a
// usage of more queues and cohorts than that) is allocated apart, so that
// an array stays within a few hundred kilobytes.
const (
	blockSlices = 16
	blockMin    = 256
	blockMax    = 1024
)

// Take returns a fresh slice of n zero values.
func (b *Block[T]) Take(n int) []T {
	if b == nil || n > blockMax {
		return make([]T, n)
	}
	if len(b.free) < n {
		b.free = make([]T, max(blockMin, n*blockSlices))
	}
	s := b.free[:n:n]
	b.free = b.free[n:]
	return s
}

// Clone returns a fresh copy of s (nil for an empty s) taken from b.
func (b *Block[T]) Clone(s []T) []T {
	if len(s) == 0 {
		return nil
	}
	c := b.Take(len(s))
	copy(c, s)
	return c
}
