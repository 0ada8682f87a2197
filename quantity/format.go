// Writing a quantity in Kubernetes' canonical form, and its text and JSON
// encodings.

package quantity

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

var (
	decimalSuffixes = [...]string{"n", "u", "m", "", "k", "M", "G", "T", "P", "E"} // 10^-9 .. 10^18
	binarySuffixes  = [...]string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
)

// String is q in Kubernetes' canonical form, as resource.Quantity's String
// writes it: no fraction digits and the largest suffix of q's format that
// writes it exactly, so "1.5" is "1500m", "1.5Gi" is "1536Mi", "1e3" is
// "1e3" and "2000" is "2k". Parse reads it back to the same value.
func (q Quantity) String() string {
	var buf [48]byte
	return string(q.Append(buf[:0]))
}

// Append appends String's text to b.
func (q Quantity) Append(b []byte) []byte {
	if q.mag.isZero() {
		return append(b, '0')
	}
	if q.neg {
		b = append(b, '-')
	}
	// A binary quantity is written with a binary suffix when it is a whole
	// number of at least 1024 (and within the range Parse caps at: a
	// binary -2^63 is written in decimal to read back the same).
	if q.Format() == BinarySI && q.mag.cmp(u128{lo: 1024 * nano}) >= 0 && q.mag.cmp(maxPos) <= 0 {
		if v, r := q.mag.divmod(nano); r == 0 {
			n := 0
			for v.lo%1024 == 0 {
				v.lo /= 1024
				n++
			}
			return append(strconv.AppendUint(b, v.lo, 10), binarySuffixes[n]...)
		}
	}
	// Otherwise: the digits without trailing zeros, then zeros again until
	// the exponent is a multiple of three.
	m, e := q.mag, -9
	for {
		d, r := m.divmod(10)
		if r != 0 {
			break
		}
		m, e = d, e+1
	}
	for e%3 != 0 {
		m, _ = m.mul(10) // m × 100 stays below 2^128
		e--
	}
	b = m.appendDecimal(b)
	if q.Format() == DecimalExponent {
		if e == 0 {
			return b
		}
		return strconv.AppendInt(append(b, 'e'), int64(e), 10)
	}
	return append(b, decimalSuffixes[(e+9)/3]...)
}

// MarshalText is String's text.
func (q Quantity) MarshalText() ([]byte, error) { return q.Append(nil), nil }

// UnmarshalText parses text as Parse does.
func (q *Quantity) UnmarshalText(text []byte) error {
	p, err := Parse(string(text))
	if err != nil {
		return err
	}
	*q = p
	return nil
}

// MarshalJSON writes q as a JSON string in canonical form.
func (q Quantity) MarshalJSON() ([]byte, error) {
	return append(q.Append([]byte{'"'}), '"'), nil
}

// UnmarshalJSON reads a JSON string or number as resource.Quantity does:
// the text may have spaces around it, and null is 0.
func (q *Quantity) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if string(data) == "null" {
		*q = Quantity{}
		return nil
	}
	text := string(data)
	if len(data) > 0 && data[0] == '"' {
		if err := json.Unmarshal(data, &text); err != nil {
			return err
		}
	}
	p, err := Parse(strings.TrimSpace(text))
	if err != nil {
		return err
	}
	*q = p
	return nil
}
