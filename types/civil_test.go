package types

import (
	"testing"
	"time"
)

func TestCivilRoundTrip(t *testing.T) {
	// every day from -2000-01-01 to 4000-12-31 against the time package, and back
	start := DaysFromCivil(-2000, 1, 1)
	end := DaysFromCivil(4000, 12, 31)
	for days := start; days <= end; days++ {
		y, m, d := CivilFromDays(days)
		want := time.Unix(days*86400, 0).UTC()
		if y != want.Year() || m != int(want.Month()) || d != want.Day() {
			t.Fatalf("CivilFromDays(%d) = %d-%d-%d, want %s", days, y, m, d, want.Format(time.DateOnly))
		}
		if got := DaysFromCivil(y, m, d); got != days {
			t.Fatalf("DaysFromCivil(%d, %d, %d) = %d, want %d", y, m, d, got, days)
		}
	}
	for _, tc := range []struct {
		y, m, d int
		days    int64
	}{
		{1970, 1, 1, 0},
		{1969, 12, 31, -1},
		{2000, 2, 29, 11016},
		{0, 1, 1, -719528},
		{-1, 12, 31, -719529},
		{999_999_999, 12, 31, 365241780471},
		{-999_999_999, 1, 1, -365243219162},
	} {
		if got := DaysFromCivil(tc.y, tc.m, tc.d); got != tc.days {
			t.Errorf("DaysFromCivil(%d, %d, %d) = %d, want %d", tc.y, tc.m, tc.d, got, tc.days)
		}
		if y, m, d := CivilFromDays(tc.days); y != tc.y || m != tc.m || d != tc.d {
			t.Errorf("CivilFromDays(%d) = %d-%d-%d, want %d-%d-%d", tc.days, y, m, d, tc.y, tc.m, tc.d)
		}
	}
}

func TestLeapYears(t *testing.T) {
	for y, leap := range map[int]bool{2024: true, 2023: false, 1900: false, 2000: true, 0: true, -4: true, -100: false, -400: true} {
		if IsLeapYear(y) != leap {
			t.Errorf("IsLeapYear(%d) = %v", y, !leap)
		}
		feb := 28
		if leap {
			feb = 29
		}
		if got := DaysInMonth(y, 2); got != feb {
			t.Errorf("DaysInMonth(%d, 2) = %d, want %d", y, got, feb)
		}
	}
	for m, n := range []int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31} {
		if got := DaysInMonth(2023, m+1); got != n {
			t.Errorf("DaysInMonth(2023, %d) = %d, want %d", m+1, got, n)
		}
	}
}

func TestSplitMicros(t *testing.T) {
	for _, tc := range []struct{ micros, days, tod int64 }{
		{0, 0, 0},
		{microsPerDay - 1, 0, microsPerDay - 1},
		{microsPerDay, 1, 0},
		{-1, -1, microsPerDay - 1},
		{-microsPerDay, -1, 0},
	} {
		if d, tod := SplitMicros(tc.micros); d != tc.days || tod != tc.tod {
			t.Errorf("SplitMicros(%d) = %d, %d, want %d, %d", tc.micros, d, tod, tc.days, tc.tod)
		}
	}
}

// wall is the TIMESTAMP of a wall clock, for expectations.
func wall(y, mo, d, h, mi, s, us int) int64 {
	return DaysFromCivil(y, mo, d)*microsPerDay + int64((h*60+mi)*60+s)*microsPerSecond + int64(us)
}

