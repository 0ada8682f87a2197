// YAML to JSON as sigs.k8s.io/yaml converts it, byte for byte, without
// its detour through Go maps and reflection: most of a large import's
// time after YAML's own parser.

package kueueconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	goyaml "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

// yamlToJSON converts one YAML document to the JSON yaml.YAMLToJSON gives
// for it: the same parser (go-yaml v2, YAML 1.1 as Kubernetes reads it),
// the same keys (a number or boolean key written as go-yaml writes it,
// the last of equal keys kept) sorted as encoding/json sorts a map's, the
// same scalars written as encoding/json writes them. The mappings are
// read in document order (go-yaml's MapSlice) and written out directly.
// A document that is not a mapping, or that merges mappings ("<<", which
// go-yaml's MapSlice drops), goes to yaml.YAMLToJSON itself.
func yamlToJSON(doc []byte) ([]byte, error) {
	js, _, err := yamlToJSONHeader(doc)
	return js, err
}

// yamlToJSONHeader is yamlToJSON, and the object's header as read on the
// way when the document is one object (not a List, whose items decodeJSON
// reads), nil otherwise.
func yamlToJSONHeader(doc []byte) ([]byte, *header, error) {
	if bytes.Contains(doc, []byte("<<")) || !plainMappingRoot(doc) {
		js, err := yaml.YAMLToJSON(doc)
		return js, nil, err
	}
	var m goyaml.MapSlice
	if err := goyaml.Unmarshal(doc, &m); err != nil || len(m) == 0 {
		js, err := yaml.YAMLToJSON(doc) // its error, or its answer for a scalar, null or {}
		return js, nil, err
	}
	w := jsonWriter{b: make([]byte, 0, len(doc)+len(doc)/4)}
	if err := w.mapping(m); err != nil {
		// A key JSON cannot name, a NaN: yaml.YAMLToJSON's own error.
		js, err := yaml.YAMLToJSON(doc)
		return js, nil, err
	}
	return w.b, objectHeader(m), nil
}

// objectHeader is the header of a top-level mapping that is one object:
// its apiVersion and kind, when both are strings and it has no items
// (the last of equal keys counts, as in the JSON); nil otherwise.
func objectHeader(m goyaml.MapSlice) *header {
	var h header
	var version, kind bool
	for _, it := range m {
		k, _ := it.Key.(string)
		switch k {
		case "apiVersion":
			h.APIVersion, version = it.Value.(string)
		case "kind":
			h.Kind, kind = it.Value.(string)
		case "items":
			return nil
		}
	}
	if !version || !kind {
		return nil
	}
	return &h
}

// plainMappingRoot tells whether a document's first content (after
// comments, blank lines and a "---") can only open a mapping: not a
// sequence ("-", "["), an anchor, alias, tag or directive, nor a byte that
// is not ASCII, which go-yaml's MapSlice might read otherwise (a sequence
// of {key, value} mappings reads as a MapSlice).
func plainMappingRoot(doc []byte) bool {
	for len(doc) > 0 {
		line := doc
		if i := bytes.IndexByte(doc, '\n'); i >= 0 {
			line, doc = doc[:i], doc[i+1:]
		} else {
			doc = nil
		}
		t := bytes.TrimLeft(line, " \t\r")
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		if bytes.HasPrefix(t, []byte("---")) && (len(t) == 3 || t[3] == ' ' || t[3] == '\t' || t[3] == '\r') {
			t = bytes.TrimLeft(t[3:], " \t\r")
			if len(t) == 0 || t[0] == '#' {
				continue
			}
		}
		switch t[0] {
		case '-', '[', '&', '*', '!', '%', '|', '>', '"', '\'':
			return false
		}
		// Not ASCII: a byte order mark, another encoding, a key of
		// other letters; go-yaml decides what it opens.
		return t[0] < 0x80
	}
	return false
}

// jsonWriter appends JSON to b.
type jsonWriter struct {
	b []byte
	// keys is scratch for one mapping's keys at a time, reused.
	keys []keyedItem
}

// keyedItem is a mapping's entry with its key as JSON names it.
type keyedItem struct {
	key   string
	value any
}

func (w *jsonWriter) mapping(m goyaml.MapSlice) error {
	start := len(w.keys)
	for _, it := range m {
		k, err := keyString(it.Key)
		if err != nil {
			return err
		}
		w.keys = append(w.keys, keyedItem{key: k, value: it.Value})
	}
	items := w.keys[start:]
	// encoding/json's order for a map: by key; of equal keys the last
	// one counts, as it does in a Go map filled in document order.
	slices.SortStableFunc(items, func(a, b keyedItem) int { return strings.Compare(a.key, b.key) })
	// The items are copied out before the recursion grows w.keys.
	own := slices.Clone(items)
	w.keys = w.keys[:start]
	w.b = append(w.b, '{')
	first := true
	for i := range own {
		if i+1 < len(own) && own[i+1].key == own[i].key {
			continue // a later equal key replaces it
		}
		if !first {
			w.b = append(w.b, ',')
		}
		first = false
		w.str(own[i].key)
		w.b = append(w.b, ':')
		if err := w.value(own[i].value); err != nil {
			return err
		}
	}
	w.b = append(w.b, '}')
	return nil
}

// errUnsupportedKey is a key JSON cannot name (null, a mapping, a list).
var errUnsupportedKey = errors.New("unsupported map key")

// keyString is a mapping key as sigs.k8s.io/yaml names it.
func keyString(k any) (string, error) {
	switch k := k.(type) {
	case string:
		return k, nil
	case int:
		return strconv.Itoa(k), nil
	case int64:
		return strconv.FormatInt(k, 10), nil
	case float64:
		s := strconv.FormatFloat(k, 'g', -1, 32)
		switch s {
		case "+Inf":
			s = ".inf"
		case "-Inf":
			s = "-.inf"
		case "NaN":
			s = ".nan"
		}
		return s, nil
	case bool:
		return strconv.FormatBool(k), nil
	}
	return "", errUnsupportedKey
}

func (w *jsonWriter) value(v any) error {
	switch v := v.(type) {
	case nil:
		w.b = append(w.b, "null"...)
	case goyaml.MapSlice:
		return w.mapping(v)
	case []any:
		w.b = append(w.b, '[')
		for i, e := range v {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			if err := w.value(e); err != nil {
				return err
			}
		}
		w.b = append(w.b, ']')
	case string:
		w.str(v)
	case bool:
		w.b = strconv.AppendBool(w.b, v)
	case int:
		w.b = strconv.AppendInt(w.b, int64(v), 10)
	case int64:
		w.b = strconv.AppendInt(w.b, v, 10)
	case uint64:
		w.b = strconv.AppendUint(w.b, v, 10)
	default:
		// Floats and anything rarer: encoding/json's own writing (and
		// its error, for a NaN or an infinity).
		js, err := json.Marshal(v)
		if err != nil {
			return err
		}
		w.b = append(w.b, js...)
	}
	return nil
}

// str writes a string as encoding/json does: as it is when it is printable
// ASCII that needs no escape, else through encoding/json (its escapes of
// HTML characters, control characters and invalid UTF-8).
func (w *jsonWriter) str(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			js, _ := json.Marshal(s) // a string always marshals
			w.b = append(w.b, js...)
			return
		}
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, s...)
	w.b = append(w.b, '"')
}
