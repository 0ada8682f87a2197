package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/allot-sched/allot/quantity"
)

// Error is a scenario that cannot be loaded, built or replayed: the file,
// the JSON path of the offending value (like
// $.steps[2].decide.podSets[0].perPod.gpu; empty when the file is not
// valid JSON) and why.
type Error struct {
	File   string
	Path   string
	Reason string
	// Err is allot's error behind it, when allot refused what the file
	// describes (a *allot.BuildError, a store's refusal of a step); nil
	// for a file that does not parse.
	Err error
}

// Unwrap returns Err, so that errors.Is and errors.As see allot's error.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	if e.Path == "" {
		return e.File + ": " + e.Reason
	}
	return e.File + ": " + e.Path + ": " + e.Reason
}

// node is one value of the generic JSON tree (as encoding/json decodes it
// into any, with UseNumber) and the path that leads to it. A field that is
// not in the file is an absent node.
type node struct {
	path   string
	val    any
	absent bool
}

func (n node) field(name string) node { return node{path: n.path + "." + name} }

func (n node) key(k string) node {
	if isPlainKey(k) {
		return node{path: n.path + "." + k}
	}
	return node{path: n.path + "[" + strconv.Quote(k) + "]"}
}

func (n node) index(i int) node { return node{path: n.path + "[" + strconv.Itoa(i) + "]"} }

