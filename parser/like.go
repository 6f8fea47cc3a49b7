package parser

// LikeModes and LikeFeatures are the words of a LIKE clause's options, as Flink has them.
var (
	LikeModes    = []string{"INCLUDING", "EXCLUDING", "OVERWRITING"}
	LikeFeatures = []string{"ALL", "CONSTRAINTS", "GENERATED", "METADATA", "OPTIONS", "PARTITIONS", "WATERMARKS"}
)

// parseLike parses LIKE source [( option ... )] at LIKE.
func (p *parser) parseLike() (*TableLike, error) {
	at := p.next().pos
	like := &TableLike{At: at}
	var err error
	if like.Source, _, err = p.parseObjectName("name of the table after LIKE"); err != nil {
		return nil, err
	}
	if !p.peek().isOp("(") {
		return like, nil
	}
	end := p.match[p.i]
	if end < 0 || end > p.hi {
		return nil, syntaxErr(p.peek().pos, "unclosed '(': the LIKE options have no matching ')'")
	}
	p.i++
	for p.i < end {
		t := p.peek()
		if !t.isWordIn(LikeModes) {
			return nil, p.errExpected(LikeModes...)
		}
		p.i++
		f := p.peek()
		if p.i >= end || !f.isWordIn(LikeFeatures) {
			return nil, p.errExpected(LikeFeatures...)
		}
		p.i++
		like.Options = append(like.Options, LikeOption{At: t.pos, Mode: t.val, Feature: f.val})
	}
	if len(like.Options) == 0 {
		return nil, syntaxErr(p.peek().pos, "empty LIKE options: expected INCLUDING, EXCLUDING or OVERWRITING with a feature, or no parentheses")
	}
	p.i = end + 1
	return like, nil
}

func (t token) isWordIn(words []string) bool {
	if t.kind != tokWord {
		return false
	}
	for _, w := range words {
		if t.val == w {
			return true
		}
	}
	return false
}

// like formats a LIKE clause.
func (f *formatter) like(l *TableLike) {
	f.WriteString(" LIKE " + l.Source.String())
	if len(l.Options) == 0 {
		return
	}
	f.WriteString(" (")
	for i, o := range l.Options {
		if i > 0 {
			f.WriteString(" ")
		}
		f.WriteString(o.Mode + " " + o.Feature)
	}
	f.WriteString(")")
}

// ParseDataType parses a type as Flink writes it (INT NOT NULL, DECIMAL(10, 2),
// ROW<`a` INT, `b` STRING>), the text types.Type prints.
func ParseDataType(file, src string) (DataType, error) {
	toks, err := lex(file, src, Pos{})
	if err != nil {
		return DataType{}, withSource(err, src)
	}
	p := newParser(file, toks)
	dt, err := p.parseTypeIn(0, len(toks)-1)
	if err != nil {
		return DataType{}, withSource(err, src)
	}
	return dt, nil
}
