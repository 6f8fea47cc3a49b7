package funcs

import (
	"math"
	"strings"
	"time"

	"github.com/pipesql/pipesql/types"
)

// timeUnit is a unit of FLOOR/CEIL(x TO unit), EXTRACT, TIMESTAMPADD and TIMESTAMPDIFF.
type timeUnit uint8

const (
	unitNanosecond timeUnit = iota
	unitMicrosecond
	unitMillisecond
	unitSecond
	unitMinute
	unitHour
	unitDay
	unitWeek
	unitMonth
	unitQuarter
	unitYear
	unitDecade
	unitCentury
	unitMillennium
	// EXTRACT only
	unitDow
	unitIsoDow
	unitDoy
	unitIsoYear
	unitEpoch
)

var unitNames = map[string]timeUnit{
	"NANOSECOND": unitNanosecond, "MICROSECOND": unitMicrosecond, "MILLISECOND": unitMillisecond,
	"SECOND": unitSecond, "MINUTE": unitMinute, "HOUR": unitHour, "DAY": unitDay, "WEEK": unitWeek,
	"MONTH": unitMonth, "QUARTER": unitQuarter, "YEAR": unitYear, "DECADE": unitDecade,
	"CENTURY": unitCentury, "MILLENNIUM": unitMillennium, "DOW": unitDow, "ISODOW": unitIsoDow,
	"DOY": unitDoy, "ISOYEAR": unitIsoYear, "EPOCH": unitEpoch,
	"DAYOFWEEK": unitDow, "DAYOFYEAR": unitDoy, "FRAC_SECOND": unitMicrosecond,
}

// unitMicros is the fixed length of units up to WEEK.
var unitMicros = map[timeUnit]int64{
	unitMicrosecond: 1, unitMillisecond: microsPerMilli, unitSecond: microsPerSecond,
	unitMinute: microsPerMinute, unitHour: microsPerHour, unitDay: microsPerDay, unitWeek: 7 * microsPerDay,
}

// unitMonths is the length in months of units from MONTH up.
var unitMonths = map[timeUnit]int64{unitMonth: 1, unitQuarter: 3, unitYear: 12, unitDecade: 120,
	unitCentury: 1200, unitMillennium: 12000}

func parseUnit(s string) (timeUnit, error) {
	name := strings.ToUpper(strings.TrimSpace(s))
	name = strings.TrimPrefix(name, "SQL_TSI_")
	if u, ok := unitNames[name]; ok {
		return u, nil
	}
	if u, ok := unitNames[strings.TrimSuffix(name, "S")]; ok {
		return u, nil
	}
	if name == "MILLENNIA" {
		return unitMillennium, nil
	}
	if name == "CENTURIES" {
		return unitCentury, nil
	}
	return 0, invalidArg("unknown time unit %q", s)
}

// unitArg resolves the unit argument i once when it is constant (the usual case: the
// parser passes FLOOR(ts TO DAY)'s DAY as a literal), else per row.
func unitArg(site Site, i int, allowed func(timeUnit) bool, what string) (func(types.Value) (timeUnit, error), error) {
	check := func(s string) (timeUnit, error) {
		u, err := parseUnit(s)
		if err != nil {
			return 0, err
		}
		if !allowed(u) {
			return 0, invalidArg("%s is not a unit of %s", strings.ToUpper(s), what)
		}
		return u, nil
	}
	if c, ok := site.constant(i); ok && !c.IsNull() {
		u, err := check(c.Str())
		if err != nil {
			return nil, err
		}
		return func(types.Value) (timeUnit, error) { return u, nil }, nil
	}
	return func(v types.Value) (timeUnit, error) { return check(v.Str()) }, nil
}

