package planner

import (
	"strings"

	"github.com/pipesql/pipesql/parser"
)

// CREATE TABLE ... LIKE, as Flink merges a table's definition with the one it is LIKE
// (MergeTableLikeUtil): the base table's physical columns come first and always; each
// other feature is included (a conflict with the new definition is an error), excluded,
// or overwritten by the new definition. Without options the strategy is INCLUDING ALL
// OVERWRITING OPTIONS. The result is an ordinary CREATE TABLE, validated as one and
// shown by SHOW CREATE TABLE.

// likeFeatures are the features a LIKE option can name, ALL aside.
var likeFeatures = []string{"CONSTRAINTS", "GENERATED", "METADATA", "OPTIONS", "PARTITIONS", "WATERMARKS"}

// likeStrategies returns the merge mode of each feature for a LIKE clause's options.
func likeStrategies(opts []parser.LikeOption) (map[string]string, error) {
	modes := map[string]string{}
	for _, f := range likeFeatures {
		modes[f] = "INCLUDING"
	}
	modes["OPTIONS"] = "OVERWRITING"
	seen := map[string]parser.LikeOption{}
	for _, o := range opts {
		if prev, ok := seen[o.Feature]; ok {
			return nil, errAt(o.At, ErrInvalidStatement, "LIKE option %s %s: %s is already given (%s %s at %d:%d)",
				o.Mode, o.Feature, o.Feature, prev.Mode, prev.Feature, prev.At.Line, prev.At.Col)
		}
		seen[o.Feature] = o
		switch {
		case o.Feature == "ALL" && o.Mode == "OVERWRITING":
			return nil, errAt(o.At, ErrInvalidStatement, "OVERWRITING ALL is not a LIKE option: ALL takes INCLUDING or EXCLUDING, then OVERWRITING names a feature (GENERATED, METADATA, OPTIONS, WATERMARKS)")
		case (o.Feature == "CONSTRAINTS" || o.Feature == "PARTITIONS") && o.Mode == "OVERWRITING":
			return nil, errAt(o.At, ErrInvalidStatement, "OVERWRITING %s is not a LIKE option: %s are included or excluded", o.Feature, strings.ToLower(o.Feature))
		case o.Feature == "ALL":
			for _, f := range likeFeatures {
				modes[f] = o.Mode
			}
		}
	}
	for _, o := range opts {
		if o.Feature != "ALL" {
			modes[o.Feature] = o.Mode
		}
	}
	return modes, nil
}

// mergeLike returns the definition of derived, a CREATE TABLE ... LIKE base.
func mergeLike(base *Table, derived *parser.CreateTable) (*parser.CreateTable, error) {
	modes, err := likeStrategies(derived.Like.Options)
	if err != nil {
		return nil, err
	}
	src := base.Def
	out := *derived
	out.Like = nil
	out.Columns = nil

	// Columns: the base's physical ones, then (by strategy) its computed and metadata
	// ones, in the base's order; then the derived ones. OVERWRITING replaces a base
	// column of the same kind in place.
	index := map[string]int{}
	for _, c := range src.Columns {
		switch {
		case c.Kind == parser.ComputedColumn && modes["GENERATED"] == "EXCLUDING",
			c.Kind == parser.MetadataColumn && modes["METADATA"] == "EXCLUDING":
			continue
		}
		index[strings.ToLower(c.Name)] = len(out.Columns)
		out.Columns = append(out.Columns, c)
	}
	for _, c := range derived.Columns {
		i, dup := index[strings.ToLower(c.Name)]
		if !dup {
			index[strings.ToLower(c.Name)] = len(out.Columns)
			out.Columns = append(out.Columns, c)
			continue
		}
		old := out.Columns[i]
		feature := map[parser.ColumnKind]string{parser.ComputedColumn: "GENERATED", parser.MetadataColumn: "METADATA"}[old.Kind]
		if old.Kind == c.Kind && feature != "" && modes[feature] == "OVERWRITING" {
			out.Columns[i] = c
			continue
		}
		hint := ""
		if feature != "" && old.Kind == c.Kind {
			hint = " (OVERWRITING " + feature + " replaces it)"
		}
		return nil, errAt(c.At, ErrAlreadyExists, "a column named '%s' already exists in the base table %s%s", c.Name, base.Name, hint)
	}

	// The watermark: one per table here, as in Flink per rowtime column.
	out.Watermark = nil
	if src.Watermark != nil && modes["WATERMARKS"] != "EXCLUDING" {
		out.Watermark = src.Watermark
	}
	if w := derived.Watermark; w != nil {
		if out.Watermark != nil && modes["WATERMARKS"] == "INCLUDING" {
			return nil, errAt(w.At, ErrAlreadyExists, "the base table %s already has a watermark (for %s): write OVERWRITING WATERMARKS or EXCLUDING WATERMARKS", base.Name, out.Watermark.Column)
		}
		out.Watermark = w
	}

	out.PrimaryKey = nil
	if src.PrimaryKey != nil && modes["CONSTRAINTS"] == "INCLUDING" {
		out.PrimaryKey = src.PrimaryKey
	}
	if pk := derived.PrimaryKey; pk != nil {
		if out.PrimaryKey != nil {
			return nil, errAt(pk.At, ErrAlreadyExists, "the base table %s already has a primary key: write EXCLUDING CONSTRAINTS to declare another", base.Name)
		}
		out.PrimaryKey = pk
	}

	out.PartitionBy, out.PartitionAt = nil, parser.Pos{}
	if len(src.PartitionBy) > 0 && modes["PARTITIONS"] == "INCLUDING" {
		out.PartitionBy, out.PartitionAt = src.PartitionBy, src.PartitionAt
	}
	if len(derived.PartitionBy) > 0 {
		if len(out.PartitionBy) > 0 {
			return nil, errAt(derived.PartitionAt, ErrAlreadyExists, "the base table %s is already partitioned: write EXCLUDING PARTITIONS to partition it otherwise", base.Name)
		}
		out.PartitionBy, out.PartitionAt = derived.PartitionBy, derived.PartitionAt
	}

	// Options: the base's (unless excluded), then the derived ones, a key given in both
	// replaced or refused by the strategy.
	out.Options = nil
	pos := map[string]int{}
	if modes["OPTIONS"] != "EXCLUDING" {
		for _, o := range src.Options {
			pos[o.Key] = len(out.Options)
			out.Options = append(out.Options, o)
		}
	}
	for _, o := range derived.Options {
		i, dup := pos[o.Key]
		switch {
		case !dup:
			pos[o.Key] = len(out.Options)
			out.Options = append(out.Options, o)
		case modes["OPTIONS"] == "OVERWRITING":
			out.Options[i] = o
		default:
			return nil, errAt(o.At, ErrAlreadyExists, "the base table %s already has option '%s' = '%s': write OVERWRITING OPTIONS or EXCLUDING OPTIONS",
				base.Name, o.Key, out.Options[i].Value)
		}
	}
	if out.Options == nil {
		out.Options = []parser.Option{}
	}
	return &out, nil
}
