package gang

import "slices"

// Equal reports whether p and o ask the placer the same: every field
// alike, the slices and exclusions by content.
func (p *PodSet) Equal(o *PodSet) bool {
	return p.Flavor == o.Flavor && p.Count == o.Count && p.GPUs == o.GPUs && p.Share == o.Share && p.Res == o.Res &&
		p.Mode == o.Mode && p.Level == o.Level && p.Policy == o.Policy && p.Group == o.Group &&
		p.AvoidStranding == o.AvoidStranding &&
		slices.Equal(p.Slices, o.Slices) && slices.Equal(p.Exclude, o.Exclude)
}

// Clone is a copy of p that shares no memory with it.
func (p *PodSet) Clone() PodSet {
	c := *p
	c.Slices, c.Exclude = slices.Clone(p.Slices), slices.Clone(p.Exclude)
	return c
}