// floorWall rounds a wall clock down (or up) to a unit boundary. Weeks start on Sunday,
// as in Calcite; centuries and millennia start in years ending in 01.
func floorWall(w int64, u timeUnit, ceil bool) int64 {
	if u <= unitDay {
		l := unitMicros[u]
		if u == unitNanosecond {
			l = 1
		}
		f := floorDiv(w, l) * l
		if ceil && f != w {
			f += l
		}
		return f
	}
	days := floorDiv(w, microsPerDay)
	var fdays int64
	var step int64 // months to the next boundary, or -7 for weeks
	if u == unitWeek {
		fdays = days - floorMod(days+4, 7) // 1970-01-01 was a Thursday
		step = -7
	} else {
		y, m, _ := types.CivilFromDays(days)
		switch u {
		case unitMonth:
		case unitQuarter:
			m = (m-1)/3*3 + 1
		case unitYear:
			m = 1
		case unitDecade:
			y, m = y-int(floorMod(int64(y), 10)), 1
		case unitCentury:
			y, m = int(floorDiv(int64(y-1), 100))*100+1, 1
		case unitMillennium:
			y, m = int(floorDiv(int64(y-1), 1000))*1000+1, 1
		}
		fdays = types.DaysFromCivil(y, m, 1)
		step = unitMonths[u]
	}
	f := fdays * microsPerDay
	if ceil && f != w {
		if step < 0 {
			return f + 7*microsPerDay
		}
		return addMonths(fdays, step) * microsPerDay
	}
	return f
}

// floorTime is FLOOR/CEIL(x TO unit) for DATE, TIME, TIMESTAMP and TIMESTAMP_LTZ, the
// last floored in loc: in Asia/Shanghai a day starts at 16:00 UTC.
func floorTime(v types.Value, u timeUnit, ceil bool, loc *time.Location) types.Value {
	switch v.Kind() {
	case types.Date:
		if u <= unitDay {
			return v
		}
		return types.DateValue(floorWall(v.Int()*microsPerDay, u, ceil) / microsPerDay)
	case types.Time:
		return types.TimeValue(floorMod(floorWall(v.Int(), min(u, unitDay), ceil), microsPerDay))
	case types.TimestampLTZ:
		return types.TimestampLTZValue(wallToInstant(floorWall(instantToWall(v.Int(), loc), u, ceil), loc))
	}
	return types.TimestampValue(floorWall(v.Int(), u, ceil))
}

// wallOf is the wall clock of a date/time value (LTZ read in loc); TIME is on 1970-01-01.
func wallOf(v types.Value, loc *time.Location) int64 {
	switch v.Kind() {
	case types.Date:
		return v.Int() * microsPerDay
	case types.TimestampLTZ:
		return instantToWall(v.Int(), loc)
	}
	return v.Int()
}

// extract is EXTRACT(unit FROM v) for date/time values and intervals.
func extract(v types.Value, u timeUnit, loc *time.Location) int64 {
	switch v.Kind() {
	case types.IntervalYearMonth:
		switch u {
		case unitYear:
			return v.Int() / 12
		case unitMonth:
			return v.Int() % 12
		case unitQuarter:
			return v.Int() % 12 / 3
		}
		return 0
	case types.IntervalDayTime:
		n := v.Int()
		switch u {
		case unitDay:
			return n / microsPerDay
		case unitHour:
			return n / microsPerHour % 24
		case unitMinute:
			return n / microsPerMinute % 60
		case unitSecond:
			return n / microsPerSecond % 60
		case unitMillisecond:
			return n / microsPerMilli % 60_000
		case unitMicrosecond:
			return n % microsPerMinute
		case unitEpoch:
			return n / microsPerSecond
		}
		return 0
	}
	if u == unitEpoch {
		if v.Kind() == types.TimestampLTZ {
			return floorDiv(v.Int(), microsPerSecond)
		}
		return floorDiv(wallOf(v, loc), microsPerSecond)
	}
	w := wallOf(v, loc)
	days := floorDiv(w, microsPerDay)
	rest := w - days*microsPerDay
	y, m, d := types.CivilFromDays(days)
	switch u {
	case unitYear:
		return int64(y)
	case unitQuarter:
		return int64((m-1)/3 + 1)
	case unitMonth:
		return int64(m)
	case unitWeek:
		_, wk := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).ISOWeek()
		return int64(wk)
	case unitIsoYear:
		iy, _ := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).ISOWeek()
		return int64(iy)
	case unitDay:
		return int64(d)
	case unitDow:
		return floorMod(days+4, 7) + 1 // Sunday = 1
	case unitIsoDow:
		return floorMod(days+3, 7) + 1 // Monday = 1
	case unitDoy:
		return days - types.DaysFromCivil(y, 1, 1) + 1
	case unitHour:
		return rest / microsPerHour
	case unitMinute:
		return rest / microsPerMinute % 60
	case unitSecond:
		return rest / microsPerSecond % 60
	case unitMillisecond:
		return rest / microsPerMilli % 60_000 // seconds included, as in Calcite
	case unitMicrosecond:
		return rest % microsPerMinute
	case unitNanosecond:
		return rest % microsPerMinute * 1000
	case unitDecade:
		return floorDiv(int64(y), 10)
	case unitCentury:
		if y > 0 {
			return int64((y + 99) / 100)
		}
		return int64(y/100 - 1)
	case unitMillennium:
		if y > 0 {
			return int64((y + 999) / 1000)
		}
		return int64(y/1000 - 1)
	}
	return 0
}

