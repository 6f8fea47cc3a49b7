package formats

import (
	"strconv"
)

// Dates and times are parsed and printed by hand rather than with time.Parse: this is
// the hot path of every event, and the formats are fixed (Flink's SQL_TIMESTAMP_FORMAT
// and ISO_LOCAL_DATE_TIME), so a direct scan is both faster and stricter.

const (
	microsPerSecond = 1_000_000
	microsPerDay    = 86_400 * microsPerSecond
)

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian date
// (Howard Hinnant's algorithm, exact for all int64 years we accept).
func daysFromCivil(y, m, d int64) int64 {
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
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysInMonth(y, m int64) int64 {
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

// digits reads between min and max ASCII digits from the start of b.
func digits(b []byte, min, max int) (n int64, rest []byte, ok bool) {
	i := 0
	for i < len(b) && i < max && b[i] >= '0' && b[i] <= '9' {
		n = n*10 + int64(b[i]-'0')
		i++
	}
	if i < min {
		return 0, b, false
	}
	return n, b[i:], true
}

// parseDate reads yyyy-MM-dd (month and day may have one digit, as java.sql.Date
// accepts) and returns days since the epoch and the unread rest.
func parseDate(b []byte) (days int64, rest []byte, ok bool) {
	y, b, ok := digits(b, 4, 4)
	if !ok || len(b) == 0 || b[0] != '-' {
		return 0, nil, false
	}
	m, b, ok := digits(b[1:], 1, 2)
	if !ok || len(b) == 0 || b[0] != '-' || m < 1 || m > 12 {
		return 0, nil, false
	}
	d, b, ok := digits(b[1:], 1, 2)
	if !ok || d < 1 || d > daysInMonth(y, m) {
		return 0, nil, false
	}
	return daysFromCivil(y, m, d), b, true
}

// parseTimeOfDay reads HH:mm[:ss[.fraction]] (ISO_LOCAL_TIME; up to 9 fractional
// digits, kept to microseconds) and returns microseconds since midnight.
func parseTimeOfDay(b []byte) (micros int64, rest []byte, ok bool) {
	h, b, ok := digits(b, 2, 2)
	if !ok || h > 23 || len(b) == 0 || b[0] != ':' {
		return 0, nil, false
	}
	mi, b, ok := digits(b[1:], 2, 2)
	if !ok || mi > 59 {
		return 0, nil, false
	}
	var s, frac int64
	if len(b) > 0 && b[0] == ':' {
		s, b, ok = digits(b[1:], 2, 2)
		if !ok || s > 59 {
			return 0, nil, false
		}
		if len(b) > 0 && b[0] == '.' {
			i := 1
			for i < len(b) && i <= 9 && b[i] >= '0' && b[i] <= '9' {
				if i <= 6 {
					frac = frac*10 + int64(b[i]-'0')
				}
				i++
			}
			if i == 1 {
				return 0, nil, false
			}
			for n := i - 1; n < 6; n++ {
				frac *= 10
			}
			b = b[i:]
		}
	}
	return (h*3600+mi*60+s)*microsPerSecond + frac, b, true
}

// parseTimestamp reads a date, sep, a time of day and, when zone is 'Z', an optional
// trailing 'Z' (or "+00:00"); it returns microseconds since the epoch of that wall clock.
func parseTimestamp(b []byte, sep byte, allowZ bool) (int64, bool) {
	days, b, ok := parseDate(b)
	if !ok || len(b) == 0 || b[0] != sep {
		return 0, false
	}
	tod, b, ok := parseTimeOfDay(b[1:])
	if !ok {
		return 0, false
	}
	if allowZ && len(b) > 0 {
		switch string(b) {
		case "Z", "z", "+00:00", "+0000":
			b = nil
		}
	}
	if len(b) != 0 {
		return 0, false
	}
	return days*microsPerDay + tod, true
}

// appendDate appends yyyy-MM-dd of days since the epoch.
func appendDate(dst []byte, days int64) []byte {
	y, m, d := civilFromDays(days)
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

func appendPadded(dst []byte, n int64, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], n, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// splitMicros splits microseconds since the epoch into days and microseconds of the day.
func splitMicros(micros int64) (days, tod int64) {
	days = micros / microsPerDay
	tod = micros % microsPerDay
	if tod < 0 {
		days--
		tod += microsPerDay
	}
	return days, tod
}

// appendTimeOfDay appends HH:mm:ss and, as java.time's ISO_LOCAL_TIME does, the
// fraction with trailing zeros removed (nothing when it is zero).
func appendTimeOfDay(dst []byte, tod int64) []byte {
	sec := tod / microsPerSecond
	dst = appendPadded(dst, sec/3600, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, sec/60%60, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, sec%60, 2)
	return appendTrimmedFraction(dst, tod%microsPerSecond)
}

func appendTrimmedFraction(dst []byte, micros int64) []byte {
	if micros == 0 {
		return dst
	}
	var buf [6]byte
	for i := 5; i >= 0; i-- {
		buf[i] = byte('0' + micros%10)
		micros /= 10
	}
	n := 6
	for n > 0 && buf[n-1] == '0' {
		n--
	}
	dst = append(dst, '.')
	return append(dst, buf[:n]...)
}

// appendTimestamp appends a timestamp as Flink's JSON and CSV formats write it:
// date, sep, time of day with the fraction trimmed, and zone ("Z" or "").
func appendTimestamp(dst []byte, micros int64, sep byte, zone string) []byte {
	days, tod := splitMicros(micros)
	dst = appendDate(dst, days)
	dst = append(dst, sep)
	dst = appendTimeOfDay(dst, tod)
	return append(dst, zone...)
}
