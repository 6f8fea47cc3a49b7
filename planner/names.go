package planner

import "github.com/pipesql/pipesql/config"

// Suggestions: every "unknown X" error names the closest valid X, because most such
// errors are typos ('scan.topic-partition-discover.interval') and the fix is obvious once
// the right spelling is on screen. The distance is package config's, the one pipesql
// measures every suggestion with.

// didYouMean returns ": did you mean 'x'?" for the closest candidate, or "".
func didYouMean(name string, candidates []string) string {
	if c := config.Closest(name, candidates, config.SuggestionDistance(name)); c != "" {
		return ": did you mean '" + c + "'?"
	}
	return ""
}
