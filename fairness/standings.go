package fairness

// Standings keep one key per slot (a queue's head, say) and tell which
// comes first by an Order: a winner tree, so that changing one slot's key
// costs a comparison per level rather than one per slot. Progressive
// filling changes a slot or two per admission and asks for the first
// after each.
type Standings struct {
	o    Order
	keys []*Key
	// win[i] is the first slot below node i of a complete binary tree
	// whose leaves, from width on, are the slots; -1 when none has a key.
	win   []int32
	width int
}

// Reset empties the standings for slots slots ordered by o, keeping their
// memory.
func (t *Standings) Reset(o Order, slots int) {
	t.o = o
	t.width = 1
	for t.width < slots {
		t.width *= 2
	}
	if cap(t.keys) < t.width {
		t.keys, t.win = make([]*Key, t.width), make([]int32, 2*t.width)
	}
	t.keys, t.win = t.keys[:t.width], t.win[:2*t.width]
	clear(t.keys)
	for i := range t.win {
		t.win[i] = -1
	}
}

// Set gives slot its key, nil for none. The standings keep k, not a copy:
// a key changed in place is set again.
func (t *Standings) Set(slot int, k *Key) {
	t.keys[slot] = k
	i := t.width + slot
	t.win[i] = -1
	if k != nil {
		t.win[i] = int32(slot)
	}
	for i /= 2; i > 0; i /= 2 {
		t.win[i] = t.first(t.win[2*i], t.win[2*i+1])
	}
}

// first is whichever of slots a and b comes first (-1 for none).
func (t *Standings) first(a, b int32) int32 {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	case t.o.Compare(t.keys[b], t.keys[a]) < 0:
		return b
	}
	return a
}

// First is the slot whose key comes first; false when no slot has a key.
func (t *Standings) First() (int, bool) {
	if len(t.win) < 2 || t.win[1] < 0 {
		return 0, false
	}
	return int(t.win[1]), true
}
