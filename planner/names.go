package planner

import (
	"sort"
	"strings"
)

// Suggestions: every "unknown X" error names the closest valid X, because most such
// errors are typos ('scan.topic-partition-discover.interval') and the fix is obvious once
// the right spelling is on screen.

// editDistance is the Levenshtein distance between a and b, case-insensitive, counting a
// swap of two adjacent characters as one edit (the most common typo).
func editDistance(a, b string) int {
	ra, rb := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	// Three rows suffice for the optimal-string-alignment variant.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// closest returns the candidate nearest to name, or "" when none is within maxDist edits.
// Ties go to the alphabetically first candidate so that messages are stable.
func closest(name string, candidates []string, maxDist int) string {
	best, bestDist := "", maxDist+1
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	for _, c := range sorted {
		if d := editDistance(name, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// suggestionDistance is how far a misspelling may be from the intended name and still
// be suggested: a third of its length, at least 2, so that short names do not match
// everything and long option keys tolerate a couple of slips.
func suggestionDistance(name string) int {
	return max(2, len([]rune(name))/3)
}

// didYouMean returns ": did you mean 'x'?" for the closest candidate, or "".
func didYouMean(name string, candidates []string) string {
	if c := closest(name, candidates, suggestionDistance(name)); c != "" {
		return ": did you mean '" + c + "'?"
	}
	return ""
}
