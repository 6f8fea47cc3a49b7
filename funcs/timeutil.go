package funcs

import (
	"strings"
	"time"
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
	days := daysFromCivil(y, mo, d)
	return days*microsPerDay + int64(h)*microsPerHour + int64(mi)*microsPerMinute +
		int64(s)*microsPerSecond + int64(us)
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the proleptic
// Gregorian calendar (Howard Hinnant's algorithm, valid for every int year).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	m = int(mp + 3)
	if m > 12 {
		m -= 12
	}
	y = int(yoe + era*400)
	if m <= 2 {
		y++
	}
	return y, m, d
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
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
	y, m, d := civilFromDays(days)
	secs := rest / microsPerSecond
	t := time.Date(y, time.Month(m), d, int(secs/3600), int(secs/60%60), int(secs%60), 0, loc)
	return t.Unix()*microsPerSecond + rest%microsPerSecond
}

// addMonths adds n months to a date, clamping the day to the month's end (Jan 31 + 1
// month is Feb 28 or 29), as Calcite's DateTimeUtils.addMonths does.
func addMonths(days int64, n int64) int64 {
	y, m, d := civilFromDays(days)
	total := int64(y)*12 + int64(m-1) + n
	ny := int(floorDiv(total, 12))
	nm := int(floorMod(total, 12)) + 1
	d = min(d, daysIn(ny, nm))
	return daysFromCivil(ny, nm, d)
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

// appendFraction writes Flink's fraction of a TIMESTAMP(prec) or TIME(prec) string form:
// all significant digits, zero-padded to at least prec; nothing when both are zero.
func appendFraction(b []byte, micro int, prec int) []byte {
	digits := appendInt(nil, micro, 6)
	if prec > 6 {
		for i := 6; i < prec; i++ {
			digits = append(digits, '0')
		}
	}
	n := len(digits)
	for n > prec && n > 0 && digits[n-1] == '0' {
		n--
	}
	if n == 0 {
		return b
	}
	b = append(b, '.')
	return append(b, digits[:n]...)
}

// formatWall formats a TIMESTAMP(prec) wall clock as CAST(... AS STRING) does:
// 2024-01-02 03:04:05.678.
func formatWall(wall int64, prec int) string {
	f := fieldsOf(wall)
	b := make([]byte, 0, 32)
	b = appendDate(b, f.year, f.month, f.day)
	b = append(b, ' ')
	b = appendClock(b, f.hour, f.minute, f.sec)
	b = appendFraction(b, f.micro, prec)
	return string(b)
}

func appendDate(b []byte, y, m, d int) []byte {
	b = appendInt(b, y, 4)
	b = append(b, '-')
	b = appendInt(b, m, 2)
	b = append(b, '-')
	return appendInt(b, d, 2)
}

func appendClock(b []byte, h, m, s int) []byte {
	b = appendInt(b, h, 2)
	b = append(b, ':')
	b = appendInt(b, m, 2)
	b = append(b, ':')
	return appendInt(b, s, 2)
}

func formatDate(days int64) string {
	y, m, d := civilFromDays(days)
	return string(appendDate(make([]byte, 0, 10), y, m, d))
}

func formatTime(micros int64, prec int) string {
	micros = floorMod(micros, microsPerDay)
	b := appendClock(make([]byte, 0, 16), int(micros/microsPerHour), int(micros/microsPerMinute%60),
		int(micros/microsPerSecond%60))
	return string(appendFraction(b, int(micros%microsPerSecond), prec))
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

// parseDateParts reads yyyy-M-d (also just yyyy or yyyy-M) from the scanner.
func (sc *scanner) date() (y, m, d int, ok bool) {
	neg := sc.skip('-')
	y, _, ok = sc.digits(9)
	if !ok {
		return 0, 0, 0, false
	}
	if neg {
		y = -y
	}
	m, d = 1, 1
	if sc.skip('-') {
		if m, _, ok = sc.digits(2); !ok {
			return 0, 0, 0, false
		}
		if sc.skip('-') {
			if d, _, ok = sc.digits(2); !ok {
				return 0, 0, 0, false
			}
		}
	}
	if m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return 0, 0, 0, false
	}
	return y, m, d, true
}

// clock reads H:m[:s[.fffffffff]] and returns microseconds since midnight.
func (sc *scanner) clock() (int64, bool) {
	h, _, ok := sc.digits(2)
	if !ok || !sc.skip(':') {
		return 0, false
	}
	mi, _, ok := sc.digits(2)
	if !ok {
		return 0, false
	}
	s, us := 0, 0
	if sc.skip(':') {
		if s, _, ok = sc.digits(2); !ok {
			return 0, false
		}
		if sc.skip('.') {
			start := sc.i
			f, n, _ := sc.digits(9)
			if sc.i == start {
				return 0, false
			}
			for ; n < 6; n++ {
				f *= 10
			}
			for ; n > 6; n-- {
				f /= 10
			}
			us = f
		}
	}
	if h > 23 || mi > 59 || s > 59 {
		return 0, false
	}
	return int64(h)*microsPerHour + int64(mi)*microsPerMinute + int64(s)*microsPerSecond + int64(us), true
}

// parseTimestampText parses the forms Flink's CAST and TO_TIMESTAMP accept without a
// pattern: yyyy-M-d, optionally followed by a space (or T) and H:m:s[.fraction].
func parseTimestampText(s string) (int64, bool) {
	sc := scanner{s: strings.TrimSpace(s)}
	y, m, d, ok := sc.date()
	if !ok {
		return 0, false
	}
	wall := daysFromCivil(y, m, d) * microsPerDay
	if sc.done() {
		return wall, true
	}
	if !sc.skip(' ') && !sc.skip('T') {
		return 0, false
	}
	t, ok := sc.clock()
	if !ok || !sc.done() {
		return 0, false
	}
	return wall + t, true
}

// parseDateText parses a DATE the way Flink's CAST does: the part before a space or T,
// as yyyy-M-d, yyyy-M or yyyy.
func parseDateText(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " T"); i > 0 {
		s = s[:i]
	}
	sc := scanner{s: s}
	y, m, d, ok := sc.date()
	if !ok || !sc.done() {
		return 0, false
	}
	return daysFromCivil(y, m, d), true
}

// parseTimeText parses H:m[:s[.fraction]] into microseconds since midnight.
func parseTimeText(s string) (int64, bool) {
	sc := scanner{s: strings.TrimSpace(s)}
	t, ok := sc.clock()
	return t, ok && sc.done()
}
