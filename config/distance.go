package config

import (
	"sort"
	"strings"
)

// Distance is the edit distance between a and b, case-insensitive, counting a swap of
// two adjacent characters as one edit (the commonest typo): the optimal-string-alignment
// variant of Levenshtein's distance. Every "did you mean" in pipesql measures with it.
func Distance(a, b string) int {
	ra, rb := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	// Three rows suffice: a swap looks two rows back.
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

// Closest returns the candidate nearest to name, or "" when none is within maxDist
// edits. Ties go to the alphabetically first candidate, so that messages are stable.
func Closest(name string, candidates []string, maxDist int) string {
	best, bestDist := "", maxDist+1
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	for _, c := range sorted {
		if d := Distance(name, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// SuggestionDistance is how far a misspelling may be from the intended name and still
// be suggested: a third of its length, at least 2, so that short names do not match
// everything and long keys tolerate a couple of slips.
func SuggestionDistance(name string) int {
	return max(2, len([]rune(name))/3)
}