// timestampAdd is TIMESTAMPADD(unit, n, v).
func timestampAdd(v types.Value, u timeUnit, n int64, loc *time.Location) types.Value {
	if months, ok := unitMonths[u]; ok {
		return shiftTime(&Context{Location: loc}, v, types.IntervalYearMonth, n*months)
	}
	l := unitMicros[u]
	if u == unitNanosecond {
		n, l = n/1000, 1
	}
	return shiftTime(&Context{Location: loc}, v, types.IntervalDayTime, n*l)
}

// timestampDiff is TIMESTAMPDIFF(unit, a, b): whole units from a to b, truncated toward
// zero. Months count calendar months (Jan 31 to Feb 28 is 0); fixed units of
// TIMESTAMP_LTZ values count elapsed time.
func timestampDiff(u timeUnit, a, b types.Value, loc *time.Location) int64 {
	var r int64
	if months, ok := unitMonths[u]; ok {
		r = subtractMonths(wallOf(b, loc), wallOf(a, loc)) / months
	} else {
		x, y := wallOf(a, loc), wallOf(b, loc)
		if a.Kind() == types.TimestampLTZ || b.Kind() == types.TimestampLTZ {
			x, y = instantOf(a, types.TimestampLTZ, loc), instantOf(b, types.TimestampLTZ, loc)
		}
		l := unitMicros[u]
		if u == unitNanosecond {
			return wrapInt(types.Int, (y-x)*1000)
		}
		r = (y - x) / l
	}
	return wrapInt(types.Int, r)
}

func fixedOrCalendar(u timeUnit) bool { return u <= unitMillennium }
func extractable(u timeUnit) bool     { return true }

var layoutCache boundedCache[*Layout]

// layoutArg compiles the date pattern argument i once when it is constant; a bad constant
// pattern is a bind-time error. def is the pattern when the argument is absent.
func layoutArg(site Site, i int, def string) (func([]types.Value) (*Layout, error), error) {
	if i >= len(site.Args) {
		l, err := CompileLayout(def)
		if err != nil {
			return nil, err
		}
		return func([]types.Value) (*Layout, error) { return l, nil }, nil
	}
	if c, ok := site.constant(i); ok && !c.IsNull() {
		l, err := CompileLayout(c.Str())
		if err != nil {
			return nil, err
		}
		return func([]types.Value) (*Layout, error) { return l, nil }, nil
	}
	return func(a []types.Value) (*Layout, error) { return layoutCache.get(a[i].Str(), CompileLayout) }, nil
}

const defaultTimestampPattern = "yyyy-MM-dd HH:mm:ss"

var (
	simpleDateMode = parseMode{fracMillis: true, prefix: true} // SimpleDateFormat.parse
	javaTimeMode   = parseMode{}                               // DateTimeFormatter.parse
)

