package planner

import (
	"strings"

	"github.com/pipesql/pipesql/parser"
)

// Dynamic table options
//
// An OPTIONS hint after a table name, SELECT ... FROM t /*+ OPTIONS('k' = 'v') */ or
// INSERT INTO t /*+ OPTIONS('k' = 'v') */, overrides or adds to the table's WITH options
// for that one read or write, as Flink's dynamic table options do. The table is then
// validated again with the merged options, exactly as CREATE TABLE validates it, so that a
// misspelt key in a hint is an error at the hint that names the closest valid key.

// withHint returns the table as a read or write with the OPTIONS hint opts sees it: t
// itself when there is no hint, else a copy whose options are t's WITH options with opts
// applied over them, validated again. The copy is not in the catalog.
func withHint(t *Table, opts []parser.Option) (*Table, error) {
	if len(opts) == 0 {
		return t, nil
	}
	hinted := map[string]bool{}
	for _, o := range opts {
		if hinted[o.Key] {
			return nil, errAt(o.At, ErrInvalidOption, "option '%s' is set twice in the hint", o.Key)
		}
		hinted[o.Key] = true
	}
	def := *t.Def
	// Errors about the options as a whole (a required option the merge lacks) point at
	// the hint, which made the combination.
	def.At = opts[0].At
	def.Options = nil
	for _, o := range t.Def.Options {
		if !hinted[o.Key] {
			def.Options = append(def.Options, o)
		}
	}
	def.Options = append(def.Options, opts...)
	ht, err := buildTable(&def, t.Name)
	if err != nil {
		return nil, err
	}
	ht.Def = t.Def
	ht.Hint = opts
	return ht, nil
}

// hintText renders an OPTIONS hint for EXPLAIN: OPTIONS('k'='v', ...), or "" without one.
func hintText(opts []parser.Option) string {
	if len(opts) == 0 {
		return ""
	}
	kv := make([]string, len(opts))
	for i, o := range opts {
		kv[i] = quoteString(o.Key) + "=" + quoteString(o.Value)
	}
	return "OPTIONS(" + strings.Join(kv, ", ") + ")"
}
