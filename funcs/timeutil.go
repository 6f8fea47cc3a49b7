package funcs

import (
	"strings"
	"time"

	"github.com/pipesql/pipesql/types"
)

const (
	microsPerMilli  = 1_000
	microsPerSecond = 1_000_000
	microsPerMinute = 60 * microsPerSecond
	microsPerHour   = 60 * microsPerMinute
	microsPerDay    = 24 * microsPerHour
)

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// wallMicros is the TIMESTAMP value of a wall-clock reading.
func wallMicros(y, mo, d, h, mi, s, us int) int64 {
	days := types.DaysFromCivil(y, mo, d)
	return days*microsPerDay + int64(h)*microsPerHour + int64(mi)*microsPerMinute +
		int64(s)*microsPerSecond + int64(us)
}

// instantToWall turns a TIMESTAMP_LTZ instant into the TIMESTAMP wall clock of loc.
func instantToWall(instant int64, loc *time.Location) int64 {
	if loc == time.UTC || loc == nil {
		return instant
	}
	_, off := time.UnixMicro(instant).In(loc).Zone()
	return instant + int64(off)*microsPerSecond
}

// wallToInstant reads a TIMESTAMP wall clock in loc, giving the TIMESTAMP_LTZ instant.
// A reading that falls in a daylight-saving gap or overlap gets one of its candidate
// offsets, as time.Date chooses.
func wallToInstant(wall int64, loc *time.Location) int64 {
	if loc == time.UTC || loc == nil {
		return wall
	}
	days := floorDiv(wall, microsPerDay)
	rest := wall - days*microsPerDay
	y, m, d := types.CivilFromDays(days)
	secs := rest / microsPerSecond
	t := time.Date(y, time.Month(m), d, int(secs/3600), int(secs/60%60), int(secs%60), 0, loc)
	return t.Unix()*microsPerSecond + rest%microsPerSecond
}

// addMonths adds n months to a date, clamping the day to the month's end (Jan 31 + 1
// month is Feb 28 or 29), as Calcite's DateTimeUtils.addMonths does.
func addMonths(days int64, n int64) int64 {
	y, m, d := types.CivilFromDays(days)
	total := int64(y)*12 + int64(m-1) + n
	ny := int(floorDiv(total, 12))
	nm := int(floorMod(total, 12)) + 1
	d = min(d, types.DaysInMonth(ny, nm))
	return types.DaysFromCivil(ny, nm, d)
}

func addMonthsWall(wall int64, n int64) int64 {
	days := floorDiv(wall, microsPerDay)
	return addMonths(days, n)*microsPerDay + (wall - days*microsPerDay)
}

// subtractMonthDays is how many whole months date0 is after date1 (Calcite's algorithm).
func subtractMonthDays(date0, date1 int64) int64 {
	if date0 < date1 {
		return -subtractMonthDays(date1, date0)
	}
	m := (date0 - date1) / 31
	for {
		if addMonths(date1, m) >= date0 {
			return m
		}
		if addMonths(date1, m+1) > date0 {
			return m
		}
		m++
	}
}

// subtractMonths is how many whole months wall clock t0 is after t1.
func subtractMonths(t0, t1 int64) int64 {
	rest0 := floorMod(t0, microsPerDay)
	d0 := floorDiv(t0, microsPerDay)
	rest1 := floorMod(t1, microsPerDay)
	d1 := floorDiv(t1, microsPerDay)
	x := subtractMonthDays(d0, d1)
	if addMonths(d1, x) == d0 && rest0 < rest1 {
		x--
	}
	return x
}

// truncMicros drops fractional digits beyond prec (TIMESTAMP(3) keeps milliseconds).
func truncMicros(micros int64, prec int) int64 {
	if prec >= 6 || prec < 0 {
		return micros
	}
	unit := int64(1)
	for i := prec; i < 6; i++ {
		unit *= 10
	}
	return floorDiv(micros, unit) * unit
}

// appendInt writes n zero-padded to width digits.
func appendInt(b []byte, n int, width int) []byte {
	if n < 0 {
		b = append(b, '-')
		n = -n
	}
	var buf [20]byte
	i := len(buf)
	for n >= 10 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	i--
	buf[i] = byte('0' + n)
	for pad := width - (len(buf) - i); pad > 0; pad-- {
		b = append(b, '0')
	}
	return append(b, buf[i:]...)
}

// scanner reads the numeric fields of date and time strings.
type scanner struct {
	s string
	i int
}

func (sc *scanner) done() bool { return sc.i >= len(sc.s) }

// digits reads between 1 and maxN digits.
func (sc *scanner) digits(maxN int) (int, int, bool) {
	start := sc.i
	n := 0
	for sc.i < len(sc.s) && sc.i-start < maxN && sc.s[sc.i] >= '0' && sc.s[sc.i] <= '9' {
		n = n*10 + int(sc.s[sc.i]-'0')
		sc.i++
	}
	return n, sc.i - start, sc.i > start
}

func (sc *scanner) skip(c byte) bool {
	if sc.i < len(sc.s) && sc.s[sc.i] == c {
		sc.i++
		return true
	}
	return false
}

// parseTimestampText parses the forms Flink's CAST and TO_TIMESTAMP accept without a
// pattern (types.CastSyntax): yyyy-M-d, optionally followed by a space (or T) and
// H:m:s[.fraction].
func parseTimestampText(s string) (int64, bool) {
	return types.ParseTimestamp(strings.TrimSpace(s), types.CastSyntax)
}

// parseDateText parses a DATE the way Flink's CAST does: the part before a space or T,
// as yyyy-M-d, yyyy-M or yyyy.
func parseDateText(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " T"); i > 0 {
		s = s[:i]
	}
	days, n, ok := types.ParseDate(s, types.CastSyntax)
	return days, ok && n == len(s)
}

// parseTimeText parses H:m[:s[.fraction]] into microseconds since midnight.
func parseTimeText(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	t, n, ok := types.ParseTime(s, types.CastSyntax)
	return t, ok && n == len(s)
}