func TestParseDate(t *testing.T) {
	const strict, short = Syntax(0), ShortDate
	for _, tc := range []struct {
		in   string
		syn  Syntax
		days int64 // with want n = len(in) unless n is set
		n    int
		ok   bool
	}{
		{"2024-03-05", strict, DaysFromCivil(2024, 3, 5), 0, true},
		{"2024-02-29", strict, DaysFromCivil(2024, 2, 29), 0, true},
		{"2023-02-29", strict, 0, 0, false},
		{"1900-02-29", CastSyntax, 0, 0, false},
		{"2000-02-29", CastSyntax, DaysFromCivil(2000, 2, 29), 0, true},
		{"2024-04-31", CastSyntax, 0, 0, false},
		{"2024-13-01", CastSyntax, 0, 0, false},
		{"2024-00-01", CastSyntax, 0, 0, false},
		{"2024-01-00", CastSyntax, 0, 0, false},
		{"0000-01-01", strict, DaysFromCivil(0, 1, 1), 0, true},
		{"2024-3-5", strict, 0, 0, false},
		{"2024-3-5", short, DaysFromCivil(2024, 3, 5), 0, true},
		{"2024-03-05 12:00", strict, DaysFromCivil(2024, 3, 5), 10, true},
		{"2024-03-051", strict, DaysFromCivil(2024, 3, 5), 10, true}, // the caller sees the rest
		{"24-03-05", strict, 0, 0, false},
		{"24-03-05", CastSyntax, DaysFromCivil(24, 3, 5), 0, true},
		{"20245-01-01", strict, 0, 0, false},
		{"20245-01-01", CastSyntax, DaysFromCivil(20245, 1, 1), 0, true},
		{"-0001-12-31", strict, 0, 0, false},
		{"-1-12-31", CastSyntax, DaysFromCivil(-1, 12, 31), 0, true},
		{"2024", strict, 0, 0, false},
		{"2024", CastSyntax, DaysFromCivil(2024, 1, 1), 0, true},
		{"2024-7", CastSyntax, DaysFromCivil(2024, 7, 1), 0, true},
		{"2024-7-", CastSyntax, 0, 0, false},
		{"2024-", CastSyntax, 0, 0, false},
		{"", CastSyntax, 0, 0, false},
		{"-", CastSyntax, 0, 0, false},
		{"+2024-01-01", CastSyntax, 0, 0, false},
		{"2024/01/01", strict, 0, 0, false},
		{"1234567890-01-01", CastSyntax, DaysFromCivil(123456789, 1, 1), 9, true}, // the caller refuses the rest
	} {
		days, n, ok := ParseDate(tc.in, tc.syn)
		want := tc.n
		if want == 0 && tc.ok {
			want = len(tc.in)
		}
		if ok != tc.ok || ok && (days != tc.days || n != want) {
			t.Errorf("ParseDate(%q, %#x) = %d, %d, %v, want %d, %d, %v", tc.in, tc.syn, days, n, ok, tc.days, want, tc.ok)
		}
		bdays, bn, bok := ParseDate([]byte(tc.in), tc.syn)
		if bdays != days || bn != n || bok != ok {
			t.Errorf("ParseDate([]byte(%q)) differs from the string form", tc.in)
		}
	}
}

