package shell

import (
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/funcs"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
)

// completer completes the word before the cursor when the user presses Tab: keywords,
// function, table and column names in code, connector option keys and values inside the
// WITH clause of a CREATE TABLE. It sees the whole statement typed so far, the lines
// already entered included, so that "t." completes the columns of the table t was
// declared as on an earlier line.
type completer struct {
	catalog   func() *planner.Catalog
	pending   func() string // the statement's lines entered before the current one
	keywords  []string      // upper case
	functions []string      // upper case
}

func newCompleter(catalog func() *planner.Catalog, pending func() string) *completer {
	return &completer{
		catalog: catalog, pending: pending,
		keywords: parser.Keywords(), functions: funcs.Names(),
	}
}

// Do implements readline.AutoCompleter: it returns what each candidate adds after the
// cursor, and how many runes before the cursor the candidates replace (share).
func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	if pos > len(line) {
		pos = len(line)
	}
	word, cands, closer := c.complete(c.pending()+string(line[:pos]), string(line[pos:]))
	if len(cands) == 1 {
		cands[0] += closer
	}
	out := make([][]rune, 0, len(cands))
	for _, cand := range cands {
		out = append(out, []rune(cand[len(word):]))
	}
	return out, utf8.RuneCountInString(word)
}

// complete returns the word being completed (the text before the cursor that the
// candidates start with), the candidates, sorted, and what to add after a sole candidate.
// after is the text after the cursor: the FROM clause of "SELECT us| FROM clicks" is
// there.
func (c *completer) complete(text, after string) (word string, cands []string, closer string) {
	toks, end, open := scanSQL(text)
	switch end {
	case endString:
		cands, closer = c.inString(toks)
		return open, withPrefix(cands, open), closer
	case endQuotedIdent:
		return open, withPrefix(c.names(toks), open), "`"
	case endCode:
	default:
		return "", nil, ""
	}
	// The word before the cursor is the last token when the text ends in it.
	if r, _ := utf8.DecodeLastRuneInString(text); len(toks) > 0 && isWordRune(r) {
		word = toks[len(toks)-1].text
		toks = toks[:len(toks)-1]
	}
	n := len(toks)
	switch {
	case n >= 2 && toks[n-1].isOp(".") && (toks[n-2].kind == wordToken || toks[n-2].kind == quotedToken):
		// qualifier.column
		return word, withPrefix(c.columnsOf(toks, toks[n-2].text), word), " "
	case n >= 1 && expectsTable(toks):
		return word, withPrefix(c.relations(), word), " "
	case word == "":
		return "", nil, ""
	}
	rest, _, _ := scanSQL(after)
	cands = withPrefix(c.names(append(toks, rest...)), word)
	cands = append(cands, withPrefix(casedLike(word, c.keywords), word)...)
	cands = append(cands, withPrefix(casedLike(word, c.functions), word)...)
	return word, dedupe(cands), " "
}

// expectsTable reports whether the next word names a table or view.
func expectsTable(toks []sqlToken) bool {
	last := toks[len(toks)-1]
	for _, w := range []string{"FROM", "JOIN", "INTO", "TABLE", "VIEW", "EXISTS"} {
		if last.is(w) {
			return true
		}
	}
	// DESCRIBE t, DESC t: only as the statement's first word (DESC also ends ORDER BY).
	return len(toks) == 1 && (last.is("DESCRIBE") || last.is("DESC"))
}

// relations returns the names of the tables and views.
func (c *completer) relations() []string {
	cat := c.catalog()
	return append(cat.TableNames(), cat.ViewNames()...)
}

// names returns the table and view names and the columns of those the statement
// mentions (of all when it mentions none yet).
func (c *completer) names(toks []sqlToken) []string {
	names := c.relations()
	rels := c.mentioned(toks)
	if len(rels) == 0 {
		rels = c.relations()
	}
	for _, rel := range rels {
		names = append(names, c.columns(rel)...)
	}
	return names
}

// mentioned returns the tables and views the tokens name.
func (c *completer) mentioned(toks []sqlToken) []string {
	var out []string
	for _, t := range toks {
		if t.kind != wordToken && t.kind != quotedToken {
			continue
		}
		if c.isRelation(t.text) && !slices.Contains(out, t.text) {
			out = append(out, t.text)
		}
	}
	return out
}

func (c *completer) isRelation(name string) bool {
	cat := c.catalog()
	if _, ok := cat.Table(name); ok {
		return true
	}
	_, ok := cat.View(name)
	return ok
}

// columns returns the column names of a table or view.
func (c *completer) columns(rel string) []string {
	cat := c.catalog()
	if t, ok := cat.Table(rel); ok {
		return t.Schema().Names()
	}
	if v, ok := cat.View(rel); ok {
		return v.Schema.Names()
	}
	return nil
}

// columnsOf returns the columns of qualifier: a table or view, or an alias declared in
// the statement (FROM clicks c, FROM clicks AS c).
func (c *completer) columnsOf(toks []sqlToken, qualifier string) []string {
	if c.isRelation(qualifier) {
		return c.columns(qualifier)
	}
	for i := 0; i+1 < len(toks); i++ {
		if !c.isRelation(toks[i].text) {
			continue
		}
		j := i + 1
		if toks[j].is("AS") && j+1 < len(toks) {
			j++
		}
		if (toks[j].kind == wordToken || toks[j].kind == quotedToken) && toks[j].text == qualifier {
			return c.columns(toks[i].text)
		}
	}
	return nil
}