// parseWithFallback is TO_TIMESTAMP's parse: the pattern, else Flink's lenient fallback
// for forms like '1999-9-10 05:20:10' and '1999-9-10'.
func parseWithFallback(l *Layout, s string) (int64, bool) {
	if p, err := l.parse(s, javaTimeMode); err == nil {
		return p.wall, true
	}
	return parseTimestampText(s)
}

func nowKernel(ctx *Context, produce func(now time.Time, loc *time.Location) types.Value) (Kernel, error) {
	if ctx == nil || ctx.Now == nil {
		return Kernel{}, invalidArg("no clock: the evaluation context has no Now function")
	}
	loc := ctx.loc()
	return Kernel{Call: func([]types.Value) (types.Value, error) { return produce(ctx.Now(), loc), nil }}, nil
}

func init() {
	ltz3 := types.TimestampLTZType(3).WithNotNull(true)
	nowFunc := func(name, syntax, doc string, t types.Type, produce func(now time.Time, loc *time.Location) types.Value) *Func {
		return def(name, 0, 0, sig{ret: retType(t), ownNull: true, keepAttr: true}, syntax, doc,
			Func{volatile: true, prepare: func(ctx *Context, _ Site) (Kernel, error) { return nowKernel(ctx, produce) }})
	}
	instantNow := func(now time.Time, _ *time.Location) types.Value {
		return types.TimestampLTZValue(truncMicros(now.UnixMicro(), 3))
	}
	nowFunc("CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP", "the current instant, TIMESTAMP_LTZ(3), read per row", ltz3, instantNow)
	nowFunc("NOW", "NOW()", "the current instant, TIMESTAMP_LTZ(3): CURRENT_TIMESTAMP", ltz3, instantNow)
	nowFunc("CURRENT_ROW_TIMESTAMP", "CURRENT_ROW_TIMESTAMP()", "the current instant, TIMESTAMP_LTZ(3), read per row", ltz3, instantNow)
	proc := ltz3
	proc.TimeAttr = types.ProcTime
	nowFunc("PROCTIME", "PROCTIME()", "the processing-time attribute: the current instant, TIMESTAMP_LTZ(3) *PROCTIME*", proc, instantNow)
	nowFunc("LOCALTIMESTAMP", "LOCALTIMESTAMP", "the current wall clock in the local time zone, TIMESTAMP(3)",
		types.TimestampType(3).WithNotNull(true), func(now time.Time, loc *time.Location) types.Value {
			return types.TimestampValue(truncMicros(instantToWall(now.UnixMicro(), loc), 3))
		})
	nowFunc("CURRENT_DATE", "CURRENT_DATE", "today in the local time zone", types.TypeDate.WithNotNull(true),
		func(now time.Time, loc *time.Location) types.Value {
			return types.DateValue(floorDiv(instantToWall(now.UnixMicro(), loc), microsPerDay))
		})
	timeNow := func(now time.Time, loc *time.Location) types.Value {
		return types.TimeValue(truncMicros(floorMod(instantToWall(now.UnixMicro(), loc), microsPerDay), 0))
	}
	time0 := types.Type{Kind: types.Time, NotNull: true}
	nowFunc("CURRENT_TIME", "CURRENT_TIME", "the current time of day in the local time zone, TIME(0)", time0, timeNow)
	nowFunc("LOCALTIME", "LOCALTIME", "the current time of day in the local time zone, TIME(0)", time0, timeNow)

	for _, fc := range []struct {
		name string
		ceil bool
	}{{"FLOOR", false}, {"CEIL", true}} {
		ceil := fc.ceil
		f := def(fc.name, 1, 2, sig{ret: floorCeilRet}, fc.name+"(numeric) | "+fc.name+"(timepoint TO unit)",
			"numeric rounded "+map[bool]string{false: "down", true: "up"}[ceil]+
				"; a date/time rounded "+map[bool]string{false: "down", true: "up"}[ceil]+" to a unit (in the local time zone for TIMESTAMP_LTZ)",
			Func{prepare: func(ctx *Context, site Site) (Kernel, error) {
				if len(site.Args) == 1 {
					return Kernel{Call1: func(a types.Value) (types.Value, error) { return floorCeilNumber(a, ceil), nil }}, nil
				}
				unit, err := unitArg(site, 1, fixedOrCalendar, fc.name)
				if err != nil {
					return Kernel{}, err
				}
				loc := ctx.loc()
				return Kernel{Call2: func(t, u types.Value) (types.Value, error) {
					unit, err := unit(u)
					if err != nil {
						return types.NullValue, err
					}
					return floorTime(t, unit, ceil, loc), nil
				}}, nil
			}})
		if ceil {
			alias("CEILING", f)
		}
	}

	bigintRet := retType(types.TypeBigInt)
	def("EXTRACT", 2, 2, sig{params: []param{pUnit, kinds("a date/time or an interval", types.Date, types.Time,
		types.Timestamp, types.TimestampLTZ, types.IntervalDayTime, types.IntervalYearMonth)}, ret: bigintRet},
		"EXTRACT(unit FROM temporal)", "a field of a date/time or interval: YEAR, MONTH, DAY, HOUR, DOW, EPOCH...",
		Func{prepare: func(ctx *Context, site Site) (Kernel, error) {
			unit, err := unitArg(site, 0, extractable, "EXTRACT")
			if err != nil {
				return Kernel{}, err
			}
			loc := ctx.loc()
			return Kernel{Call2: func(u, t types.Value) (types.Value, error) {
				unit, err := unit(u)
				if err != nil {
					return types.NullValue, err
				}
				return types.BigIntValue(extract(t, unit, loc)), nil
			}}, nil
		}})
	for _, p := range []struct {
		name string
		unit timeUnit
		arg  param
	}{
		{"YEAR", unitYear, pDateTime}, {"QUARTER", unitQuarter, pDateTime}, {"MONTH", unitMonth, pDateTime},
		{"WEEK", unitWeek, pDateTime}, {"DAYOFYEAR", unitDoy, pDateTime}, {"DAYOFMONTH", unitDay, pDateTime},
		{"DAYOFWEEK", unitDow, pDateTime}, {"HOUR", unitHour, pClock}, {"MINUTE", unitMinute, pClock},
		{"SECOND", unitSecond, pClock},
	} {
		unit := p.unit
		def(p.name, 1, 1, sig{params: []param{p.arg}, ret: bigintRet}, p.name+"(temporal)",
			"EXTRACT("+p.name+" FROM temporal)", Func{prepare: func(ctx *Context, _ Site) (Kernel, error) {
				loc := ctx.loc()
				return Kernel{Call1: func(t types.Value) (types.Value, error) {
					return types.BigIntValue(extract(t, unit, loc)), nil
				}}, nil
			}})
	}
	def("TIMESTAMPADD", 3, 3, sig{params: []param{pUnit, pInteger, pTimeAny}, ret: retArg(2)},
		"TIMESTAMPADD(unit, interval, timepoint)", "timepoint moved by interval units",
		Func{prepare: func(ctx *Context, site Site) (Kernel, error) {
			unit, err := unitArg(site, 0, fixedOrCalendar, "TIMESTAMPADD")
			if err != nil {
				return Kernel{}, err
			}
			loc := ctx.loc()
			return Kernel{Call: func(a []types.Value) (types.Value, error) {
				u, err := unit(a[0])
				if err != nil {
					return types.NullValue, err
				}
				return timestampAdd(a[2], u, a[1].Int(), loc), nil
			}}, nil
		}})
	def("TIMESTAMPDIFF", 3, 3, sig{params: []param{pUnit, pDateTime, pDateTime}, ret: intRet},
		"TIMESTAMPDIFF(unit, timepoint1, timepoint2)", "the signed number of whole units from timepoint1 to timepoint2",
		Func{prepare: func(ctx *Context, site Site) (Kernel, error) {
			unit, err := unitArg(site, 0, fixedOrCalendar, "TIMESTAMPDIFF")
			if err != nil {
				return Kernel{}, err
			}
			loc := ctx.loc()
			return Kernel{Call: func(a []types.Value) (types.Value, error) {
				u, err := unit(a[0])
				if err != nil {
					return types.NullValue, err
				}
				return types.IntValue(types.Int, timestampDiff(u, a[1], a[2], loc)), nil
			}}, nil
		}})

	def("DATE_FORMAT", 2, 2, sig{params: []param{kinds("a TIMESTAMP or STRING", types.Timestamp, types.TimestampLTZ,
		types.Date, types.Char, types.Varchar), pString}, ret: strRet, mayBeNull: true},
		"DATE_FORMAT(timestamp, format)",
		"timestamp (TIMESTAMP_LTZ in the local time zone, or a 'yyyy-MM-dd HH:mm:ss' string) formatted with a Java date pattern",
		Func{prepare: func(ctx *Context, site Site) (Kernel, error) {
			layout, err := layoutArg(site, 1, "")
			if err != nil {
				return Kernel{}, err
			}
			loc := ctx.loc()
			input, err := CompileLayout(defaultTimestampPattern)
			if err != nil {
				return Kernel{}, err
			}
			format := func(l *Layout, t types.Value) types.Value {
				switch t.Kind() {
				case types.TimestampLTZ:
					return str(l.FormatInstant(t.Int(), loc))
				case types.Date:
					return str(l.FormatWall(t.Int() * microsPerDay))
				case types.Char, types.Varchar:
					p, err := input.parse(t.Str(), simpleDateMode)
					if err != nil {
						return types.NullValue
					}
					return str(l.FormatWall(p.wall))
				}
				return str(l.FormatWall(t.Int()))
			}
			if c, ok := site.constant(1); ok && !c.IsNull() {
				l, err := layout(nil)
				if err != nil {
					return Kernel{}, err
				}
				return Kernel{Call2: func(t, _ types.Value) (types.Value, error) { return format(l, t), nil }}, nil
			}
			return Kernel{Call: func(a []types.Value) (types.Value, error) {
				l, err := layout(a)
				if err != nil {
					return types.NullValue, err
				}
				return format(l, a[0]), nil
			}}, nil
		}})
	def("TO_TIMESTAMP", 1, 2, sig{params: []param{pString}, ret: retType(types.TimestampType(3)), mayBeNull: true},
		"TO_TIMESTAMP(string[, format])",
		"string parsed as a TIMESTAMP(3) with a Java date pattern (default 'yyyy-MM-dd HH:mm:ss'); NULL if it does not parse",
		Func{prepare: func(_ *Context, site Site) (Kernel, error) {
			layout, err := layoutArg(site, 1, defaultTimestampPattern)
			if err != nil {
				return Kernel{}, err
			}
			return Kernel{Call: func(a []types.Value) (types.Value, error) {
				if len(a) == 1 {
					w, ok := parseTimestampText(a[0].Str())
					if !ok {
						return types.NullValue, nil
					}
					return types.TimestampValue(truncMicros(w, 3)), nil
				}
				l, err := layout(a)
				if err != nil {
					return types.NullValue, err
				}
				w, ok := parseWithFallback(l, a[0].Str())
				if !ok {
					return types.NullValue, nil
				}
				return types.TimestampValue(truncMicros(w, 3)), nil
			}}, nil
		}})
	def("TO_TIMESTAMP_LTZ", 1, 3, sig{params: []param{
		kinds("a number or a STRING", types.TinyInt, types.SmallInt, types.Int, types.BigInt, types.Float,
			types.Double, types.Decimal, types.Char, types.Varchar),
		kinds("a precision (0 or 3) or a format STRING", types.TinyInt, types.SmallInt, types.Int, types.BigInt,
			types.Char, types.Varchar),
		pString,
	}, ret: retType(types.TimestampLTZType(3)), mayBeNull: true},
		"TO_TIMESTAMP_LTZ(numeric[, precision]) | TO_TIMESTAMP_LTZ(string[, format[, timezone]])",
		"epoch seconds (precision 0) or milliseconds (3, the default), or a string read in the local or given time zone, as a TIMESTAMP_LTZ(3)",
		Func{prepare: toTimestampLTZPrepare})
	def("TO_DATE", 1, 2, sig{params: []param{pString}, ret: retType(types.TypeDate), mayBeNull: true},
		"TO_DATE(string[, format])", "string parsed as a DATE with a Java date pattern (default 'yyyy-MM-dd'); NULL if it does not parse",
		Func{prepare: func(_ *Context, site Site) (Kernel, error) {
			layout, err := layoutArg(site, 1, "yyyy-MM-dd")
			if err != nil {
				return Kernel{}, err
			}
			return Kernel{Call: func(a []types.Value) (types.Value, error) {
				if len(a) == 1 {
					d, ok := parseDateText(a[0].Str())
					if !ok {
						return types.NullValue, nil
					}
					return types.DateValue(d), nil
				}
				l, err := layout(a)
				if err != nil {
					return types.NullValue, err
				}
				p, err := l.parse(a[0].Str(), simpleDateMode)
				if err != nil {
					return types.NullValue, nil
				}
				return types.DateValue(floorDiv(p.wall, microsPerDay)), nil
			}}, nil
		}})
	def("FROM_UNIXTIME", 1, 2, sig{params: []param{pNumeric, pString}, ret: strRet}, "FROM_UNIXTIME(seconds[, format])",
		"epoch seconds formatted in the local time zone (default 'yyyy-MM-dd HH:mm:ss')",
		Func{prepare: func(ctx *Context, site Site) (Kernel, error) {
			layout, err := layoutArg(site, 1, defaultTimestampPattern)
			if err != nil {
				return Kernel{}, err
			}
			loc := ctx.loc()
			return Kernel{Call: func(a []types.Value) (types.Value, error) {
				l, err := layout(a)
				if err != nil {
					return types.NullValue, err
				}
				secs := a[0].Int()
				if k := a[0].Kind(); !isIntKind(k) {
					secs = int64(math.Floor(a[0].Float()))
				}
				return str(l.FormatInstant(secs*microsPerSecond, loc)), nil
			}}, nil
		}})
	def("UNIX_TIMESTAMP", 0, 2, sig{params: []param{pString}, ret: retType(types.TypeBigInt), ownNull: true},
		"UNIX_TIMESTAMP([string[, format]])",
		"now, or string read in the local time zone (default format 'yyyy-MM-dd HH:mm:ss'), as epoch seconds; -9223372036854775808 if it does not parse",
		Func{volatile: true, prepare: func(ctx *Context, site Site) (Kernel, error) {
			if len(site.Args) == 0 {
				return nowKernel(ctx, func(now time.Time, _ *time.Location) types.Value {
					return types.BigIntValue(floorDiv(now.UnixMicro(), microsPerSecond))
				})
			}
			layout, err := layoutArg(site, 1, defaultTimestampPattern)
			if err != nil {
				return Kernel{}, err
			}
			loc := ctx.loc()
			return Kernel{Call: func(a []types.Value) (types.Value, error) {
				l, err := layout(a)
				if err != nil {
					return types.NullValue, err
				}
				p, err := l.parse(a[0].Str(), simpleDateMode)
				if err != nil {
					return types.BigIntValue(math.MinInt64), nil
				}
				return types.BigIntValue(floorDiv(p.instant(loc), microsPerSecond)), nil
			}}, nil
		}})
	def("CONVERT_TZ", 3, 3, sig{params: []param{pString}, ret: strRet, mayBeNull: true},
		"CONVERT_TZ(string, from_zone, to_zone)",
		"a 'yyyy-MM-dd HH:mm:ss' date-time read in from_zone and written in to_zone",
		Func{Impl: func(_ *Context, a []types.Value) (types.Value, error) {
			from, err := zoneCache.get(a[1].Str(), loadZone)
			if err != nil {
				return types.NullValue, err
			}
			to, err := zoneCache.get(a[2].Str(), loadZone)
			if err != nil {
				return types.NullValue, err
			}
			l, _ := layoutCache.get(defaultTimestampPattern, CompileLayout)
			p, err := l.parse(a[0].Str(), simpleDateMode)
			if err != nil {
				return types.NullValue, nil
			}
			return str(l.FormatInstant(p.instant(from), to)), nil
		}})
}

