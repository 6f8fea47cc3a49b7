package difftest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Features switches constructs of the generator on and off. A construct whose results
// pipesql gets wrong is switched off here, with the bug it shows, so that the test
// passes while the bug is open; switch it back on when the bug is fixed.
type Features struct {
	AggFilter        bool // COUNT(x) FILTER (WHERE ...) and friends
	AggDistinct      bool // SUM(DISTINCT x), COUNT(DISTINCT x), ...
	SelectDistinct   bool // SELECT DISTINCT
	Having           bool
	Hop              bool
	HopUneven        bool // HOP windows whose size is not a multiple of the slide
	Cumulate         bool
	Subqueries       bool // subqueries in FROM and WITH
	UpdatingInput    bool // an aggregate or DISTINCT over an aggregated subquery (retractions)
	WindowOverView   bool // a window table function over a WITH view
	GroupByExpr      bool // GROUP BY an expression rather than a column
	AggOfExpr        bool // aggregates of expressions (SUM(i * 2))
	IsTrue           bool // IS [NOT] TRUE / FALSE
	IsDistinctFrom   bool // IS [NOT] DISTINCT FROM
	StringFuncs      bool // UPPER, SUBSTR, LPAD, REPLACE, ...
	Position         bool // POSITION(a IN b)
	IntDivision      bool // INT / INT (integer division), MOD
	CastDoubleToInt  bool
	RoundFloorCeil   bool
	ConcatWS         bool
	NullIf           bool
	MinMaxBool       bool // MIN/MAX of BOOLEAN
	MinMaxTime       bool // MIN/MAX of the event time
	WindowKeysSubset bool // window aggregates that leave window_start or window_end out of SELECT
	Decimal          bool // the DECIMAL(10, 2) column m and its arithmetic
	// ROUND/TRUNCATE(DECIMAL(p, s), d) with a literal d < s: Flink types it
	// DECIMAL(1 + p - s + d, d), so CAST(ROUND(36.25, 1) AS STRING) is '36.3'.
	RoundDecimal     bool
	MixedNumeric     bool // INT with BIGINT, DOUBLE and DECIMAL in one operation or comparison
	AggExprs         bool // expressions over aggregates in SELECT (COUNT(*) + 1, CASE WHEN SUM(i) > 0 ...)
	LikeEscape       bool // LIKE ... ESCAPE '!'
	WindowKeyExprs   bool // window aggregates grouped by expressions (UPPER(k1)), not only columns
	WindowOffset     bool // the offset argument of TUMBLE, HOP and CUMULATE
	ShadowingAliases bool // SELECT i AS j, j AS i: output names that are input column names
	NestedSubqueries bool // a subquery in a subquery, a WITH in a WITH
	Dates            bool // DATE values: CAST(ts AS DATE), DATE literals, EXTRACT
	ExtraFuncs       bool // SPLIT_INDEX, REGEXP_EXTRACT, ASCII, CHR, TO_BASE64, SHA256, LOG, trigonometry
	TimeFuncs        bool // TIMESTAMP expressions: intervals, FLOOR TO, EXTRACT, DATE_FORMAT, TIMESTAMPDIFF
	MoreFuncs        bool // GREATEST, LEAST, IF, simple CASE, TRIM(BOTH ...), MD5, INSTR, math
	Regex            bool // REGEXP, REGEXP_REPLACE
	WindowProjection bool // a window table function without aggregation
	LegacyWindows    bool // GROUP BY TUMBLE(ts, ...) / HOP(ts, ...) with TUMBLE_START ...
}

// AllFeatures is every construct the generator knows.
func AllFeatures() Features {
	return Features{
		AggFilter: true, AggDistinct: true, SelectDistinct: true, Having: true, Hop: true,
		HopUneven: true, Cumulate: true, Subqueries: true, UpdatingInput: true,
		WindowOverView: true, GroupByExpr: true, AggOfExpr: true, IsTrue: true, IsDistinctFrom: true,
		StringFuncs: true, Position: true, IntDivision: true, CastDoubleToInt: true,
		RoundFloorCeil: true, ConcatWS: true, NullIf: true, MinMaxBool: true, MinMaxTime: true,
		WindowKeysSubset: true, Decimal: true, TimeFuncs: true, MoreFuncs: true, Regex: true,
		WindowProjection: true, LegacyWindows: true, RoundDecimal: true, MixedNumeric: true, AggExprs: true,
		LikeEscape: true, WindowKeyExprs: true, WindowOffset: true, ShadowingAliases: true,
		NestedSubqueries: true, Dates: true, ExtraFuncs: true,
	}
}

// Expr is one generated expression in both dialects.
type Expr struct {
	F, D string // Flink, DuckDB
	T    Type
	Agg  bool // contains an aggregate
}

type gen struct {
	rng  *rand.Rand
	feat Features
	seq  int           // for fresh names
	zone time.Duration // the offset of table.local-time-zone, for windows of a TIMESTAMP_LTZ
	// smallBig > 0 makes BIGINT literals small: the expression is cast to INT.
	smallBig int
}

func (g *gen) n(k int) int           { return g.rng.IntN(k) }
func (g *gen) chance(p float64) bool { return g.rng.Float64() < p }

func both(s string, t Type) Expr { return Expr{F: s, D: s, T: t} }