func TestParseTime(t *testing.T) {
	us := func(h, m, s, frac int) int64 { return int64((h*60+m)*60+s)*microsPerSecond + int64(frac) }
	for _, tc := range []struct {
		in     string
		syn    Syntax
		micros int64
		n      int // 0: all of in
		ok     bool
	}{
		{"12:34:56", 0, us(12, 34, 56, 0), 0, true},
		{"12:34", 0, us(12, 34, 0, 0), 0, true},
		{"00:00:00", 0, 0, 0, true},
		{"23:59:59.999999999", 0, us(23, 59, 59, 999999), 0, true},
		{"12:34:56.1", 0, us(12, 34, 56, 100000), 0, true},
		{"12:34:56.123", 0, us(12, 34, 56, 123000), 0, true},
		{"12:34:56.123456", 0, us(12, 34, 56, 123456), 0, true},
		{"12:34:56.1234567", 0, us(12, 34, 56, 123456), 0, true},
		{"12:34:56.000000001", 0, us(12, 34, 56, 0), 0, true},
		{"12:34:56.1234567891", 0, us(12, 34, 56, 123456), 18, true}, // the tenth digit is left
		{"12:34:56.", 0, 0, 0, false},
		{"12:34:56Z", 0, us(12, 34, 56, 0), 8, true},
		{"24:00", 0, 0, 0, false},
		{"24:00:00", CastSyntax, 0, 0, false},
		{"23:60", 0, 0, 0, false},
		{"23:59:60", 0, 0, 0, false},
		{"1:02:03", 0, 0, 0, false},
		{"1:2:3", CastSyntax, us(1, 2, 3, 0), 0, true},
		{"1:2:3.5", CastSyntax, us(1, 2, 3, 500000), 0, true},
		{"12", CastSyntax, 0, 0, false},
		{"12:", CastSyntax, 0, 0, false},
		{"12:3a", CastSyntax, us(12, 3, 0, 0), 4, true},
		{"123:00", CastSyntax, 0, 0, false},
		{"", 0, 0, 0, false},
	} {
		micros, n, ok := ParseTime(tc.in, tc.syn)
		want := tc.n
		if want == 0 && tc.ok {
			want = len(tc.in)
		}
		if ok != tc.ok || ok && (micros != tc.micros || n != want) {
			t.Errorf("ParseTime(%q, %#x) = %d, %d, %v, want %d, %d, %v", tc.in, tc.syn, micros, n, ok, tc.micros, want, tc.ok)
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	sql := ShortDate | SpaceSep
	iso := ShortDate | TSep | UTCSuffix
	for _, tc := range []struct {
		in     string
		syn    Syntax
		micros int64
		ok     bool
	}{
		{"2024-03-15 12:34:56.789", sql, wall(2024, 3, 15, 12, 34, 56, 789000), true},
		{"2024-3-5 01:02:03", sql, wall(2024, 3, 5, 1, 2, 3, 0), true},
		{"2024-03-15T12:34:56.789", sql, 0, false},
		{"2024-03-15 12:34:56.789Z", sql, 0, false},
		{"2024-03-15T12:34:56.789Z", iso, wall(2024, 3, 15, 12, 34, 56, 789000), true},
		{"2024-03-15T12:34:56z", iso, wall(2024, 3, 15, 12, 34, 56, 0), true},
		{"2024-03-15T12:34:56+00:00", iso, wall(2024, 3, 15, 12, 34, 56, 0), true},
		{"2024-03-15T12:34:56+0000", iso, wall(2024, 3, 15, 12, 34, 56, 0), true},
		{"2024-03-15T12:34:56+01:00", iso, 0, false},
		{"2024-03-15T12:34:56ZZ", iso, 0, false},
		{"2024-03-15T12:34", iso, wall(2024, 3, 15, 12, 34, 0, 0), true},
		{"2024-03-15", sql, 0, false},
		{"2024-03-15", CastSyntax, wall(2024, 3, 15, 0, 0, 0, 0), true},
		{"2024-03-15 ", CastSyntax, 0, false},
		{"2024-03-15T1:2:3.123456789", CastSyntax, wall(2024, 3, 15, 1, 2, 3, 123456), true},
		{"2024-03-15 12:34:56.1234567891", CastSyntax, 0, false},
		{"2024 12:00", CastSyntax, wall(2024, 1, 1, 12, 0, 0, 0), true},
		{"-1-12-31 23:59:59", CastSyntax, wall(-1, 12, 31, 23, 59, 59, 0), true},
		{"1969-12-31 23:59:59.999999", sql, -1, true},
		{"2024-02-30 00:00:00", sql, 0, false},
		{"2024-03-15 24:00:00", CastSyntax, 0, false},
		{"2024-03-15  12:00", CastSyntax, 0, false},
		{"2024-03-15X12:00", CastSyntax, 0, false},
		{"", CastSyntax, 0, false},
	} {
		micros, ok := ParseTimestamp(tc.in, tc.syn)
		if ok != tc.ok || ok && micros != tc.micros {
			t.Errorf("ParseTimestamp(%q, %#x) = %d, %v, want %d, %v", tc.in, tc.syn, micros, ok, tc.micros, tc.ok)
		}
		if bm, bok := ParseTimestamp([]byte(tc.in), tc.syn); bm != micros || bok != ok {
			t.Errorf("ParseTimestamp([]byte(%q)) differs from the string form", tc.in)
		}
	}
}

func TestAppendTemporal(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{string(AppendDate(nil, 0)), "1970-01-01"},
		{string(AppendDate(nil, DaysFromCivil(2024, 2, 29))), "2024-02-29"},
		{string(AppendDate(nil, DaysFromCivil(12, 3, 4))), "0012-03-04"},
		{string(AppendDate(nil, DaysFromCivil(0, 1, 1))), "0000-01-01"},
		{string(AppendDate(nil, DaysFromCivil(-1, 1, 1))), "-0001-01-01"},
		{string(AppendDate(nil, DaysFromCivil(12345, 1, 1))), "12345-01-01"},
		{string(AppendTime(nil, 0, 0)), "00:00:00"},
		{string(AppendTime(nil, -1, 0)), "23:59:59.999999"},
		{string(AppendTime(nil, 3_723_000_000, 0)), "01:02:03"},
		{string(AppendTime(nil, 3_723_000_000, 3)), "01:02:03.000"},
		{string(AppendTime(nil, 3_723_120_000, 0)), "01:02:03.12"},
		{string(AppendTime(nil, 3_723_120_000, 3)), "01:02:03.120"},
		{string(AppendTime(nil, 3_723_123_456, 3)), "01:02:03.123456"},
		{string(AppendTime(nil, 3_723_100_000, 9)), "01:02:03.100000000"},
		{string(AppendTimestamp(nil, wall(2024, 3, 15, 12, 34, 56, 789000), ' ', 0)), "2024-03-15 12:34:56.789"},
		{string(AppendTimestamp(nil, wall(2024, 3, 15, 12, 34, 56, 0), 'T', 0)), "2024-03-15T12:34:56"},
		{string(AppendTimestamp(nil, -1, ' ', 0)), "1969-12-31 23:59:59.999999"},
		{string(AppendFraction(nil, 0, 0)), ""},
		{string(AppendFraction(nil, 1, 0)), ".000001"},
		{string(AppendFraction(nil, 500000, 1)), ".5"},
		{string(AppendFraction(nil, 0, 2)), ".00"},
		{FormatTimestamp(wall(2024, 1, 2, 3, 4, 5, 678901), 3), "2024-01-02 03:04:05.678"},
		{FormatTimestamp(wall(2024, 1, 2, 3, 4, 5, 678901), 0), "2024-01-02 03:04:05"},
		{FormatTimestamp(wall(2024, 1, 2, 3, 4, 5, 0), 3), "2024-01-02 03:04:05.000"},
		{FormatTimestamp(wall(2024, 1, 2, 3, 4, 5, 678901), 9), "2024-01-02 03:04:05.678901000"},
		{FormatTimestamp(-1, 3), "1969-12-31 23:59:59.999"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestTemporalRoundTrip(t *testing.T) {
	for _, days := range []int64{-719528, -1, 0, 1, 19782, 2932896} {
		b := AppendDate(nil, days)
		if got, n, ok := ParseDate(b, 0); !ok || n != len(b) || got != days {
			t.Errorf("date %d -> %s -> %d %v", days, b, got, ok)
		}
	}
	for _, micros := range []int64{-1, 0, 1_704_164_645_678_000, 253_402_300_799_999_999} {
		b := AppendTimestamp(nil, micros, ' ', 0)
		if got, ok := ParseTimestamp(b, SpaceSep); !ok || got != micros {
			t.Errorf("timestamp %d -> %s -> %d %v", micros, b, got, ok)
		}
	}
}

// Parsing and printing the timestamp of a JSON or CSV record allocates nothing.
func TestTemporalAllocs(t *testing.T) {
	in := []byte("2024-03-15T12:34:56.789Z")
	buf := make([]byte, 0, 64)
	n := testing.AllocsPerRun(100, func() {
		micros, ok := ParseTimestamp(in, TSep|UTCSuffix)
		if !ok {
			t.Fatal("not parsed")
		}
		buf = AppendTimestamp(buf[:0], micros, 'T', 0)
	})
	if n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}

func BenchmarkParseTimestamp(b *testing.B) {
	in := []byte("2024-03-15 12:34:56.789")
	for b.Loop() {
		if _, ok := ParseTimestamp(in, ShortDate|SpaceSep); !ok {
			b.Fatal("not parsed")
		}
	}
}

func BenchmarkAppendTimestamp(b *testing.B) {
	buf := make([]byte, 0, 32)
	micros := wall(2024, 3, 15, 12, 34, 56, 789000)
	for b.Loop() {
		buf = AppendTimestamp(buf[:0], micros, ' ', 0)
	}
}