var zoneCache boundedCache[*time.Location]

// loadZone resolves a zone name: an IANA id (Asia/Shanghai), UTC/GMT, or an offset
// (GMT+08:00, +08:00).
func loadZone(name string) (*time.Location, error) {
	if off, n, ok := parseOffset(name); ok && n == len(name) {
		if off == 0 {
			return time.UTC, nil
		}
		return time.FixedZone(name, off), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, invalidArg("unknown time zone %q", name)
	}
	return loc, nil
}

// LoadZone resolves a table.local-time-zone value the way the functions here read zone
// names: an IANA id (Asia/Shanghai), UTC, or an offset (GMT+08:00).
func LoadZone(name string) (*time.Location, error) { return zoneCache.get(name, loadZone) }

func toTimestampLTZPrepare(ctx *Context, site Site) (Kernel, error) {
	loc := ctx.loc()
	if isStrKind(site.arg(0).Kind) {
		layout, err := layoutArg(site, 1, defaultTimestampPattern)
		if err != nil {
			return Kernel{}, err
		}
		return Kernel{Call: func(a []types.Value) (types.Value, error) {
			zone := loc
			if len(a) > 2 {
				z, err := zoneCache.get(a[2].Str(), loadZone)
				if err != nil {
					return types.NullValue, err
				}
				zone = z
			}
			l, err := layout(a)
			if err != nil {
				return types.NullValue, err
			}
			p, err := l.parse(a[0].Str(), javaTimeMode)
			if err != nil {
				w, ok := parseTimestampText(a[0].Str())
				if !ok {
					return types.NullValue, nil
				}
				p = parsedTime{wall: w}
			}
			return types.TimestampLTZValue(truncMicros(p.instant(zone), 3)), nil
		}}, nil
	}
	if c, ok := site.constant(1); ok && !c.IsNull() && c.Int() != 0 && c.Int() != 3 {
		return Kernel{}, invalidArg("TO_TIMESTAMP_LTZ precision must be 0 (seconds) or 3 (milliseconds), got %d", c.Int())
	}
	const minMillis, maxMillis = -62167219200000, 253402300799999 // years 0000 to 9999
	// Call1 and Call2 let a per-row call skip building an argument slice.
	conv := func(x types.Value, prec int64) (types.Value, error) {
		var millis float64
		switch prec {
		case 0:
			millis = x.Float() * 1000
		case 3:
			millis = x.Float()
		default:
			return types.NullValue, invalidArg("TO_TIMESTAMP_LTZ precision must be 0 (seconds) or 3 (milliseconds), got %d", prec)
		}
		if isIntKind(x.Kind()) {
			n := x.Int()
			if prec == 0 {
				if n < minMillis/1000 || n > maxMillis/1000 {
					return types.NullValue, nil
				}
				return types.TimestampLTZValue(n * microsPerSecond), nil
			}
			if n < minMillis || n > maxMillis {
				return types.NullValue, nil
			}
			return types.TimestampLTZValue(n * microsPerMilli), nil
		}
		if math.IsNaN(millis) || millis < minMillis || millis > maxMillis {
			return types.NullValue, nil
		}
		return types.TimestampLTZValue(int64(millis) * microsPerMilli), nil
	}
	return Kernel{
		Call: func(a []types.Value) (types.Value, error) {
			if len(a) > 1 {
				return conv(a[0], a[1].Int())
			}
			return conv(a[0], 3)
		},
		Call1: func(x types.Value) (types.Value, error) { return conv(x, 3) },
		Call2: func(x, prec types.Value) (types.Value, error) { return conv(x, prec.Int()) },
	}, nil
}
