// Package internal groups helpers that are nobody's API: res (fixed-size
// resource vectors) and cow (copy-on-write paged arrays).
package internal
