package types

// Dates and times are computed, parsed and printed here by hand rather than with the
// time package: this is the hot path of every decoded event, a DATE is a day number and
// a TIMESTAMP a count of microseconds (no zone, no monotonic clock), and the accepted
// spellings are SQL's, not Go layouts. The calendar is the proleptic Gregorian one, as
// in Flink (java.time), for every int year.

const (
	microsPerSecond = 1_000_000
	microsPerDay    = 86_400 * microsPerSecond
)

// DaysFromCivil is the number of days from 1970-01-01 to y-m-d (Howard Hinnant's
// days_from_civil). m and d are not checked: 2024-02-30 is 2024-03-01.
func DaysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := floorDivInt(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// CivilFromDays is the inverse of DaysFromCivil.
func CivilFromDays(days int64) (y, m, d int) {
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
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

func floorDivInt(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// IsLeapYear reports whether y has a February 29.
func IsLeapYear(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// DaysInMonth is the number of days of month m (1 to 12) of year y.
func DaysInMonth(y, m int) int {
	switch m {
	case 2:
		if IsLeapYear(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// SplitMicros splits a TIMESTAMP (microseconds since 1970-01-01 00:00:00) into its day
// and its time of day, both rounded toward minus infinity: the time of day is never
// negative.
func SplitMicros(micros int64) (days, timeOfDay int64) {
	days = micros / microsPerDay
	timeOfDay = micros % microsPerDay
	if timeOfDay < 0 {
		days--
		timeOfDay += microsPerDay
	}
	return days, timeOfDay
}

// A Syntax selects the spellings of dates and times that ParseDate, ParseTime and
// ParseTimestamp accept. The zero Syntax is the strict ISO 8601 one: a date yyyy-MM-dd
// with a four-digit year, a time HH:mm[:ss[.fffffffff]] with two-digit fields and 1 to 9
// fractional digits (kept to microseconds), hours 00 to 23; a timestamp needs one of
// the separator flags.
type Syntax uint16

const (
	// FreeYear accepts a year of 1 to 9 digits after an optional '-' instead of exactly
	// four digits.
	FreeYear Syntax = 1 << iota
	// ShortDate accepts a one-digit month and day: 2024-1-5.
	ShortDate
	// PartialDate accepts a date without its day or its month and day (yyyy-M, yyyy);
	// the missing fields are 1.
	PartialDate
	// ShortClock accepts a one-digit hour, minute and second: 1:2:3.
	ShortClock
	// SpaceSep accepts a space between the date and the time of a timestamp.
	SpaceSep
	// TSep accepts a 'T' between the date and the time of a timestamp.
	TSep
	// DateOnly accepts a timestamp that is a date alone, at midnight.
	DateOnly
	// UTCSuffix accepts Z, z, +00:00 or +0000 after the time of a timestamp.
	UTCSuffix
)

// CastSyntax is what Flink's CAST from a string to DATE, TIME or TIMESTAMP and
// TO_TIMESTAMP without a pattern accept (DateTimeUtils.parseDate/parseTimestampData):
// 2024-1-5, 2024-01-05 1:02:03.123456789, 2024-01-05T01:02, 2024.
const CastSyntax = FreeYear | ShortDate | PartialDate | ShortClock | SpaceSep | TSep | DateOnly

// text is what the parsers read: the JSON and CSV decoders pass the []byte of a
// record, SQL functions a string, without a conversion (and its copy) in between.
type text interface{ ~string | ~[]byte }

// scanDigits reads between minN and maxN ASCII digits at s[i:].
func scanDigits[T text](s T, i, minN, maxN int) (n, next int, ok bool) {
	j := i
	for j < len(s) && j-i < maxN && s[j] >= '0' && s[j] <= '9' {
		n = n*10 + int(s[j]-'0')
		j++
	}
	if j-i < minN {
		return 0, i, false
	}
	return n, j, true
}

// ParseDate reads a date at the start of s and returns its days since 1970-01-01 and
// the number of bytes it read; what follows is the caller's to judge.
func ParseDate[T text](s T, syn Syntax) (days int64, n int, ok bool) {
	i := 0
	neg := false
	minY, maxY := 4, 4
	if syn&FreeYear != 0 {
		minY, maxY = 1, 9
		if len(s) > 0 && s[0] == '-' {
			neg, i = true, 1
		}
	}
	y, i, ok := scanDigits(s, i, minY, maxY)
	if !ok {
		return 0, 0, false
	}
	if neg {
		y = -y
	}
	minMD := 2
	if syn&ShortDate != 0 {
		minMD = 1
	}
	m, d := 1, 1
	if i < len(s) && s[i] == '-' {
		if m, i, ok = scanDigits(s, i+1, minMD, 2); !ok {
			return 0, 0, false
		}
		if i < len(s) && s[i] == '-' {
			if d, i, ok = scanDigits(s, i+1, minMD, 2); !ok {
				return 0, 0, false
			}
		} else if syn&PartialDate == 0 {
			return 0, 0, false
		}
	} else if syn&PartialDate == 0 {
		return 0, 0, false
	}
	if m < 1 || m > 12 || d < 1 || d > DaysInMonth(y, m) {
		return 0, 0, false
	}
	return DaysFromCivil(y, m, d), i, true
}

// ParseTime reads a time of day H:m[:s[.fraction]] at the start of s and returns its
// microseconds since midnight and the number of bytes it read. Fractional digits
// beyond the sixth are read and dropped (a TIME(9) string keeps microseconds); a tenth
// digit is not read, so a caller that wants the whole input refuses it.
func ParseTime[T text](s T, syn Syntax) (micros int64, n int, ok bool) {
	minN := 2
	if syn&ShortClock != 0 {
		minN = 1
	}
	h, i, ok := scanDigits(s, 0, minN, 2)
	if !ok || h > 23 || i >= len(s) || s[i] != ':' {
		return 0, 0, false
	}
	mi, i, ok := scanDigits(s, i+1, minN, 2)
	if !ok || mi > 59 {
		return 0, 0, false
	}
	var sec, frac int
	if i < len(s) && s[i] == ':' {
		if sec, i, ok = scanDigits(s, i+1, minN, 2); !ok || sec > 59 {
			return 0, 0, false
		}
		if i < len(s) && s[i] == '.' {
			start := i + 1
			if frac, i, ok = scanDigits(s, start, 1, 9); !ok {
				return 0, 0, false
			}
			for k := i - start; k < 6; k++ {
				frac *= 10
			}
			for k := i - start; k > 6; k-- {
				frac /= 10
			}
		}
	}
	return int64(h*3600+mi*60+sec)*microsPerSecond + int64(frac), i, true
}

// ParseTimestamp reads a timestamp that is the whole of s: a date, a separator, a time
// and, with UTCSuffix, an optional UTC zone. It returns microseconds since 1970-01-01
// 00:00:00 of that wall clock.
func ParseTimestamp[T text](s T, syn Syntax) (micros int64, ok bool) {
	days, i, ok := ParseDate(s, syn)
	if !ok {
		return 0, false
	}
	micros = days * microsPerDay
	if i == len(s) {
		return micros, syn&DateOnly != 0
	}
	if c := s[i]; !(c == ' ' && syn&SpaceSep != 0 || c == 'T' && syn&TSep != 0) {
		return 0, false
	}
	tod, n, ok := ParseTime(s[i+1:], syn)
	if !ok {
		return 0, false
	}
	i += 1 + n
	if i < len(s) && syn&UTCSuffix != 0 {
		switch string(s[i:]) { // no allocation: the conversion only feeds the switch
		case "Z", "z", "+00:00", "+0000":
			i = len(s)
		}
	}
	return micros + tod, i == len(s)
}

// AppendDate appends the yyyy-MM-dd of a DATE (days since 1970-01-01); a year before 0
// has a '-', a year after 9999 more digits.
func AppendDate(dst []byte, days int64) []byte {
	y, m, d := CivilFromDays(days)
	if y < 0 {
		dst = append(dst, '-')
		y = -y
	}
	dst = appendPadded(dst, y, 4)
	dst = append(dst, '-')
	dst = appendPadded(dst, m, 2)
	dst = append(dst, '-')
	return appendPadded(dst, d, 2)
}

// AppendTime appends the HH:mm:ss of a time of day in microseconds (taken modulo a day)
// and its fraction as AppendFraction does.
func AppendTime(dst []byte, micros int64, minFrac int) []byte {
	_, tod := SplitMicros(micros)
	sec := int(tod / microsPerSecond)
	dst = appendPadded(dst, sec/3600, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, sec/60%60, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, sec%60, 2)
	return AppendFraction(dst, int(tod%microsPerSecond), minFrac)
}

// AppendTimestamp appends a TIMESTAMP as date, sep and time (see AppendTime).
func AppendTimestamp(dst []byte, micros int64, sep byte, minFrac int) []byte {
	days, tod := SplitMicros(micros)
	dst = AppendDate(dst, days)
	dst = append(dst, sep)
	return AppendTime(dst, tod, minFrac)
}

// AppendFraction appends the fraction of a second of micros (0 to 999999) the way
// Flink's string forms show it: '.', then the significant digits, padded with zeros to
// at least minFrac digits; nothing when there are none. minFrac 0 gives java.time's
// ISO_LOCAL_TIME fraction (trailing zeros trimmed); minFrac 3 shows TIMESTAMP(3).
func AppendFraction(dst []byte, micros int, minFrac int) []byte {
	var digits [6]byte
	for i := 5; i >= 0; i-- {
		digits[i] = byte('0' + micros%10)
		micros /= 10
	}
	n := 6
	for n > 0 && digits[n-1] == '0' {
		n--
	}
	if n == 0 && minFrac <= 0 {
		return dst
	}
	dst = append(dst, '.')
	if minFrac <= 6 {
		return append(dst, digits[:max(n, minFrac)]...)
	}
	dst = append(dst, digits[:]...)
	for i := 6; i < minFrac; i++ {
		dst = append(dst, '0')
	}
	return dst
}

// appendPadded appends n (not negative) in decimal, zero-padded to width digits.
func appendPadded(dst []byte, n int, width int) []byte {
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
		dst = append(dst, '0')
	}
	return append(dst, buf[i:]...)
}
