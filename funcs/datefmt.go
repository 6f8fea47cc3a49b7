package funcs

import (
	"fmt"
	"strings"
	"time"

	"github.com/pipesql/pipesql/types"
)

// Layout is a compiled Java date/time pattern ('yyyy-MM-dd HH:mm:ss', "EEE, d MMM yyyy",
// "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"), the patterns of DATE_FORMAT, TO_TIMESTAMP,
// FROM_UNIXTIME, UNIX_TIMESTAMP and TO_DATE. Compile it once; it is safe for concurrent use.
type Layout struct {
	pattern  string
	items    []layoutItem
	needZone bool // has z, Z, X, x, O or V: formatting must look up the zone
}

// layoutItem is a run of one pattern letter, a literal, or an optional-section bracket.
type layoutItem struct {
	letter byte // 0 for a literal; '[' and ']' for optional sections
	count  int
	lit    string
	close  int // for '[': the index of its ']'
}

// supported pattern letters; the rest (Y w W F e c ...) depend on Java locales.
const layoutLetters = "GyuMLdDQqEahKkHmsSnANVzOXxZ"

// CompileLayout compiles a Java DateTimeFormatter/SimpleDateFormat pattern.
func CompileLayout(pattern string) (*Layout, error) {
	l := &Layout{pattern: pattern}
	var open []int
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			// 'text' is literal; '' is a quote, inside or outside quotes.
			j := i + 1
			var lit strings.Builder
			for {
				if j >= len(pattern) {
					return nil, invalidArg("unterminated quote in date pattern %q", pattern)
				}
				if pattern[j] == '\'' {
					if j+1 < len(pattern) && pattern[j+1] == '\'' {
						lit.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				lit.WriteByte(pattern[j])
				j++
			}
			if j == i+1 {
				lit.WriteByte('\'') // '' outside quotes
			}
			l.addLiteral(lit.String())
			i = j + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(pattern) && pattern[j] == c {
				j++
			}
			if !strings.ContainsRune(layoutLetters, rune(c)) {
				return nil, invalidArg("unsupported pattern letter %q in date pattern %q", c, pattern)
			}
			if err := checkCount(c, j-i, pattern); err != nil {
				return nil, err
			}
			if c == 'L' {
				c = 'M'
			}
			if c == 'q' {
				c = 'Q'
			}
			l.items = append(l.items, layoutItem{letter: c, count: j - i})
			if strings.IndexByte("zOXxZV", c) >= 0 {
				l.needZone = true
			}
			i = j
		case c == '[':
			open = append(open, len(l.items))
			l.items = append(l.items, layoutItem{letter: '['})
			i++
		case c == ']':
			if len(open) == 0 {
				return nil, invalidArg("unbalanced ] in date pattern %q", pattern)
			}
			l.items[open[len(open)-1]].close = len(l.items)
			open = open[:len(open)-1]
			l.items = append(l.items, layoutItem{letter: ']'})
			i++
		case c == '{' || c == '}' || c == '#':
			return nil, invalidArg("reserved character %q in date pattern %q", c, pattern)
		default:
			j := i
			for j < len(pattern) && !isPatternSpecial(pattern[j]) {
				j++
			}
			l.addLiteral(pattern[i:j])
			i = j
		}
	}
	if len(open) > 0 {
		return nil, invalidArg("unbalanced [ in date pattern %q", pattern)
	}
	return l, nil
}

