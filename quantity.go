package allot

import "strconv"

// appendQuantity renders a quantity of the named resource for messages: cpu
// (held in millicores) in cores, or with an "m" suffix when fractional;
// memory in bytes with the largest binary suffix that divides it evenly;
// anything else as a plain number.
func appendQuantity(b []byte, resource string, v int64) []byte {
	switch resource {
	case "cpu":
		if v%1000 == 0 {
			return strconv.AppendInt(b, v/1000, 10)
		}
		return append(strconv.AppendInt(b, v, 10), 'm')
	case "memory":
		for _, u := range [...]struct {
			suffix string
			shift  uint
		}{{"Ti", 40}, {"Gi", 30}, {"Mi", 20}, {"Ki", 10}} {
			if v != 0 && v%(1<<u.shift) == 0 {
				return append(strconv.AppendInt(b, v>>u.shift, 10), u.suffix...)
			}
		}
	}
	return strconv.AppendInt(b, v, 10)
}