// inString completes inside a string literal: the keys and some values of a CREATE
// TABLE's WITH options. closer ends the string after a sole candidate: a key goes on to
// its value, a value ends its string.
func (c *completer) inString(toks []sqlToken) ([]string, string) {
	opts, ok := withOptions(toks)
	if !ok {
		return nil, ""
	}
	last := toks[len(toks)-1]
	switch {
	case last.isOp("(") || last.isOp(","):
		return optionKeys(opts, createColumns(toks)), "' = '"
	case last.isOp("=") && len(toks) >= 2 && toks[len(toks)-2].kind == stringToken:
		return optionValues(opts, toks[len(toks)-2].text), "'"
	}
	return nil, ""
}

// withOptions returns the options written so far when toks end inside the WITH (...)
// clause of a CREATE TABLE, and whether they do.
func withOptions(toks []sqlToken) (map[string]string, bool) {
	if len(toks) == 0 || !toks[0].is("CREATE") {
		return nil, false
	}
	at := -1
	for i := len(toks) - 2; i >= 0; i-- {
		if toks[i].is("WITH") && toks[i+1].isOp("(") {
			at = i + 1
			break
		}
	}
	if at < 0 {
		return nil, false
	}
	depth := 0
	opts := map[string]string{}
	for i := at; i < len(toks); i++ {
		switch {
		case toks[i].isOp("("):
			depth++
		case toks[i].isOp(")"):
			depth--
		case toks[i].isOp("=") && i > 0 && i+1 < len(toks) && toks[i-1].kind == stringToken && toks[i+1].kind == stringToken:
			opts[toks[i-1].text] = toks[i+1].text
		}
	}
	return opts, depth > 0
}

// createColumns returns the column names of the CREATE TABLE in toks: the first word
// after each '(' or ',' at the top level of its column list.
func createColumns(toks []sqlToken) []string {
	var cols []string
	depth := 0
	for i, t := range toks {
		switch {
		case t.isOp("("):
			depth++
			if depth > 1 {
				continue
			}
		case t.isOp(")"):
			depth--
			if depth == 0 {
				return cols
			}
			continue
		case t.isOp(",") && depth == 1:
		default:
			continue
		}
		if i+1 < len(toks) && (toks[i+1].kind == wordToken || toks[i+1].kind == quotedToken) {
			name := toks[i+1]
			if name.kind == wordToken && (name.is("WATERMARK") || name.is("PRIMARY") || name.is("CONSTRAINT")) {
				continue
			}
			cols = append(cols, name.text)
		}
	}
	return cols
}

// optionKeys returns the keys a table with options opts may have: 'connector', then,
// once the connector is known, its options ('#' standing for each column), its
// pass-through prefixes and the options of its formats.
func optionKeys(opts map[string]string, columns []string) []string {
	keys := []string{"connector"}
	f, ok := connectors.Lookup(strings.TrimSpace(opts["connector"]))
	if !ok {
		return keys
	}
	for _, o := range f.Options {
		if strings.Contains(o.Key, "#") {
			for _, col := range columns {
				keys = append(keys, strings.Replace(o.Key, "#", col, 1))
			}
			continue
		}
		keys = append(keys, o.Key)
		if o.Key != "format" && !strings.HasSuffix(o.Key, ".format") {
			continue
		}
		name := strings.TrimSpace(opts[o.Key])
		if name == "" {
			name = o.Default
		}
		if ff, ok := connectors.LookupFormat(name); ok {
			prefix := strings.TrimSuffix(o.Key, "format") + ff.Name + "."
			for _, fo := range ff.Options {
				keys = append(keys, prefix+fo.Key)
			}
		}
	}
	keys = append(keys, f.Prefixes...)
	return keys
}

// optionValues returns the values option key may take: connector and format names, the
// members of an enum option.
func optionValues(opts map[string]string, key string) []string {
	if key == "connector" {
		return connectors.Names()
	}
	f, ok := connectors.Lookup(strings.TrimSpace(opts["connector"]))
	if !ok {
		return nil
	}
	for _, o := range f.Options {
		if !keyMatches(o.Key, key) {
			continue
		}
		if key == "format" || strings.HasSuffix(key, ".format") {
			if f.Formats != nil {
				return f.Formats
			}
			return connectors.FormatNames()
		}
		return o.Enum
	}
	return nil
}

// keyMatches reports whether key is an option declared as pattern, where '#' stands for
// a column name (fields.#.kind matches fields.user_id.kind).
func keyMatches(pattern, key string) bool {
	before, after, ok := strings.Cut(pattern, "#")
	if !ok {
		return pattern == key
	}
	return len(key) > len(before)+len(after) && strings.HasPrefix(key, before) && strings.HasSuffix(key, after)
}

// withPrefix returns the members of words that start with prefix, sorted. Identifiers
// are case-sensitive in Flink, so they must match exactly; keywords are put in the case
// the user types beforehand (casedLike).
func withPrefix(words []string, prefix string) []string {
	var out []string
	for _, w := range words {
		if strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	sort.Strings(out)
	return out
}

// casedLike returns words (upper case) in lower case when the user types word in lower case.
func casedLike(word string, words []string) []string {
	lower := false
	for _, r := range word {
		if unicode.IsUpper(r) {
			return words
		}
		if unicode.IsLower(r) {
			lower = true
		}
	}
	if !lower {
		return words
	}
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = strings.ToLower(w)
	}
	return out
}

func dedupe(words []string) []string {
	sort.Strings(words)
	return slices.Compact(words)
}