func isPatternSpecial(c byte) bool {
	return c == '\'' || c == '[' || c == ']' || c == '{' || c == '}' || c == '#' ||
		c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func checkCount(c byte, n int, pattern string) error {
	maxN := 0
	switch c {
	case 'd', 'H', 'h', 'K', 'k', 'm', 's', 'V':
		maxN = 2
	case 'D', 'a':
		maxN = 3
		if c == 'a' {
			maxN = 1
		}
	case 'M', 'L', 'Q', 'q', 'E', 'G', 'X', 'x', 'Z':
		maxN = 5
	case 'z', 'O':
		maxN = 4
	}
	if maxN > 0 && n > maxN || c == 'V' && n != 2 || c == 'O' && n != 1 && n != 4 {
		return invalidArg("too many pattern letters %q in date pattern %q", strings.Repeat(string(c), n), pattern)
	}
	return nil
}

func (l *Layout) addLiteral(s string) {
	if n := len(l.items); n > 0 && l.items[n-1].letter == 0 {
		l.items[n-1].lit += s
		return
	}
	l.items = append(l.items, layoutItem{lit: s})
}

// String returns the pattern.
func (l *Layout) String() string { return l.pattern }

// FormatWall formats a TIMESTAMP wall clock (zone fields print as UTC).
func (l *Layout) FormatWall(wall int64) string {
	f := fieldsOf(wall)
	if l.needZone {
		f.zoneName, f.zoneID = "UTC", "UTC"
	}
	return string(l.appendFields(make([]byte, 0, len(l.pattern)+8), &f))
}

// FormatInstant formats a TIMESTAMP_LTZ instant in loc.
func (l *Layout) FormatInstant(instant int64, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	wall := instantToWall(instant, loc)
	f := fieldsOf(wall)
	f.offset = int((wall - instant) / microsPerSecond)
	if l.needZone {
		f.zoneName, _ = time.UnixMicro(instant).In(loc).Zone()
		f.zoneID = loc.String()
	}
	return string(l.appendFields(make([]byte, 0, len(l.pattern)+8), &f))
}

// fields is a wall-clock reading broken into what patterns print.
type fields struct {
	year, month, day, hour, minute, sec, micro int
	days                                       int64 // since 1970-01-01
	offset                                     int   // seconds east of UTC
	zoneName, zoneID                           string
}

func fieldsOf(wall int64) fields {
	days := floorDiv(wall, microsPerDay)
	rest := wall - days*microsPerDay
	y, m, d := types.CivilFromDays(days)
	secs := rest / microsPerSecond
	return fields{year: y, month: m, day: d, hour: int(secs / 3600), minute: int(secs / 60 % 60),
		sec: int(secs % 60), micro: int(rest % microsPerSecond), days: days}
}

var (
	monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
	dayNames = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)

func textForm(name string, count int) string {
	switch {
	case count == 4:
		return name
	case count == 5:
		return name[:1]
	}
	return name[:3]
}

func (l *Layout) appendFields(b []byte, f *fields) []byte {
	for _, it := range l.items {
		switch it.letter {
		case 0:
			b = append(b, it.lit...)
		case '[', ']':
		case 'G':
			era := "AD"
			if f.year <= 0 {
				era = "BC"
			}
			if it.count == 4 {
				era = map[string]string{"AD": "Anno Domini", "BC": "Before Christ"}[era]
			} else if it.count == 5 {
				era = era[:1]
			}
			b = append(b, era...)
		case 'y', 'u':
			y := f.year
			if it.letter == 'y' && y <= 0 {
				y = 1 - y // year of era
			}
			if it.count == 2 {
				b = appendInt(b, int(floorMod(int64(y), 100)), 2)
			} else {
				b = appendInt(b, y, it.count)
			}
		case 'M':
			if it.count >= 3 {
				b = append(b, textForm(monthNames[f.month-1], it.count)...)
			} else {
				b = appendInt(b, f.month, it.count)
			}
		case 'd':
			b = appendInt(b, f.day, it.count)
		case 'D':
			b = appendInt(b, int(f.days-types.DaysFromCivil(f.year, 1, 1))+1, it.count)
		case 'Q':
			q := (f.month-1)/3 + 1
			switch it.count {
			case 1, 2:
				b = appendInt(b, q, it.count)
			case 3:
				b = append(b, 'Q')
				b = appendInt(b, q, 1)
			default:
				b = append(b, [...]string{"1st", "2nd", "3rd", "4th"}[q-1]...)
				b = append(b, " quarter"...)
			}
		case 'E':
			b = append(b, textForm(dayNames[floorMod(f.days+4, 7)], it.count)...)
		case 'a':
			if f.hour < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'h':
			b = appendInt(b, (f.hour+11)%12+1, it.count)
		case 'K':
			b = appendInt(b, f.hour%12, it.count)
		case 'k':
			b = appendInt(b, (f.hour+23)%24+1, it.count)
		case 'H':
			b = appendInt(b, f.hour, it.count)
		case 'm':
			b = appendInt(b, f.minute, it.count)
		case 's':
			b = appendInt(b, f.sec, it.count)
		case 'S':
			frac := appendInt(nil, f.micro, 6)
			for len(frac) < it.count {
				frac = append(frac, '0')
			}
			b = append(b, frac[:it.count]...)
		case 'n':
			b = appendInt(b, f.micro*1000, it.count)
		case 'A':
			b = appendInt(b, ((f.hour*60+f.minute)*60+f.sec)*1000+f.micro/1000, it.count)
		case 'N':
			b = appendInt(b, ((f.hour*60+f.minute)*60+f.sec)*1_000_000_000+f.micro*1000, it.count)
		case 'V':
			b = append(b, f.zoneID...)
		case 'z':
			b = append(b, f.zoneName...)
		case 'O':
			b = append(b, "GMT"...)
			switch {
			case f.offset == 0:
			case it.count == 4:
				b = appendOffset(b, f.offset, true, true, true)
			default: // GMT+8, GMT+5:30
				off := f.offset
				if off < 0 {
					b, off = append(b, '-'), -off
				} else {
					b = append(b, '+')
				}
				b = appendInt(b, off/3600, 1)
				if off%3600 != 0 {
					b = append(b, ':')
					b = appendInt(b, off/60%60, 2)
				}
			}
		case 'X', 'x':
			if f.offset == 0 && it.letter == 'X' {
				b = append(b, 'Z')
				break
			}
			switch it.count {
			case 1:
				b = appendOffset(b, f.offset, false, f.offset%3600 != 0, false)
			case 2, 4:
				b = appendOffset(b, f.offset, false, true, it.count == 4)
			default:
				b = appendOffset(b, f.offset, true, true, it.count == 5)
			}
		case 'Z':
			switch it.count {
			case 4:
				b = append(b, "GMT"...)
				if f.offset != 0 {
					b = appendOffset(b, f.offset, true, true, false)
				}
			case 5:
				if f.offset == 0 {
					b = append(b, 'Z')
				} else {
					b = appendOffset(b, f.offset, true, true, false)
				}
			default:
				b = appendOffset(b, f.offset, false, true, false)
			}
		}
	}
	return b
}

// appendOffset writes +HH[[:]MM[[:]SS]]; a zero-minute O offset is written +H.
func appendOffset(b []byte, off int, colon, minutes, seconds bool) []byte {
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	b = append(b, sign)
	b = appendInt(b, off/3600, 2)
	if minutes {
		if colon {
			b = append(b, ':')
		}
		b = appendInt(b, off/60%60, 2)
	}
	if seconds && off%60 != 0 {
		if colon {
			b = append(b, ':')
		}
		b = appendInt(b, off%60, 2)
	}
	return b
}

// parseMode says how a pattern reads text.
type parseMode struct {
	fracMillis bool // S is a count of milliseconds (SimpleDateFormat), not a fraction
	prefix     bool // trailing text is ignored (SimpleDateFormat.parse)
}

// parsedTime is what parsing a pattern found; unset fields default to 1970-01-01 00:00:00.
type parsedTime struct {
	wall      int64
	offset    int // seconds east of UTC when hasOffset
	hasOffset bool
	loc       *time.Location // a zone id read by VV
}

// instant is the TIMESTAMP_LTZ of what was parsed; the text's own offset or zone wins
// over loc.
func (p parsedTime) instant(loc *time.Location) int64 {
	switch {
	case p.hasOffset:
		return p.wall - int64(p.offset)*microsPerSecond
	case p.loc != nil:
		return wallToInstant(p.wall, p.loc)
	}
	return wallToInstant(p.wall, loc)
}

// parse reads s with the pattern. Numbers may have fewer digits than letters (1999-9-1
// fits yyyy-MM-dd) unless the next item is a number too (yyyyMMdd).
func (l *Layout) parse(s string, mode parseMode) (parsedTime, error) {
	st := parseState{year: 1970, month: 1, day: 1, yearDay: -1}
	pos, err := l.parseItems(s, 0, 0, len(l.items), mode, &st)
	if err != nil {
		return parsedTime{}, err
	}
	if pos != len(s) && !mode.prefix {
		return parsedTime{}, fmt.Errorf("unparsed text %q after the pattern", s[pos:])
	}
	return st.finish()
}

type parseState struct {
	year, month, day, hour, minute, sec, micro int
	yearDay                                    int
	pm, hasAmPm, hour12                        bool
	offset                                     int
	hasOffset                                  bool
	loc                                        *time.Location
}

func (st *parseState) finish() (parsedTime, error) {
	h := st.hour
	if st.hasAmPm || st.hour12 {
		if h == 12 && st.hour12 {
			h = 0
		}
		if st.pm {
			h += 12
		}
	}
	if st.month < 1 || st.month > 12 || st.day < 1 || st.day > types.DaysInMonth(st.year, st.month) ||
		h > 23 || st.minute > 59 || st.sec > 59 {
		return parsedTime{}, fmt.Errorf("field out of range")
	}
	days := types.DaysFromCivil(st.year, st.month, st.day)
	if st.yearDay > 0 {
		days = types.DaysFromCivil(st.year, 1, 1) + int64(st.yearDay) - 1
	}
	wall := days*microsPerDay + int64(h)*microsPerHour + int64(st.minute)*microsPerMinute +
		int64(st.sec)*microsPerSecond + int64(st.micro)
	return parsedTime{wall: wall, offset: st.offset, hasOffset: st.hasOffset, loc: st.loc}, nil
}

func isNumericItem(it layoutItem) bool {
	switch it.letter {
	case 'y', 'u', 'd', 'D', 'h', 'K', 'k', 'H', 'm', 's', 'S', 'n', 'A', 'N':
		return true
	case 'M', 'Q':
		return it.count <= 2
	}
	return false
}

func (l *Layout) parseItems(s string, pos, from, to int, mode parseMode, st *parseState) (int, error) {
	for i := from; i < to; i++ {
		it := l.items[i]
		if it.letter == '[' {
			// An optional section: take it if it all parses, else skip it.
			saved := *st
			if p, err := l.parseItems(s, pos, i+1, it.close, mode, st); err == nil {
				pos = p
			} else {
				*st = saved
			}
			i = it.close
			continue
		}
		if it.letter == ']' {
			continue
		}
		if it.letter == 0 {
			if !strings.HasPrefix(s[pos:], it.lit) {
				return pos, fmt.Errorf("expected %q at position %d", it.lit, pos+1)
			}
			pos += len(it.lit)
			continue
		}
		adjacent := i+1 < to && isNumericItem(l.items[i+1])
		var err error
		if pos, err = parseItem(s, pos, it, adjacent, mode, st); err != nil {
			return pos, err
		}
	}
	return pos, nil
}

func parseItem(s string, pos int, it layoutItem, adjacent bool, mode parseMode, st *parseState) (int, error) {
	readNum := func(maxDigits int) (int, int, error) {
		if adjacent {
			maxDigits = it.count
		}
		sc := scanner{s: s, i: pos}
		n, digits, ok := sc.digits(maxDigits)
		if !ok || adjacent && digits != it.count {
			return 0, 0, fmt.Errorf("expected %d digits for %s at position %d", max(it.count, 1), strings.Repeat(string(it.letter), it.count), pos+1)
		}
		pos = sc.i
		return n, digits, nil
	}
	var err error
	switch it.letter {
	case 'y', 'u':
		neg := false
		if pos < len(s) && s[pos] == '-' && it.letter == 'u' {
			neg = true
			pos++
		}
		var n, digits int
		if n, digits, err = readNum(9); err != nil {
			return pos, err
		}
		if it.count == 2 && digits == 2 {
			n += 2000
		}
		if neg {
			n = -n
		}
		st.year = n
	case 'M', 'Q':
		if it.count >= 3 && it.letter == 'M' {
			m, n := matchName(s[pos:], monthNames[:])
			if m < 0 {
				return pos, fmt.Errorf("expected a month name at position %d", pos+1)
			}
			st.month = m + 1
			pos += n
			break
		}
		var n int
		if n, _, err = readNum(2); err != nil {
			return pos, err
		}
		if it.letter == 'M' {
			st.month = n
		} else if st.month == 1 {
			st.month = (n-1)*3 + 1
		}
	case 'd':
		st.day, _, err = readNum(2)
	case 'D':
		st.yearDay, _, err = readNum(3)
	case 'H':
		st.hour, _, err = readNum(2)
	case 'h', 'K':
		st.hour, _, err = readNum(2)
		st.hour12 = it.letter == 'h'
		st.hasAmPm = true
	case 'k':
		if st.hour, _, err = readNum(2); st.hour == 24 {
			st.hour = 0
		}
	case 'm':
		st.minute, _, err = readNum(2)
	case 's':
		st.sec, _, err = readNum(2)
	case 'S':
		var n, digits int
		if n, digits, err = readNum(9); err != nil {
			return pos, err
		}
		if mode.fracMillis {
			st.micro = n * 1000
			break
		}
		for ; digits < 6; digits++ {
			n *= 10
		}
		for ; digits > 6; digits-- {
			n /= 10
		}
		st.micro = n
	case 'n':
		var n int
		n, _, err = readNum(9)
		st.micro = n / 1000
	case 'A', 'N':
		_, _, err = readNum(18) // milli/nano of day: accepted, the other fields rule
	case 'E':
		_, n := matchName(s[pos:], dayNames[:])
		if n == 0 {
			return pos, fmt.Errorf("expected a day name at position %d", pos+1)
		}
		pos += n
	case 'a':
		switch {
		case hasPrefixFold(s[pos:], "AM"):
			st.pm = false
		case hasPrefixFold(s[pos:], "PM"):
			st.pm = true
		default:
			return pos, fmt.Errorf("expected AM or PM at position %d", pos+1)
		}
		st.hasAmPm = true
		pos += 2
	case 'G':
		switch {
		case hasPrefixFold(s[pos:], "AD"), hasPrefixFold(s[pos:], "BC"):
			pos += 2
		default:
			return pos, fmt.Errorf("expected AD or BC at position %d", pos+1)
		}
	case 'V':
		end := pos
		for end < len(s) && s[end] != ' ' {
			end++
		}
		loc, lerr := time.LoadLocation(s[pos:end])
		if lerr != nil {
			return pos, fmt.Errorf("unknown time zone %q", s[pos:end])
		}
		st.loc = loc
		pos = end
	case 'z', 'O', 'X', 'x', 'Z':
		off, n, ok := parseOffset(s[pos:])
		if !ok {
			return pos, fmt.Errorf("expected a zone offset at position %d", pos+1)
		}
		st.offset, st.hasOffset = off, true
		pos += n
	}
	return pos, err
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// matchName finds a full or three-letter name at the start of s, case-insensitively.
func matchName(s string, names []string) (int, int) {
	for i, n := range names {
		if hasPrefixFold(s, n) {
			return i, len(n)
		}
	}
	for i, n := range names {
		if hasPrefixFold(s, n[:3]) {
			return i, 3
		}
	}
	return -1, 0
}

// parseOffset reads Z, UTC, GMT, +HH, +HHMM, +HH:MM (optionally after GMT or UTC).
func parseOffset(s string) (int, int, bool) {
	pos := 0
	switch {
	case hasPrefixFold(s, "UTC"), hasPrefixFold(s, "GMT"):
		pos = 3
	case strings.HasPrefix(s, "Z"):
		return 0, 1, true
	}
	if pos == len(s) || s[pos] != '+' && s[pos] != '-' {
		return 0, pos, pos > 0
	}
	sign := 1
	if s[pos] == '-' {
		sign = -1
	}
	sc := scanner{s: s, i: pos + 1}
	h, n, ok := sc.digits(2)
	if !ok {
		return 0, 0, false
	}
	m := 0
	if n == 2 {
		sc.skip(':')
		if mm, _, ok := sc.digits(2); ok {
			m = mm
		}
	}
	if h > 18 || m > 59 {
		return 0, 0, false
	}
	return sign * (h*3600 + m*60), sc.i, true
}
