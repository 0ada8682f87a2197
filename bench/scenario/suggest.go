// Suggestions for a name the parser does not know: the nearest of the
// names it knows at that point, when one is near enough to be the typo.

package scenario

import (
	"strconv"
	"strings"
)

// didYouMean is ` (did you mean "x"?)` for the known name nearest to name,
// or "" when none is near: within one edit for a name of up to five
// characters, two up to eight, three beyond (an edit inserts, deletes or
// changes a character, or swaps two adjacent ones; case does not count).
// The first of equally near names wins, so the suggestion is the same from
// run to run.
func didYouMean(name string, known []string) string {
	limit := 1
	switch n := len(name); {
	case n > 8:
		limit = 3
	case n > 5:
		limit = 2
	}
	best, bestD := "", limit+1
	lower := strings.ToLower(name)
	for _, k := range known {
		if k == name {
			continue
		}
		if d := editDistance(lower, strings.ToLower(k), bestD); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + strconv.Quote(best) + "?)"
}

// editDistance is the optimal string alignment distance between a and b
// (Levenshtein's with adjacent transpositions), in bytes; any distance of
// at least bound is reported as bound.
func editDistance(a, b string, bound int) int {
	if d := len(a) - len(b); d >= bound || -d >= bound {
		return bound
	}
	// Three rows of the table: the one before last, the last, this one.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, prev2[j-2]+1)
			}
			cur[j] = d
			rowMin = min(rowMin, d)
		}
		if rowMin >= bound {
			return bound
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(b)], bound)
}