// wrap renders a call or operator whose text is the same in both dialects.
func wrap(t Type, format string, args ...Expr) Expr {
	fa, da := make([]any, len(args)), make([]any, len(args))
	for i, a := range args {
		fa[i], da[i] = a.F, a.D
	}
	return Expr{F: fmt.Sprintf(format, fa...), D: fmt.Sprintf(format, da...), T: t}
}

// wrap2 renders a call that is spelled differently in the two dialects.
func wrap2(t Type, flink, duck string, args ...Expr) Expr {
	fa, da := make([]any, len(args)), make([]any, len(args))
	for i, a := range args {
		fa[i], da[i] = a.F, a.D
	}
	return Expr{F: fmt.Sprintf(flink, fa...), D: fmt.Sprintf(duck, da...), T: t}
}

func intLit(v int) Expr {
	if v < 0 {
		return both(fmt.Sprintf("(%d)", v), TInt)
	}
	return both(fmt.Sprint(v), TInt)
}

func strLit(s string) Expr {
	return both("'"+strings.ReplaceAll(s, "'", "''")+"'", TString)
}

func (g *gen) lit(t Type) Expr {
	if g.chance(0.04) {
		return both(fmt.Sprintf("CAST(NULL AS %s)", t.Flink()), t).withDuck(fmt.Sprintf("CAST(NULL AS %s)", t.Duck()))
	}
	switch t {
	case TInt:
		return intLit(g.n(21) - 5)
	case TBigInt:
		v := g.rng.Int64N(2e10) - 1e10
		if g.chance(0.5) || g.smallBig > 0 {
			v = int64(g.n(21) - 10)
		}
		return both(fmt.Sprintf("CAST(%d AS BIGINT)", v), TBigInt)
	case TDouble:
		return both(fmt.Sprintf("CAST(%g AS DOUBLE)", float64(g.n(201)-100)/4), TDouble)
	case TString:
		if g.chance(0.5) {
			return strLit(keyWords[g.n(len(keyWords))])
		}
		var b strings.Builder
		for range g.n(3) {
			b.WriteRune(textChars[g.n(len(textChars))])
		}
		return strLit(b.String())
	case TBool:
		if g.chance(0.5) {
			return both("TRUE", TBool)
		}
		return both("FALSE", TBool)
	case TDecimal:
		c := cents(g.n(20001) - 10000)
		if c < 0 {
			return both("("+c.String()+")", TDecimal)
		}
		return both(c.String(), TDecimal)
	case TDate:
		return both("DATE '"+time.Date(2024, 2, 29+g.n(4), 0, 0, 0, 0, time.UTC).Format("2006-01-02")+"'", TDate)
	case TTimestamp:
		at := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(g.n(48*60)) * time.Minute)
		return both("TIMESTAMP '"+at.Format("2006-01-02 15:04:05.000")+"'", TTimestamp)
	}
	panic("no literal of type " + t.Flink())
}

func (e Expr) withDuck(d string) Expr { e.D = d; return e }

func (g *gen) nonZero() int {
	v := g.n(9) + 1
	if g.chance(0.3) {
		return -v
	}
	return v
}

