// Kueue's role hash of a pod, written out byte for byte as encoding/json
// would write its spec's shape, without the reflection and the maps: a live
// cluster computes it for every pod it reads.

package kueueconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
)

// RoleHash is Kueue's name for the role of a pod in a pod group: the first
// eight hex digits of the SHA-256 of the JSON of its spec's shape (the
// containers' requests and ports, node selector, affinity, tolerations,
// runtime class, priority, topology spread, overhead, resource claims).
//
// The shape is the JSON encoding/json makes of
//
//	{"spec": {"initContainers": [{"resources": {"requests": …}, "ports": …}, …],
//	          "containers": …, "nodeSelector": …, "affinity": …, …}}
//
// (maps' keys sorted, HTML escaped): it is written here directly, and the
// parts of the spec that seldom appear (affinity, topology spread, resource
// claims, strings that need escaping) are handed to encoding/json.
func RoleHash(spec *corev1.PodSpec) (string, error) {
	// One buffer: a quantity's digits are written into it in place.
	js, err := appendRoleShape(make([]byte, 0, 512), spec)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(js)
	return hex.EncodeToString(sum[:4]), nil
}

// appendRoleShape appends the JSON of a spec's shape, its keys in
// encoding/json's order for a map (sorted).
func appendRoleShape(b []byte, s *corev1.PodSpec) ([]byte, error) {
	var err error
	b = append(b, `{"spec":{"affinity":`...)
	if b, err = appendMarshal(b, s.Affinity, s.Affinity == nil); err != nil {
		return nil, err
	}
	b = append(b, `,"containers":`...)
	b = appendRoleContainers(b, s.Containers)
	b = append(b, `,"initContainers":`...)
	b = appendRoleContainers(b, s.InitContainers)
	b = append(b, `,"nodeSelector":`...)
	b = appendStringMap(b, s.NodeSelector)
	b = append(b, `,"overhead":`...)
	b = appendResourceList(b, s.Overhead)
	b = append(b, `,"priority":`...)
	if s.Priority == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*s.Priority), 10)
	}
	b = append(b, `,"resourceClaims":`...)
	if b, err = appendMarshal(b, s.ResourceClaims, s.ResourceClaims == nil); err != nil {
		return nil, err
	}
	b = append(b, `,"runtimeClassName":`...)
	if s.RuntimeClassName == nil {
		b = append(b, "null"...)
	} else {
		b = appendString(b, *s.RuntimeClassName)
	}
	b = append(b, `,"tolerations":`...)
	b = appendTolerations(b, s.Tolerations)
	b = append(b, `,"topologySpreadConstraints":`...)
	if b, err = appendMarshal(b, s.TopologySpreadConstraints, s.TopologySpreadConstraints == nil); err != nil {
		return nil, err
	}
	return append(b, "}}"...), nil
}

// appendMarshal appends encoding/json's encoding of v, null when isNil.
func appendMarshal(b []byte, v any, isNil bool) ([]byte, error) {
	if isNil {
		return append(b, "null"...), nil
	}
	js, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, js...), nil
}

// appendRoleContainers appends the containers' shapes, null for none (the
// shape's list is nil then).
func appendRoleContainers(b []byte, cs []corev1.Container) []byte {
	if len(cs) == 0 {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		c := &cs[i]
		b = append(b, `{"ports":`...)
		if c.Ports == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for k := range c.Ports {
				if k > 0 {
					b = append(b, ',')
				}
				b = appendPort(b, &c.Ports[k])
			}
			b = append(b, ']')
		}
		b = append(b, `,"resources":{"requests":`...)
		b = appendResourceList(b, c.Resources.Requests)
		b = append(b, "}}"...)
	}
	return append(b, ']')
}

// appendPort appends a ContainerPort as its struct tags say (fields in
// order, empty ones omitted but containerPort).
func appendPort(b []byte, p *corev1.ContainerPort) []byte {
	b = append(b, '{')
	if p.Name != "" {
		b = append(b, `"name":`...)
		b = appendString(b, p.Name)
		b = append(b, ',')
	}
	if p.HostPort != 0 {
		b = append(b, `"hostPort":`...)
		b = strconv.AppendInt(b, int64(p.HostPort), 10)
		b = append(b, ',')
	}
	b = append(b, `"containerPort":`...)
	b = strconv.AppendInt(b, int64(p.ContainerPort), 10)
	if p.Protocol != "" {
		b = append(b, `,"protocol":`...)
		b = appendString(b, string(p.Protocol))
	}
	if p.HostIP != "" {
		b = append(b, `,"hostIP":`...)
		b = appendString(b, p.HostIP)
	}
	return append(b, '}')
}

// appendTolerations appends tolerations as their struct tags say (every
// field omitted when empty).
func appendTolerations(b []byte, ts []corev1.Toleration) []byte {
	if ts == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range ts {
		if i > 0 {
			b = append(b, ',')
		}
		t := &ts[i]
		b = append(b, '{')
		sep := false
		field := func(name string) {
			if sep {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, name...)
			b = append(b, `":`...)
			sep = true
		}
		for _, f := range [...]struct{ name, v string }{{"key", t.Key}, {"operator", string(t.Operator)}, {"value", t.Value}, {"effect", string(t.Effect)}} {
			if f.v != "" {
				field(f.name)
				b = appendString(b, f.v)
			}
		}
		if t.TolerationSeconds != nil {
			field("tolerationSeconds")
			b = strconv.AppendInt(b, *t.TolerationSeconds, 10)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendResourceList appends a ResourceList as encoding/json does: keys
// sorted, each quantity its canonical string (Quantity.MarshalJSON).
func appendResourceList(b []byte, l corev1.ResourceList) []byte {
	if l == nil {
		return append(b, "null"...)
	}
	var stack [8]corev1.ResourceName
	names := stack[:0]
	for name := range l {
		names = append(names, name)
	}
	slices.Sort(names)
	b = append(b, '{')
	for i, name := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, string(name))
		b = append(b, ':', '"')
		q := l[name]
		// The digits are written into b's spare room when it has some.
		num, suffix := q.CanonicalizeBytes(b[len(b):len(b)])
		b = append(b, num...)
		b = append(b, suffix...)
		b = append(b, '"')
	}
	return append(b, '}')
}

// appendStringMap appends a map of strings as encoding/json does: keys
// sorted.
func appendStringMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	var stack [8]string
	keys := stack[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, m[k])
	}
	return append(b, '}')
}

// appendString appends a JSON string as encoding/json writes it; a string
// with a byte it escapes (a control character, a quote, a backslash, <, >,
// &) or beyond ASCII is handed to encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			js, _ := json.Marshal(s) // a string always encodes
			return append(b, js...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
