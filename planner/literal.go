package planner

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/types"
)

// bindLiteral types a constant as Flink does: 42 is INT NOT NULL (BIGINT when it does
// not fit), 3.14 is DECIMAL(3, 2) NOT NULL, 1e3 is DOUBLE NOT NULL, 'abc' is
// CHAR(3) NOT NULL, TIMESTAMP '2024-01-01 00:00:00' is TIMESTAMP(0) NOT NULL.
func bindLiteral(l *parser.Literal) (*Literal, error) {
	switch l.Kind {
	case parser.NullLit:
		return &Literal{T: types.TypeNull}, nil
	case parser.BoolLit:
		return &Literal{Value: types.BoolValue(strings.EqualFold(l.Text, "TRUE")), T: types.TypeBoolean.WithNotNull(true)}, nil
	case parser.StringLit:
		n := len([]rune(l.Text))
		return &Literal{Value: types.StringValue(l.Text), T: types.Type{Kind: types.Char, Length: n, NotNull: true}}, nil
	case parser.NumberLit:
		return numberLiteral(l)
	case parser.DateLit:
		days, ok := parseDateLiteral(strings.TrimSpace(l.Text))
		if !ok {
			return nil, errAt(l.At, ErrTypeMismatch, "invalid DATE literal '%s': expected yyyy-MM-dd", l.Text)
		}
		return &Literal{Value: types.DateValue(days), T: types.TypeDate.WithNotNull(true)}, nil
	case parser.TimeLit:
		micros, prec, ok := parseClock(strings.TrimSpace(l.Text))
		if !ok {
			return nil, errAt(l.At, ErrTypeMismatch, "invalid TIME literal '%s': expected HH:mm:ss[.fff]", l.Text)
		}
		return &Literal{Value: types.TimeValue(micros), T: types.Type{Kind: types.Time, Prec: prec, NotNull: true}}, nil
	case parser.TimestampLit:
		s := strings.TrimSpace(l.Text)
		date, clock, ok := strings.Cut(s, " ")
		if !ok {
			date, clock, ok = strings.Cut(s, "T")
		}
		days, dateOK := parseDateLiteral(date)
		var micros int64
		prec := 0
		clockOK := true
		if ok {
			micros, prec, clockOK = parseClock(clock)
		}
		if !dateOK || !clockOK {
			return nil, errAt(l.At, ErrTypeMismatch, "invalid TIMESTAMP literal '%s': expected yyyy-MM-dd HH:mm:ss[.fff]", l.Text)
		}
		v := types.TimestampValue(days*86_400_000_000 + micros)
		return &Literal{Value: v, T: types.Type{Kind: types.Timestamp, Prec: prec, NotNull: true}}, nil
	}
	return nil, errAt(l.At, ErrUnsupported, "unsupported: literal kind %d", l.Kind)
}

func numberLiteral(l *parser.Literal) (*Literal, error) {
	text := l.Text
	if strings.ContainsAny(text, "eE") {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, errAt(l.At, ErrTypeMismatch, "invalid number '%s'", text)
		}
		return &Literal{Value: types.DoubleValue(f), T: types.TypeDouble.WithNotNull(true)}, nil
	}
	if !strings.Contains(text, ".") {
		n, err := strconv.ParseInt(text, 10, 64)
		if err == nil {
			if n >= math.MinInt32 && n <= math.MaxInt32 {
				return &Literal{Value: types.IntValue(types.Int, n), T: types.TypeInt.WithNotNull(true)}, nil
			}
			return &Literal{Value: types.BigIntValue(n), T: types.TypeBigInt.WithNotNull(true)}, nil
		}
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return nil, errAt(l.At, ErrTypeMismatch, "invalid number '%s'", text)
	}
	intPart, frac, _ := strings.Cut(strings.TrimLeft(text, "+-"), ".")
	intPart = strings.TrimLeft(intPart, "0")
	scale := len(frac)
	prec := max(len(intPart)+scale, 1)
	if prec > 38 {
		return nil, errAt(l.At, ErrTypeMismatch, "number '%s' has more than 38 digits", text)
	}
	return &Literal{Value: types.DecimalValue(r), T: types.Type{Kind: types.Decimal, Prec: prec, Scale: scale, NotNull: true}}, nil
}

// parseDateLiteral reads the yyyy-MM-dd of a DATE or TIMESTAMP literal: a four-digit
// year, a two-digit month and day.
func parseDateLiteral(s string) (days int64, ok bool) {
	days, n, ok := types.ParseDate(s, 0)
	return days, ok && n == len(s)
}

// parseClock reads the H:m[:s[.fffffffff]] of a TIME or TIMESTAMP literal (fields of one
// or two digits) into microseconds since midnight and the precision its fraction shows.
func parseClock(s string) (micros int64, prec int, ok bool) {
	micros, n, ok := types.ParseTime(s, types.ShortClock)
	if !ok || n != len(s) {
		return 0, 0, false
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		prec = len(s) - i - 1
	}
	return micros, prec, true
}