// col picks a column of type t from scope, or a literal when there is none.
func (g *gen) col(sc []Column, t Type) Expr {
	var cs []Column
	for _, c := range sc {
		if c.Type == t {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 || g.chance(0.1) {
		return g.lit(t)
	}
	c := cs[g.n(len(cs))]
	return both(c.Name, t)
}

func (g *gen) leaf(sc []Column, t Type) Expr {
	if g.chance(0.75) {
		return g.col(sc, t)
	}
	return g.lit(t)
}

// expr generates an expression of type t over the columns of sc.
func (g *gen) expr(sc []Column, t Type, depth int) Expr {
	if depth <= 0 || g.chance(0.3) {
		if t == TBool {
			return g.pred(sc, 0)
		}
		return g.leaf(sc, t)
	}
	d := depth - 1
	switch g.n(6) {
	case 0:
		p := g.pred(sc, d)
		if g.chance(0.3) {
			return wrap(t, "CASE WHEN %s THEN %s END", p, g.expr(sc, t, d))
		}
		return wrap(t, "CASE WHEN %s THEN %s ELSE %s END", p, g.expr(sc, t, d), g.expr(sc, t, d))
	case 1:
		return wrap(t, "COALESCE(%s, %s)", g.expr(sc, t, d), g.expr(sc, t, d))
	case 2:
		if g.feat.NullIf && t != TBool {
			return wrap(t, "NULLIF(%s, %s)", g.expr(sc, t, d), g.leaf(sc, t))
		}
	case 3:
		if g.feat.MoreFuncs {
			switch g.n(3) {
			case 0:
				return wrap2(t, "IF(%s, %s, %s)", "CASE WHEN %s THEN %s ELSE %s END", g.pred(sc, d), g.expr(sc, t, d), g.expr(sc, t, d))
			case 1:
				k := g.expr(sc, TInt, d)
				return wrap(t, "CASE %s WHEN %s THEN %s WHEN %s THEN %s ELSE %s END", k, intLit(g.n(7)-3), g.expr(sc, t, d), intLit(g.n(7)-3), g.expr(sc, t, d), g.expr(sc, t, d))
			default:
				if t != TBool {
					// Flink's GREATEST and LEAST are NULL when an argument is; DuckDB's skip NULLs.
					a, b := g.expr(sc, t, d), g.expr(sc, t, d)
					fn := []string{"GREATEST", "LEAST"}[g.n(2)]
					return Expr{F: fn + "(" + a.F + ", " + b.F + ")",
						D: "CASE WHEN " + a.D + " IS NULL OR " + b.D + " IS NULL THEN NULL ELSE " + strings.ToLower(fn) + "(" + a.D + ", " + b.D + ") END", T: t}
				}
			}
		}
	}
	if g.feat.MixedNumeric && g.chance(0.1) {
		// a wider type unifying a narrower one: COALESCE(i, b) is a BIGINT,
		// CASE ... THEN i ELSE d END a DOUBLE, CASE ... THEN i ELSE m END a DECIMAL
		var narrow []Type
		switch t {
		case TBigInt:
			narrow = []Type{TInt}
		case TDouble:
			narrow = []Type{TInt, TBigInt}
			if g.feat.Decimal {
				narrow = append(narrow, TDecimal)
			}
		case TDecimal:
			narrow = []Type{TInt}
		}
		if len(narrow) > 0 {
			n := g.expr(sc, narrow[g.n(len(narrow))], d)
			w := g.expr(sc, t, d)
			k := g.n(4)
			if k != 3 && g.chance(0.5) {
				n, w = w, n
			}
			switch k {
			case 0:
				return wrap(t, "COALESCE(%s, %s)", n, w)
			case 1:
				return wrap(t, "CASE WHEN %s THEN %s ELSE %s END", g.pred(sc, d), n, w)
			case 2:
				return wrap2(t, "IF(%s, %s, %s)", "CASE WHEN %s THEN %s ELSE %s END", g.pred(sc, d), n, w)
			default:
				return wrap(t, "NULLIF(%s, %s)", w, n) // NULLIF has the type of its first argument
			}
		}
	}
	switch t {
	case TInt:
		return g.intExpr(sc, d)
	case TBigInt:
		return g.bigintExpr(sc, d)
	case TDouble:
		return g.doubleExpr(sc, d)
	case TString:
		return g.stringExpr(sc, d)
	case TBool:
		return g.pred(sc, depth)
	case TDecimal:
		return g.decimalExpr(sc, d)
	case TTimestamp:
		return g.timeExpr(sc, d)
	case TDate:
		if g.chance(0.7) {
			return wrap(TDate, "CAST(%s AS DATE)", g.expr(sc, TTimestamp, d))
		}
	}
	return g.leaf(sc, t)
}

func (g *gen) decimalExpr(sc []Column, d int) Expr {
	switch g.n(8) {
	case 0:
		return wrap(TDecimal, "(%s + %s)", g.expr(sc, TDecimal, d), g.expr(sc, TDecimal, d))
	case 1:
		return wrap(TDecimal, "(%s - %s)", g.expr(sc, TDecimal, d), g.leaf(sc, TInt))
	case 2:
		if g.chance(0.5) {
			return wrap(TDecimal, "(%s * %s)", g.leaf(sc, TDecimal), g.leaf(sc, TDecimal))
		}
		return wrap(TDecimal, "(%s * %s)", g.leaf(sc, TDecimal), g.leaf(sc, TInt))
	case 3:
		return wrap2(TDecimal, "CAST(%s AS DECIMAL(10, 2))", "CAST(%s AS DECIMAL(10,2))", g.leaf(sc, TInt))
	case 4:
		if g.feat.RoundDecimal {
			return wrap(TDecimal, fmt.Sprintf("ROUND(%%s, %d)", g.n(2)), g.col(sc, TDecimal))
		}
	case 5:
		return wrap(TDecimal, "ABS(%s)", g.expr(sc, TDecimal, d))
	case 6:
		if g.feat.MixedNumeric {
			// INT op DECIMAL is a DECIMAL (BIGINT would overflow the INT casts above)
			o := TInt
			op := []string{"+", "-", "*"}[g.n(3)]
			if op == "*" {
				return wrap(TDecimal, "(%s * %s)", g.leaf(sc, o), g.leaf(sc, TDecimal))
			}
			return wrap(TDecimal, "(%s "+op+" %s)", g.leaf(sc, o), g.expr(sc, TDecimal, d))
		}
	}
	return g.leaf(sc, TDecimal)
}

var timeUnits = []struct{ flink, duck string }{{"SECOND", "second"}, {"MINUTE", "minute"}, {"HOUR", "hour"}, {"DAY", "day"}}

// ltz is a TIMESTAMP_LTZ column of sc seen as the wall clock of table.local-time-zone,
// in DuckDB (where it is a UTC TIMESTAMP) and as a TIMESTAMP expression in Flink.
func (g *gen) ltz(sc []Column) (Expr, bool) {
	for _, c := range sc {
		if c.Type == TLtz && g.feat.TimeFuncs {
			return Expr{F: c.Name, D: fmt.Sprintf("(%s + to_milliseconds(%d))", c.Name, g.zone.Milliseconds()), T: TTimestamp}, true
		}
	}
	return Expr{}, false
}

func (g *gen) timeExpr(sc []Column, d int) Expr {
	if !g.feat.TimeFuncs {
		return g.leaf(sc, TTimestamp)
	}
	if l, ok := g.ltz(sc); ok && g.chance(0.2) {
		// CAST(TIMESTAMP_LTZ AS TIMESTAMP) is the wall clock in the session zone
		return wrap2(TTimestamp, "CAST(%s AS TIMESTAMP(3))", "%s", l)
	}
	switch g.n(5) {
	case 0:
		op := []string{"+", "-"}[g.n(2)]
		u := timeUnits[g.n(3)]
		return wrap(TTimestamp, fmt.Sprintf("(%%s %s INTERVAL '%d' %s)", op, 1+g.n(90), u.flink), g.expr(sc, TTimestamp, d))
	case 1:
		u := timeUnits[1+g.n(3)]
		return wrap2(TTimestamp, "FLOOR(%s TO "+u.flink+")", "date_trunc('"+u.duck+"', %s)", g.expr(sc, TTimestamp, d))
	case 2:
		u := timeUnits[g.n(3)]
		return wrap2(TTimestamp, "TIMESTAMPADD("+u.flink+", %s, %s)", "(%[2]s + CAST(%[1]s AS BIGINT) * INTERVAL 1 "+u.duck+")", g.leaf(sc, TInt), g.expr(sc, TTimestamp, d))
	}
	return g.leaf(sc, TTimestamp)
}

// timeField is a BIGINT field of a TIMESTAMP.
func (g *gen) timeField(sc []Column, d int) Expr {
	if g.feat.Dates && g.chance(0.2) {
		f := []string{"YEAR", "MONTH", "DAY"}[g.n(3)]
		return wrap2(TBigInt, "EXTRACT("+f+" FROM %s)", "extract("+strings.ToLower(f)+" FROM %s)", g.expr(sc, TDate, d))
	}
	ts := g.expr(sc, TTimestamp, d)
	if l, ok := g.ltz(sc); ok && g.chance(0.3) {
		ts = l // HOUR(ltz) and friends read the wall clock in the session zone
	}
	switch g.n(8) {
	case 0:
		return wrap(TBigInt, "HOUR(%s)", ts)
	case 1:
		return wrap(TBigInt, "MINUTE(%s)", ts)
	case 2:
		return wrap(TBigInt, "SECOND(%s)", ts)
	case 3:
		return wrap(TBigInt, "DAYOFMONTH(%s)", ts)
	case 4:
		// Flink's DAYOFWEEK is 1 for Sunday, DuckDB's 0.
		return wrap2(TBigInt, "DAYOFWEEK(%s)", "(dayofweek(%s) + 1)", ts)
	case 5:
		return wrap2(TBigInt, "EXTRACT(MINUTE FROM %s)", "extract(minute FROM %s)", ts)
	case 6:
		return wrap2(TBigInt, "EXTRACT(DAY FROM %s)", "extract(day FROM %s)", ts)
	}
	return wrap2(TBigInt, "DAYOFYEAR(%s)", "dayofyear(%s)", ts)
}

func (g *gen) intExpr(sc []Column, d int) Expr {
	switch g.n(13) {
	case 0:
		return wrap(TInt, "(%s + %s)", g.expr(sc, TInt, d), g.expr(sc, TInt, d))
	case 1:
		return wrap(TInt, "(%s - %s)", g.expr(sc, TInt, d), g.expr(sc, TInt, d))
	case 2:
		// Only leaves are multiplied: INT overflow wraps in Flink and fails in DuckDB.
		return wrap(TInt, "(%s * %s)", g.leaf(sc, TInt), g.leaf(sc, TInt))
	case 3:
		if g.feat.IntDivision {
			// Flink's INT / INT is an INT, truncated toward zero.
			a, k := g.expr(sc, TInt, d), g.nonZero()
			return wrap2(TInt, "(%s / "+fmt.Sprintf("(%d)", k)+")", "CAST(trunc(%s / "+fmt.Sprintf("(%d)", k)+") AS INTEGER)", a)
		}
	case 4:
		if g.feat.IntDivision {
			k := g.nonZero()
			return wrap2(TInt, "MOD(%s, "+fmt.Sprint(k)+")", "(%s %% "+fmt.Sprintf("(%d)", k)+")", g.expr(sc, TInt, d))
		}
	case 5:
		return wrap(TInt, "ABS(%s)", g.expr(sc, TInt, d))
	case 6:
		return wrap(TInt, "(- %s)", g.expr(sc, TInt, d))
	case 7:
		if g.feat.StringFuncs {
			return wrap2(TInt, "CHAR_LENGTH(%s)", "CAST(length(%s) AS INTEGER)", g.expr(sc, TString, d))
		}
	case 8:
		if g.feat.CastDoubleToInt {
			// Flink truncates, DuckDB rounds.
			return wrap2(TInt, "CAST(CASE WHEN ABS(%[1]s) < 1000000000 THEN %[1]s END AS INT)", "CAST(trunc(CASE WHEN abs(%[1]s) < 1000000000 THEN %[1]s END) AS INTEGER)", g.smallExpr(sc, TDouble, d))
		}
	case 9:
		if g.feat.Position {
			return wrap2(TInt, "POSITION(%s IN %s)", "CAST(position(%s IN %s) AS INTEGER)", g.expr(sc, TString, d), g.expr(sc, TString, d))
		}
	case 10:
		if g.feat.TimeFuncs {
			// Flink counts whole units between the two, truncated toward zero: DuckDB's
			// date_sub (date_diff counts boundaries crossed).
			u := timeUnits[g.n(4)]
			return wrap2(TInt, "TIMESTAMPDIFF("+u.flink+", %s, %s)", "CAST(date_sub('"+u.duck+"', %s, %s) AS INTEGER)", g.expr(sc, TTimestamp, d), g.expr(sc, TTimestamp, d))
		}
	case 11:
		if g.feat.Decimal && g.feat.CastDoubleToInt {
			return wrap2(TInt, "CAST(CASE WHEN ABS(%[1]s) < 1000000000 THEN %[1]s END AS INT)", "CAST(trunc(CASE WHEN abs(%[1]s) < 1000000000 THEN %[1]s END) AS INTEGER)", g.smallExpr(sc, TDecimal, d))
		}
	case 12:
		if g.feat.ExtraFuncs && g.chance(0.3) {
			return wrap(TInt, "ASCII(%s)", g.expr(sc, TString, d))
		}
		if g.feat.MoreFuncs {
			if g.chance(0.5) {
				return wrap(TInt, "SIGN(%s)", g.expr(sc, TInt, d))
			}
			if g.chance(0.5) {
				return wrap(TInt, "INSTR(%s, %s)", g.expr(sc, TString, d), g.leaf(sc, TString))
			}
			return wrap2(TInt, "LOCATE(%s, %s)", "position(%s IN %s)", g.leaf(sc, TString), g.expr(sc, TString, d))
		}
	}
	return g.leaf(sc, TInt)
}

func (g *gen) bigintExpr(sc []Column, d int) Expr {
	switch g.n(9) {
	case 0:
		return wrap(TBigInt, "(%s + %s)", g.expr(sc, TBigInt, d), g.expr(sc, TBigInt, d))
	case 1:
		return wrap(TBigInt, "(%s - %s)", g.expr(sc, TBigInt, d), g.expr(sc, TInt, d))
	case 2:
		return wrap2(TBigInt, "CAST(%s AS BIGINT)", "CAST(%s AS BIGINT)", g.expr(sc, TInt, d))
	case 3:
		if g.feat.IntDivision {
			k := g.nonZero()
			return wrap2(TBigInt, "(%s / "+fmt.Sprintf("(%d)", k)+")", "CAST(trunc(%s / "+fmt.Sprintf("(%d)", k)+") AS BIGINT)", g.expr(sc, TBigInt, d))
		}
	case 4:
		if g.feat.IntDivision {
			k := g.nonZero()
			return wrap2(TBigInt, "MOD(%s, "+fmt.Sprint(k)+")", "(%s %% "+fmt.Sprintf("(%d)", k)+")", g.expr(sc, TBigInt, d))
		}
	case 5:
		return wrap(TBigInt, "ABS(%s)", g.expr(sc, TBigInt, d))
	case 6:
		if g.feat.TimeFuncs {
			return g.timeField(sc, d)
		}
	case 7:
		if g.feat.MixedNumeric {
			// INT op BIGINT is a BIGINT
			op := []string{"+", "-", "*"}[g.n(3)]
			if op == "*" {
				return wrap(TBigInt, "(%s * %s)", g.leaf(sc, TInt), g.leaf(sc, TBigInt))
			}
			return wrap(TBigInt, "(%s "+op+" %s)", g.expr(sc, TInt, d), g.expr(sc, TBigInt, d))
		}
	}
	return g.leaf(sc, TBigInt)
}

func (g *gen) doubleExpr(sc []Column, d int) Expr {
	switch g.n(11) {
	case 0:
		return wrap(TDouble, "(%s + %s)", g.expr(sc, TDouble, d), g.expr(sc, TDouble, d))
	case 1:
		return wrap(TDouble, "(%s - %s)", g.expr(sc, TDouble, d), g.expr(sc, TDouble, d))
	case 2:
		return wrap(TDouble, "(%s * %s)", g.expr(sc, TDouble, d), g.leaf(sc, TDouble))
	case 3:
		k := float64(g.nonZero()) / 2
		return wrap(TDouble, "(%s / CAST("+fmt.Sprint(k)+" AS DOUBLE))", g.expr(sc, TDouble, d))
	case 4:
		return wrap(TDouble, "CAST(%s AS DOUBLE)", g.expr(sc, TInt, d))
	case 5:
		return wrap(TDouble, "ABS(%s)", g.expr(sc, TDouble, d))
	case 6:
		if g.feat.RoundFloorCeil {
			if g.chance(0.5) {
				return wrap(TDouble, "FLOOR(%s)", g.expr(sc, TDouble, d))
			}
			return wrap(TDouble, "CEIL(%s)", g.expr(sc, TDouble, d))
		}
	case 7:
		if g.feat.RoundFloorCeil {
			// Only columns are rounded: the values are exact quarters, so half-way cases
			// are really half-way in both engines.
			return wrap(TDouble, "ROUND(%s, "+fmt.Sprint(g.n(2))+")", g.col(sc, TDouble))
		}
	case 8:
		if g.feat.Decimal {
			return wrap(TDouble, "CAST(%s AS DOUBLE)", g.expr(sc, TDecimal, d))
		}
	case 10:
		if g.feat.MixedNumeric {
			// INT, BIGINT or DECIMAL op DOUBLE is a DOUBLE
			o := []Type{TInt, TBigInt, TDecimal}[g.n(3)]
			if o == TDecimal && !g.feat.Decimal {
				o = TInt
			}
			op := []string{"+", "-", "*"}[g.n(3)]
			if g.chance(0.5) {
				return wrap(TDouble, "(%s "+op+" %s)", g.leaf(sc, o), g.expr(sc, TDouble, d))
			}
			return wrap(TDouble, "(%s "+op+" %s)", g.expr(sc, TDouble, d), g.leaf(sc, o))
		}
	case 9:
		if g.feat.MoreFuncs {
			switch g.n(4) {
			case 0:
				return wrap(TDouble, "POWER(%s, 2)", g.expr(sc, TDouble, d))
			case 1:
				return wrap(TDouble, "SQRT(ABS(%s))", g.expr(sc, TDouble, d))
			case 2:
				return wrap(TDouble, "LN(ABS(%s) + 1)", g.expr(sc, TDouble, d))
			default:
				if g.feat.ExtraFuncs {
					x := g.expr(sc, TDouble, d)
					switch g.n(7) {
					case 0:
						return wrap2(TDouble, "LOG(ABS(%s) + 1)", "ln(abs(%s) + 1)", x) // Flink's LOG(x) is ln
					case 1:
						return wrap(TDouble, "LOG10(ABS(%s) + 1)", x)
					case 2:
						return wrap(TDouble, "LOG(2, ABS(%s) + 1)", x)
					case 3:
						return wrap(TDouble, "SIN(%s)", x)
					case 4:
						return wrap(TDouble, "ATAN2(%s, 2)", x)
					case 5:
						return wrap(TDouble, "DEGREES(%s)", x)
					default:
						return wrap(TDouble, "EXP(%s / 20)", x)
					}
				}
				return wrap(TDouble, "SIGN(%s)", g.expr(sc, TDouble, d))
			}
		}
	}
	return g.leaf(sc, TDouble)
}

func (g *gen) stringExpr(sc []Column, d int) Expr {
	if !g.feat.StringFuncs {
		if g.chance(0.5) {
			return wrap2(TString, "(%s || %s)", duckConcat, g.expr(sc, TString, d), g.expr(sc, TString, d))
		}
		return g.leaf(sc, TString)
	}
	a := func() Expr { return g.expr(sc, TString, d) }
	switch g.n(18) {
	case 0:
		return wrap(TString, "UPPER(%s)", a())
	case 1:
		return wrap(TString, "LOWER(%s)", a())
	case 2:
		return wrap2(TString, "(%s || %s)", duckConcat, a(), a())
	case 3:
		// Flink's CONCAT is NULL when an argument is; DuckDB's skips NULLs, its || does not.
		return wrap2(TString, "CONCAT(%s, %s)", duckConcat, a(), a())
	case 4:
		if g.chance(0.5) {
			return wrap(TString, fmt.Sprintf("SUBSTR(%%s, %d, %d)", 1+g.n(4), g.n(4)), a())
		}
		return wrap(TString, fmt.Sprintf("SUBSTR(%%s, %d)", 1+g.n(4)), a())
	case 5:
		return wrap(TString, "TRIM(%s)", a())
	case 6:
		return wrap(TString, "LTRIM(%s)", a())
	case 7:
		return wrap(TString, "RTRIM(%s)", a())
	case 8:
		return wrap(TString, "REPLACE(%s, 'a', 'xy')", a())
	case 9:
		return wrap(TString, "REVERSE(%s)", a())
	case 10:
		if g.chance(0.5) {
			return wrap(TString, fmt.Sprintf("LPAD(%%s, %d, '*')", g.n(6)), a())
		}
		return wrap(TString, fmt.Sprintf("RPAD(%%s, %d, '-=')", g.n(6)), a())
	case 11:
		if g.chance(0.5) {
			return wrap(TString, fmt.Sprintf("LEFT(%%s, %d)", g.n(4)), a())
		}
		return wrap(TString, fmt.Sprintf("RIGHT(%%s, %d)", g.n(4)), a())
	case 12:
		return wrap(TString, fmt.Sprintf("REPEAT(%%s, %d)", g.n(3)), a())
	case 13:
		return wrap2(TString, "CAST(%s AS STRING)", "CAST(%s AS VARCHAR)", g.expr(sc, TInt, d))
	case 14:
		if g.feat.ConcatWS {
			return wrap(TString, "CONCAT_WS('-', %s, %s)", a(), a())
		}
	case 15:
		if g.feat.TimeFuncs {
			ts := g.expr(sc, TTimestamp, d)
			if l, ok := g.ltz(sc); ok && g.chance(0.3) {
				ts = l // DATE_FORMAT and CAST of a TIMESTAMP_LTZ show the session zone's wall clock
			}
			switch g.n(3) {
			case 0:
				return wrap2(TString, "DATE_FORMAT(%s, 'yyyy-MM-dd HH:mm')", "strftime(%s, '%%Y-%%m-%%d %%H:%%M')", ts)
			case 1:
				return wrap2(TString, "DATE_FORMAT(%s, 'HH:mm:ss.SSS')", "strftime(%s, '%%H:%%M:%%S.%%g')", ts)
			default:
				return wrap2(TString, "CAST(%s AS STRING)", "strftime(%s, '%%Y-%%m-%%d %%H:%%M:%%S.%%g')", ts)
			}
		}
	case 17:
		if g.feat.Dates && g.feat.TimeFuncs && g.chance(0.3) {
			return wrap2(TString, "CAST(%s AS STRING)", "CAST(%s AS VARCHAR)", g.expr(sc, TDate, d))
		}
		if g.feat.ExtraFuncs {
			switch g.n(4) {
			case 0:
				// Flink's SPLIT_INDEX is NULL past the last token, and an empty string has none
				k := g.n(3)
				return wrap2(TString, fmt.Sprintf("SPLIT_INDEX(%%s, ' ', %d)", k),
					fmt.Sprintf("CASE WHEN %%[1]s = '' THEN NULL WHEN len(string_split(%%[1]s, ' ')) > %d THEN string_split(%%[1]s, ' ')[%d] END", k, k+1), a())
			case 1:
				// Flink's REGEXP_EXTRACT is NULL when nothing matches, DuckDB's ''
				pat := []string{"a(b+)", "([aA])", "(x|_)(.)"}[g.n(3)]
				return wrap2(TString, "REGEXP_EXTRACT(%s, '"+pat+"', 1)", "CASE WHEN regexp_matches(%[1]s, '"+pat+"') THEN regexp_extract(%[1]s, '"+pat+"', 1) END", a())
			case 2:
				return wrap2(TString, "TO_BASE64(%s)", "to_base64(encode(%s))", a())
			default:
				return wrap(TString, "SHA256(%s)", a())
			}
		}
	case 16:
		if g.feat.MoreFuncs {
			switch g.n(6) {
			case 0:
				// Flink writes TRUE and FALSE, DuckDB true and false.
				return wrap2(TString, "CAST(%s AS STRING)", "upper(CAST(%s AS VARCHAR))", g.expr(sc, TBool, d))
			case 1:
				w := []struct{ f, d string }{{"BOTH", "trim"}, {"LEADING", "ltrim"}, {"TRAILING", "rtrim"}}[g.n(3)]
				return wrap2(TString, "TRIM("+w.f+" 'a' FROM %s)", w.d+"(%s, 'a')", a())
			case 2:
				p, l := 1+g.n(4), g.n(4)
				return wrap2(TString, fmt.Sprintf("SUBSTRING(%%s FROM %d FOR %d)", p, l), fmt.Sprintf("substring(%%s, %d, %d)", p, l), a())
			case 3:
				if g.chance(0.5) {
					// Java's Double.toString and DuckDB agree on quarters below 10^3.
					return wrap2(TString, "CAST(%s AS STRING)", "CAST(%s AS VARCHAR)", g.col(sc, TDouble))
				}
				return wrap(TString, "MD5(%s)", a())
			case 4:
				if g.feat.Decimal {
					return wrap2(TString, "CAST(%s AS STRING)", "CAST(%s AS VARCHAR)", g.expr(sc, TDecimal, d))
				}
			default:
				if g.feat.Regex {
					pat := []string{"a+", "[ab]", "^.", "x$", "A.?"}[g.n(5)]
					return wrap2(TString, "REGEXP_REPLACE(%s, '"+pat+"', 'z')", "regexp_replace(%s, '"+pat+"', 'z', 'g')", a())
				}
			}
		}
	}
	return g.leaf(sc, TString)
}

var cmpOps = []string{"=", "<>", "<", "<=", ">", ">="}

// duckConcat is || in DuckDB, typed: with a NULL operand DuckDB's || can be of the NULL
// type, which a subquery then turns into an INTEGER column.
const duckConcat = "CAST((%s || %s) AS VARCHAR)"

// smallExpr is an expression of type t whose BIGINT parts are small, to cast to INT;
// the cast is guarded as well, as a subquery's columns can hold anything.
func (g *gen) smallExpr(sc []Column, t Type, d int) Expr {
	g.smallBig++
	defer func() { g.smallBig-- }()
	return g.expr(small(sc), t, d)
}

// small is sc without its BIGINT columns, whose values overflow an INT cast (Flink
// wraps them, DuckDB fails).
func small(sc []Column) []Column {
	var out []Column
	for _, c := range sc {
		if c.Type != TBigInt {
			out = append(out, c)
		}
	}
	return out
}

// pred generates a BOOLEAN expression over the columns of sc.
func (g *gen) pred(sc []Column, depth int) Expr {
	if depth <= 0 {
		return g.atom(sc, 0)
	}
	d := depth - 1
	switch g.n(5) {
	case 0:
		return wrap(TBool, "(%s AND %s)", g.pred(sc, d), g.pred(sc, d))
	case 1:
		return wrap(TBool, "(%s OR %s)", g.pred(sc, d), g.pred(sc, d))
	case 2:
		return wrap(TBool, "(NOT %s)", g.pred(sc, d))
	}
	return g.atom(sc, d)
}

func (g *gen) anyType() Type {
	ts := []Type{TInt, TInt, TBigInt, TDouble, TString, TString, TBool}
	if g.feat.Decimal {
		ts = append(ts, TDecimal)
	}
	if g.feat.TimeFuncs {
		ts = append(ts, TTimestamp)
	}
	if g.feat.Dates && g.feat.TimeFuncs && g.chance(0.3) {
		ts = append(ts, TDate)
	}
	return ts[g.n(len(ts))]
}

// numeric is a numeric type.
func (g *gen) numeric() Type {
	ts := []Type{TInt, TBigInt, TDouble}
	if g.feat.Decimal {
		ts = append(ts, TDecimal)
	}
	return ts[g.n(len(ts))]
}

// ordered is a type to compare with < and BETWEEN.
func (g *gen) ordered() Type {
	ts := []Type{TInt, TBigInt, TDouble, TString}
	if g.feat.Decimal {
		ts = append(ts, TDecimal)
	}
	if g.feat.TimeFuncs {
		ts = append(ts, TTimestamp)
	}
	if g.feat.Dates && g.feat.TimeFuncs && g.chance(0.3) {
		ts = append(ts, TDate)
	}
	return ts[g.n(len(ts))]
}

func (g *gen) atom(sc []Column, d int) Expr {
	switch g.n(9) {
	case 0, 1:
		t := g.ordered()
		u := t
		if g.feat.MixedNumeric && t.numeric() && g.chance(0.3) {
			u = g.numeric()
		}
		return wrap(TBool, "(%s "+cmpOps[g.n(len(cmpOps))]+" %s)", g.expr(sc, t, d), g.expr(sc, u, d))
	case 2:
		t := g.anyType()
		if g.chance(0.5) {
			return wrap(TBool, "(%s IS NULL)", g.expr(sc, t, d))
		}
		return wrap(TBool, "(%s IS NOT NULL)", g.expr(sc, t, d))
	case 3:
		t := []Type{TInt, TString}[g.n(2)]
		var items []string
		for range 1 + g.n(4) {
			items = append(items, g.lit(t).F)
		}
		for i, s := range items {
			if strings.HasPrefix(s, "CAST(NULL") { // a NULL in an IN list only muddies the types
				items[i] = g.lit(t).F
				if strings.HasPrefix(items[i], "CAST(NULL") {
					items[i] = map[Type]string{TInt: "0", TString: "'a'"}[t]
				}
			}
		}
		not := ""
		if g.chance(0.3) {
			not = "NOT "
		}
		return wrap(TBool, "(%s "+not+"IN (%s))", g.expr(sc, t, d), both(strings.Join(items, ", "), t))
	case 4:
		t := g.ordered()
		not := ""
		if g.chance(0.3) {
			not = "NOT "
		}
		return wrap(TBool, "(%s "+not+"BETWEEN %s AND %s)", g.expr(sc, t, d), g.leaf(sc, t), g.leaf(sc, t))
	case 5:
		var b strings.Builder
		for range 1 + g.n(3) {
			b.WriteRune([]rune("abA%_ ")[g.n(6)])
		}
		not := ""
		if g.chance(0.3) {
			not = "NOT "
		}
		if g.feat.LikeEscape && g.chance(0.3) {
			// ! escapes the next character: a literal % or _ (or !)
			var e strings.Builder
			for range 1 + g.n(3) {
				if g.chance(0.4) {
					e.WriteRune('!')
					e.WriteRune([]rune("%_!")[g.n(3)])
				} else {
					e.WriteRune([]rune("abA%_ ")[g.n(6)])
				}
			}
			return wrap(TBool, "(%s "+not+"LIKE %s ESCAPE '!')", g.expr(sc, TString, d), strLit(e.String()))
		}
		return wrap(TBool, "(%s "+not+"LIKE %s)", g.expr(sc, TString, d), strLit(b.String()))
	case 6:
		if g.feat.IsTrue {
			e := g.expr(sc, TBool, d)
			switch g.n(5) {
			case 0:
				return wrap2(TBool, "(%s IS TRUE)", "COALESCE(%s, false)", e)
			case 1:
				return wrap2(TBool, "(%s IS FALSE)", "COALESCE(NOT %s, false)", e)
			case 2:
				return wrap2(TBool, "(%s IS NOT TRUE)", "(NOT COALESCE(%s, false))", e)
			case 3:
				return wrap2(TBool, "(%s IS NOT FALSE)", "(NOT COALESCE(NOT %s, false))", e)
			case 4:
				if !g.feat.IsDistinctFrom {
					return wrap2(TBool, "(%s IS NOT TRUE)", "(NOT COALESCE(%s, false))", e)
				}
				t := g.anyType()
				if t == TBool {
					t = TInt
				}
				not := ""
				if g.chance(0.5) {
					not = "NOT "
				}
				return wrap(TBool, "(%s IS "+not+"DISTINCT FROM %s)", g.expr(sc, t, d), g.expr(sc, t, d))
			}
		}
	case 7:
		if g.chance(0.2) {
			return g.lit(TBool)
		}
		return g.col(sc, TBool)
	case 8:
		if g.feat.Regex && g.chance(0.5) {
			pat := []string{"a+", "^[ab]", "^.$", "x$", "A.?b", "^$"}[g.n(6)]
			return wrap2(TBool, "REGEXP(%s, '"+pat+"')", "regexp_matches(%s, '"+pat+"')", g.expr(sc, TString, d))
		}
	}
	return wrap(TBool, "(%s "+cmpOps[g.n(len(cmpOps))]+" %s)", g.col(sc, TInt), g.lit(TInt))
}
