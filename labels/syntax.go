package labels

import (
	"strconv"
)

// The lengths Kubernetes allows: a qualified name's name part and a
// label value, a DNS label (a namespace's name), a DNS subdomain (a
// key's prefix).
const (
	maxName      = 63
	maxSubdomain = 253
)

// ValidateSet reports the first fault of a set of labels, by key: each
// key a qualified name, each value a label value (as a namespace's labels
// must be). The Error's Field is the key as a path step: .team, or
// ["a b"] when the key would not read after a dot.
func ValidateSet(set map[string]string) error {
	for _, k := range sortedKeys(set) {
		if why := keyFault(k); why != "" {
			return &Error{Field: fieldKey(k), Reason: why}
		}
		if why := valueFault(set[k]); why != "" {
			return &Error{Field: fieldKey(k), Reason: why}
		}
	}
	return nil
}

// DNSLabelFault says why name is not a DNS label (RFC 1123: 1 to 63
// lower-case alphanumerics and '-', beginning and ending with an
// alphanumeric), as a Kubernetes namespace's name must be; "" when it is.
func DNSLabelFault(name string) string {
	switch {
	case name == "":
		return "must not be empty"
	case len(name) > maxName:
		return "longer than " + strconv.Itoa(maxName) + " characters"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
		if !alnum && (c != '-' || i == 0 || i == len(name)-1) {
			return strconv.Quote(name) + " is not a DNS label: lower-case alphanumerics and '-', beginning and ending with an alphanumeric"
		}
	}
	return ""
}

// keyFault says why k is not a label key (a qualified name); "" when it
// is.
func keyFault(k string) string {
	name := k
	for i := 0; i < len(k); i++ {
		if k[i] != '/' {
			continue
		}
		prefix := k[:i]
		name = k[i+1:]
		if prefix == "" {
			return "key " + strconv.Quote(k) + ": the prefix before '/' must not be empty"
		}
		if !subdomain(prefix) {
			return "key " + strconv.Quote(k) + ": the prefix must be a DNS subdomain (lower-case alphanumerics, '-' and '.', at most 253 characters)"
		}
		for j := i + 1; j < len(k); j++ {
			if k[j] == '/' {
				return "key " + strconv.Quote(k) + ": at most one '/'"
			}
		}
		break
	}
	switch {
	case name == "":
		return "key " + strconv.Quote(k) + ": the name part must not be empty"
	case len(name) > maxName:
		return "key " + strconv.Quote(k) + ": the name part is longer than 63 characters"
	case !qualified(name):
		return "key " + strconv.Quote(k) + ": the name part must be alphanumerics, '-', '_' and '.', beginning and ending with an alphanumeric"
	}
	return ""
}

// valueFault says why v is not a label value (empty, or a qualified
// name's name part); "" when it is.
func valueFault(v string) string {
	switch {
	case v == "":
		return ""
	case len(v) > maxName:
		return "value " + strconv.Quote(v) + " is longer than 63 characters"
	case !qualified(v):
		return "value " + strconv.Quote(v) + " must be empty or alphanumerics, '-', '_' and '.', beginning and ending with an alphanumeric"
	}
	return ""
}

// qualified reports whether s, non-empty, is ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9].
func qualified(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if alnum {
			continue
		}
		if i == 0 || i == len(s)-1 || c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// subdomain reports whether s is a DNS subdomain: dot-separated DNS
// labels, at most 253 characters in all.
func subdomain(s string) bool {
	if len(s) > maxSubdomain {
		return false
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			continue
		}
		if !dnsLabelChars(s[start:i]) {
			return false
		}
		start = i + 1
	}
	return true
}

// dnsLabelChars reports whether s is [a-z0-9]([-a-z0-9]*[a-z0-9])?, with
// no bound on its length (a subdomain's labels are bounded by the whole).
func dnsLabelChars(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
		if !alnum && (c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}