var dayTimeUnits = []string{"DAY", "HOUR", "MINUTE", "SECOND"}
var unitMicros = map[string]int64{
	"DAY": 86_400_000_000, "HOUR": 3_600_000_000, "MINUTE": 60_000_000, "SECOND": 1_000_000,
}
var fieldLimit = map[string]int64{"HOUR": 24, "MINUTE": 60, "SECOND": 60}

var intervalSep = regexp.MustCompile(`[ :]`)

// bindInterval reads INTERVAL 'text' UNIT [TO UNIT]: day-time intervals become
// microseconds, year-month intervals months, as types.Value holds them.
func bindInterval(l *parser.IntervalLit) (*Literal, error) {
	text := strings.TrimSpace(l.Value)
	neg := false
	if strings.HasPrefix(text, "-") || strings.HasPrefix(text, "+") {
		neg = text[0] == '-'
		text = strings.TrimSpace(text[1:])
	}
	unit, to := strings.ToUpper(l.Unit), strings.ToUpper(l.ToUnit)
	bad := func() error {
		want := unit
		if to != "" {
			want += " TO " + to
		}
		return errAt(l.At, ErrTypeMismatch, "invalid INTERVAL '%s' %s", l.Value, want)
	}
	if unit == "YEAR" || unit == "MONTH" {
		var months int64
		switch {
		case unit == "YEAR" && to == "MONTH":
			y, m, ok := strings.Cut(text, "-")
			yn, err1 := strconv.ParseInt(y, 10, 64)
			mn, err2 := strconv.ParseInt(m, 10, 64)
			if !ok || err1 != nil || err2 != nil || mn < 0 || mn > 11 || yn < 0 {
				return nil, bad()
			}
			months = yn*12 + mn
		case to == "":
			n, err := strconv.ParseInt(text, 10, 64)
			if err != nil || n < 0 {
				return nil, bad()
			}
			months = n
			if unit == "YEAR" {
				months *= 12
			}
		default:
			return nil, bad()
		}
		if neg {
			months = -months
		}
		return &Literal{Value: types.IntervalMonthsValue(months), T: types.Type{Kind: types.IntervalYearMonth, NotNull: true}}, nil
	}
	first := indexOf(dayTimeUnits, unit)
	last := first
	if to != "" {
		last = indexOf(dayTimeUnits, to)
	}
	if first < 0 || last < first {
		return nil, bad()
	}
	fields := intervalSep.Split(text, -1)
	if len(fields) != last-first+1 {
		return nil, bad()
	}
	var micros int64
	for i, f := range fields {
		u := dayTimeUnits[first+i]
		whole, frac, hasFrac := strings.Cut(f, ".")
		if hasFrac && u != "SECOND" {
			return nil, bad()
		}
		n, err := strconv.ParseInt(whole, 10, 64)
		if err != nil || n < 0 || (i > 0 && n >= fieldLimit[u]) {
			return nil, bad()
		}
		if n > math.MaxInt64/unitMicros[u] {
			return nil, bad()
		}
		micros += n * unitMicros[u]
		if hasFrac {
			if len(frac) == 0 || len(frac) > 6 || strings.Trim(frac, "0123456789") != "" {
				return nil, bad()
			}
			fm, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
			micros += fm
		}
	}
	if neg {
		micros = -micros
	}
	return &Literal{Value: types.IntervalValue(micros), T: types.Type{Kind: types.IntervalDayTime, NotNull: true}}, nil
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// formatInterval prints a day-time interval as SQL in the largest unit that divides it:
// INTERVAL '5' SECOND, INTERVAL '1' DAY, INTERVAL '1.5' SECOND.
func formatInterval(micros int64) string {
	sign := ""
	if micros < 0 {
		sign, micros = "-", -micros
	}
	for _, u := range dayTimeUnits {
		if m := unitMicros[u]; micros != 0 && micros%m == 0 {
			return fmt.Sprintf("INTERVAL '%s%d' %s", sign, micros/m, u)
		}
	}
	s := strconv.FormatFloat(float64(micros)/1e6, 'f', -1, 64)
	return fmt.Sprintf("INTERVAL '%s%s' SECOND", sign, s)
}

// formatDuration prints a window size the way Flink's EXPLAIN does: 1 d, 5 min, 30 s, 100 ms.
func formatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0 ms"
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%d d", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%d h", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%d s", d/time.Second)
	case d%time.Millisecond == 0:
		return fmt.Sprintf("%d ms", d/time.Millisecond)
	}
	return fmt.Sprintf("%d us", d/time.Microsecond)
}