// isPlainKey says whether k reads unambiguously after a dot in a path.
func isPlainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		if !(c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// decoder walks a generic JSON tree into allot's types. It keeps the first
// error it meets and from then on hands out zero values, so the conversion
// code reads straight through and the caller checks err once at the end.
type decoder struct {
	file string
	err  *Error
}

func (d *decoder) failf(n node, format string, args ...any) {
	if d.err == nil {
		d.err = &Error{File: d.file, Path: n.path, Reason: fmt.Sprintf(format, args...)}
	}
}

func (d *decoder) wrongType(n node, want string) {
	d.failf(n, "want %s, got %s", want, typeName(n.val))
}

func typeName(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "the number " + v.String()
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// object is a JSON object whose fields are being read.
type object struct {
	node
	fields map[string]any
}

// object checks that n is an object whose fields are all among known, and
// returns it for reading. An absent n reads as an empty object.
func (d *decoder) object(n node, known ...string) object {
	if n.absent {
		return object{node: n}
	}
	m, ok := n.val.(map[string]any)
	if !ok {
		d.wrongType(n, "an object")
		return object{node: n}
	}
	for _, k := range sortedMapKeys(m) {
		if !slices.Contains(known, k) {
			d.failf(n.key(k), "unknown field %q%s", k, didYouMean(k, known))
		}
	}
	return object{node: n, fields: m}
}

// get returns the named field, absent when the object lacks it.
func (o object) get(name string) node {
	n := o.field(name)
	v, ok := o.fields[name]
	if !ok {
		n.absent = true
	}
	n.val = v
	return n
}

// has reports whether the object has the named field.
func (o object) has(name string) bool {
	_, ok := o.fields[name]
	return ok
}

// need returns the named field and fails when the object lacks it.
func (d *decoder) need(o object, name string) node {
	n := o.get(name)
	if n.absent && !o.absent && o.fields != nil {
		d.failf(o.node, "missing field %q", name)
	}
	return n
}

// forbid fails when the object has any of the named fields, saying why.
func (d *decoder) forbid(o object, why string, names ...string) {
	for _, name := range names {
		if o.has(name) {
			d.failf(o.key(name), "unknown field %q: %s", name, why)
		}
	}
}

// entries returns the members of a JSON object keyed by name, sorted by key
// so that the first error reported does not depend on map order.
func (d *decoder) entries(n node) []entry {
	if n.absent {
		return nil
	}
	m, ok := n.val.(map[string]any)
	if !ok {
		d.wrongType(n, "an object")
		return nil
	}
	out := make([]entry, 0, len(m))
	for _, k := range sortedMapKeys(m) {
		c := n.key(k)
		c.val = m[k]
		out = append(out, entry{key: k, node: c})
	}
	return out
}

type entry struct {
	key string
	node
}

// array returns the elements of a JSON array.
func (d *decoder) array(n node) []node {
	if n.absent {
		return nil
	}
	a, ok := n.val.([]any)
	if !ok {
		d.wrongType(n, "an array")
		return nil
	}
	out := make([]node, len(a))
	for i, v := range a {
		out[i] = n.index(i)
		out[i].val = v
	}
	return out
}

func (d *decoder) str(n node) string {
	if n.absent {
		return ""
	}
	s, ok := n.val.(string)
	if !ok {
		d.wrongType(n, "a string")
	}
	return s
}

// name is a string that must not be empty.
func (d *decoder) name(n node) string {
	s := d.str(n)
	if s == "" && !n.absent && d.err == nil {
		d.failf(n, "must not be empty")
	}
	return s
}

func (d *decoder) strs(n node) []string {
	elems := d.array(n)
	if elems == nil {
		return nil
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		out[i] = d.str(e)
	}
	return out
}

func (d *decoder) boolean(n node) bool {
	if n.absent {
		return false
	}
	b, ok := n.val.(bool)
	if !ok {
		d.wrongType(n, "a boolean")
	}
	return b
}

func (d *decoder) optBool(n node) *bool {
	if n.absent {
		return nil
	}
	b := d.boolean(n)
	return &b
}

// integer reads a whole JSON number within [lo, hi].
func (d *decoder) integer(n node, lo, hi int64) int64 {
	if n.absent {
		return 0
	}
	num, ok := n.val.(json.Number)
	if !ok {
		d.wrongType(n, "a number")
		return 0
	}
	v, err := wholeNumber(num.String(), lo, hi)
	if err != nil {
		d.failf(n, "%v", err)
	}
	return v
}

func (d *decoder) int32(n node) int32 { return int32(d.integer(n, minInt32, maxInt32)) }

// count reads a whole number that must not be negative.
func (d *decoder) count(n node) int64 { return d.integer(n, 0, maxInt) }

// optCount is count for an optional field: nil when absent.
func (d *decoder) optCount(n node) *int {
	if n.absent {
		return nil
	}
	v := int(d.integer(n, 0, maxInt32))
	return &v
}

func (d *decoder) float(n node) float64 {
	if n.absent {
		return 0
	}
	num, ok := n.val.(json.Number)
	if !ok {
		d.wrongType(n, "a number")
		return 0
	}
	f, err := strconv.ParseFloat(num.String(), 64)
	if err != nil || math.IsInf(f, 0) {
		d.failf(n, "number %s is out of range", num)
	}
	return f
}

// nonNegFloat reads a number that must not be negative.
func (d *decoder) nonNegFloat(n node) float64 {
	f := d.float(n)
	if f < 0 {
		d.failf(n, "must not be negative, got %v", f)
	}
	return f
}

// seconds reads a duration in whole seconds.
func (d *decoder) seconds(n node) int64 { return d.count(n) }

// instant reads a time in whole seconds that must not be later than now.
func (d *decoder) instant(n node, now int64) int64 {
	t := d.count(n)
	if t > now {
		d.failf(n, "time %d is later than now (%d)", t, now)
	}
	return t
}

// quantity reads a quantity of the named resource: a JSON number or a
// Kubernetes quantity string, in base units (see quantity.ParseBase).
func (d *decoder) quantity(n node, resource string) int64 {
	if n.absent {
		return 0
	}
	var text string
	switch v := n.val.(type) {
	case json.Number:
		text = v.String()
	case string:
		text = v
	default:
		d.wrongType(n, "a quantity (a number or a string)")
		return 0
	}
	q, err := quantity.ParseBase(resource, text)
	switch {
	case err != nil:
		d.failf(n, "%v", err)
	case q < 0:
		d.failf(n, "quantity %q: must not be negative", text)
	}
	return q
}

// optQuantity is quantity for a field that may be missing (nil).
func (d *decoder) optQuantity(n node, resource string) *int64 {
	if n.absent {
		return nil
	}
	q := d.quantity(n, resource)
	return &q
}

// oneOf reads a string that must be one of the listed values.
func (d *decoder) oneOf(n node, values ...string) string {
	s := d.str(n)
	if !n.absent && d.err == nil && !slices.Contains(values, s) {
		d.failf(n, "%q is not one of %s%s", s, strings.Join(values, ", "), didYouMean(s, values))
	}
	return s
}

// text reads a string into a value that parses itself (allot's enums).
// The empty string is rejected: it would silently mean "unset".
func (d *decoder) text(n node, dst interface{ UnmarshalText([]byte) error }) {
	s := d.str(n)
	if n.absent || d.err != nil {
		return
	}
	if s == "" {
		d.failf(n, "must not be empty")
		return
	}
	if err := dst.UnmarshalText([]byte(s)); err != nil {
		d.failf(n, "%v", err)
	}
}

// wholeNumber parses a JSON number that must be a whole number within
// [lo, hi]. "1e3" and "2.0" are whole; "1.5" is not.
func wholeNumber(text string, lo, hi int64) (int64, error) {
	q, err := quantity.Parse(text)
	if err != nil && !errors.Is(err, quantity.ErrRange) {
		return 0, fmt.Errorf("%s: %w", text, err)
	}
	v, whole := q.AsInt64()
	switch {
	case err != nil || whole && (v < lo || v > hi):
		return 0, fmt.Errorf("%s is out of range [%d, %d]", text, lo, hi)
	case !whole:
		return 0, fmt.Errorf("want a whole number, got %s", text)
	}
	return v, nil
}

// Ranges for wholeNumber.
const (
	minInt32 = math.MinInt32
	maxInt32 = math.MaxInt32
	maxInt   = math.MaxInt64
)

// allDigits reports whether s is all decimal digits.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
