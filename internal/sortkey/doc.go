// Package sortkey gives strings a word that orders them as their first
// bytes do, so that a sort of many strings compares two words where it
// would compare two strings, and reads the strings only where the words
// tie.
package sortkey
