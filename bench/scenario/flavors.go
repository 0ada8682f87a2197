package scenario

import "github.com/allot-sched/allot"

// taints reads a list of taints: {"key", "value", "effect"}, key and
// effect required. Which effects are known is the library's to judge.
func (p *parser) taints(n node) []allot.Taint {
	var out []allot.Taint
	for _, e := range p.array(n) {
		o := p.object(e, "key", "value", "effect")
		out = append(out, allot.Taint{Key: p.str(p.need(o, "key")), Value: p.str(o.get("value")), Effect: p.str(p.need(o, "effect"))})
	}
	return out
}

// tolerations reads a list of tolerations: {"key", "operator", "value",
// "effect"}, each optional, as in Kubernetes. Which operators and effects
// are known is the library's to judge.
func (p *parser) tolerations(n node) []allot.Toleration {
	var out []allot.Toleration
	for _, e := range p.array(n) {
		o := p.object(e, "key", "operator", "value", "effect")
		out = append(out, allot.Toleration{Key: p.str(o.get("key")), Operator: p.str(o.get("operator")),
			Value: p.str(o.get("value")), Effect: p.str(o.get("effect"))})
	}
	return out
}
