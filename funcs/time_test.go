package funcs

import (
	"math"
	"testing"

	"github.com/pipesql/pipesql/types"
)

func TestFloorCeilTime(t *testing.T) {
	sh := mustZone(t, "Asia/Shanghai")
	ny := mustZone(t, "America/New_York")
	tm := func(h, m, sec int) types.Value {
		return types.TimeValue(int64(h)*microsPerHour + int64(m)*microsPerMinute + int64(sec)*microsPerSecond)
	}
	runCases(t, ctxIn(sh), []valueCase{
		// A Shanghai day starts at 16:00 UTC of the day before.
		{"FLOOR", []types.Value{ltz(2024, 3, 9, 20, 0, 0, 0), s("DAY")}, ltz(2024, 3, 9, 16, 0, 0, 0), nil},
		{"FLOOR", []types.Value{ltz(2024, 3, 9, 15, 59, 59, 999999), s("DAY")}, ltz(2024, 3, 8, 16, 0, 0, 0), nil},
		{"FLOOR", []types.Value{ltz(2024, 3, 9, 16, 0, 0, 0), s("DAY")}, ltz(2024, 3, 9, 16, 0, 0, 0), nil},
		{"CEIL", []types.Value{ltz(2024, 3, 9, 20, 0, 0, 0), s("DAY")}, ltz(2024, 3, 10, 16, 0, 0, 0), nil},
		{"FLOOR", []types.Value{ltz(2024, 3, 9, 20, 0, 0, 0), s("month")}, ltz(2024, 2, 29, 16, 0, 0, 0), nil},
		// TIMESTAMP is a wall clock: the zone does not matter.
		{"FLOOR", []types.Value{ts(2024, 3, 9, 20, 30, 0, 0), s("DAY")}, ts(2024, 3, 9, 0, 0, 0, 0), nil},
		{"FLOOR", []types.Value{ts(2024, 3, 9, 20, 31, 15, 5), s("MINUTE")}, ts(2024, 3, 9, 20, 31, 0, 0), nil},
		{"FLOOR", []types.Value{ts(2024, 3, 9, 20, 31, 15, 5), s("HOURS")}, ts(2024, 3, 9, 20, 0, 0, 0), nil},
		{"FLOOR", []types.Value{ts(2024, 3, 9, 20, 31, 15, 5), s("SECOND")}, ts(2024, 3, 9, 20, 31, 15, 0), nil},
		{"FLOOR", []types.Value{ts(2024, 3, 9, 20, 31, 15, 5678), s("MILLISECOND")}, ts(2024, 3, 9, 20, 31, 15, 5000), nil},
		{"FLOOR", []types.Value{ts(2024, 3, 9, 20, 0, 0, 0), s("WEEK")}, ts(2024, 3, 3, 0, 0, 0, 0), nil}, // Sunday
		{"CEIL", []types.Value{ts(2024, 3, 9, 20, 0, 0, 0), s("WEEK")}, ts(2024, 3, 10, 0, 0, 0, 0), nil},
		{"FLOOR", []types.Value{ts(2024, 8, 9, 20, 0, 0, 0), s("QUARTER")}, ts(2024, 7, 1, 0, 0, 0, 0), nil},
		{"FLOOR", []types.Value{ts(2024, 8, 9, 20, 0, 0, 0), s("YEAR")}, ts(2024, 1, 1, 0, 0, 0, 0), nil},
		{"CEIL", []types.Value{ts(2024, 1, 31, 10, 0, 0, 0), s("MONTH")}, ts(2024, 2, 1, 0, 0, 0, 0), nil},
		{"CEIL", []types.Value{ts(2024, 2, 1, 0, 0, 0, 0), s("MONTH")}, ts(2024, 2, 1, 0, 0, 0, 0), nil},
		{"CEIL", []types.Value{ts(2024, 12, 31, 0, 0, 0, 0), s("YEAR")}, ts(2025, 1, 1, 0, 0, 0, 0), nil},
		{"FLOOR", []types.Value{ts(1969, 12, 31, 23, 30, 0, 0), s("HOUR")}, ts(1969, 12, 31, 23, 0, 0, 0), nil},
		{"FLOOR", []types.Value{ts(2024, 8, 9, 0, 0, 0, 0), s("DECADE")}, ts(2020, 1, 1, 0, 0, 0, 0), nil},
		{"FLOOR", []types.Value{date(2024, 8, 9), s("MONTH")}, date(2024, 8, 1), nil},
		{"CEIL", []types.Value{date(2024, 8, 9), s("MONTH")}, date(2024, 9, 1), nil},
		{"FLOOR", []types.Value{date(2024, 8, 9), s("HOUR")}, date(2024, 8, 9), nil},
		{"FLOOR", []types.Value{tm(12, 44, 31), s("MINUTE")}, tm(12, 44, 0), nil},
		{"CEIL", []types.Value{tm(12, 44, 31), s("MINUTE")}, tm(12, 45, 0), nil},
		{"FLOOR", []types.Value{null, s("DAY")}, null, nil},
		{"FLOOR", []types.Value{ts(2024, 1, 1, 0, 0, 0, 0), s("FORTNIGHT")}, null, ErrInvalidArgument},
		{"FLOOR", []types.Value{ts(2024, 1, 1, 0, 0, 0, 0), s("DOW")}, null, ErrInvalidArgument},
	})
	// New York springs forward on 2024-03-10: that day is 23 hours long and starts at 05:00 UTC.
	runCases(t, ctxIn(ny), []valueCase{
		{"FLOOR", []types.Value{ltz(2024, 3, 10, 16, 0, 0, 0), s("DAY")}, ltz(2024, 3, 10, 5, 0, 0, 0), nil},
		{"CEIL", []types.Value{ltz(2024, 3, 10, 16, 0, 0, 0), s("DAY")}, ltz(2024, 3, 11, 4, 0, 0, 0), nil},
		{"FLOOR", []types.Value{ltz(2024, 3, 10, 7, 30, 0, 0), s("HOUR")}, ltz(2024, 3, 10, 7, 0, 0, 0), nil},
	})
}

func TestDateFormat(t *testing.T) {
	sh := mustZone(t, "Asia/Shanghai")
	at := ts(2024, 3, 9, 14, 5, 6, 789000)   // a Saturday
	inst := ltz(2024, 3, 9, 6, 5, 6, 789000) // the same wall clock in Shanghai
	patterns := map[string]string{
		"yyyy-MM-dd HH:mm:ss":             "2024-03-09 14:05:06",
		"yy/M/d h:m:s a":                  "24/3/9 2:5:6 PM",
		"EEE, d MMM yyyy":                 "Sat, 9 Mar 2024",
		"EEEE MMMM":                       "Saturday March",
		"yyyy-MM-dd'T'HH:mm:ss.SSS":       "2024-03-09T14:05:06.789",
		"hh 'o''clock' a":                 "02 o'clock PM",
		"D DDD":                           "69 069",
		"S SSSSSS":                        "7 789000",
		"Q QQQ G k K":                     "1 Q1 AD 14 2",
		"yyyyMMddHHmmss":                  "20240309140506",
		"[yyyy]":                          "2024",
		"'literal only'":                  "literal only",
		"uuuu-MM-dd'T'HH:mm:ss.SSSSSSSSS": "2024-03-09T14:05:06.789000000",
	}
	for p, want := range patterns {
		runCases(t, ctxIn(sh), []valueCase{
			{"DATE_FORMAT", []types.Value{at, s(p)}, s(want), nil},
			{"DATE_FORMAT", []types.Value{inst, s(p)}, s(want), nil},
		})
	}
	runCases(t, ctxIn(sh), []valueCase{
		{"DATE_FORMAT", []types.Value{inst, s("z Z X XXX xx VV O ZZZZ ZZZZZ")}, s("CST +0800 +08 +08:00 +0800 Asia/Shanghai GMT+8 GMT+08:00 +08:00"), nil},
		{"DATE_FORMAT", []types.Value{at, s("X Z xxx")}, s("Z +0000 +00:00"), nil},
		{"DATE_FORMAT", []types.Value{s("2024-03-09 14:05:06"), s("yyyyMMdd")}, s("20240309"), nil},
		{"DATE_FORMAT", []types.Value{s("2024-03-09 14:05:06.123"), s("HH")}, s("14"), nil},
		{"DATE_FORMAT", []types.Value{s("not a date"), s("yyyy")}, null, nil},
		{"DATE_FORMAT", []types.Value{date(2024, 3, 9), s("dd/MM/yyyy")}, s("09/03/2024"), nil},
		{"DATE_FORMAT", []types.Value{null, s("yyyy")}, null, nil},
		{"DATE_FORMAT", []types.Value{at, null}, null, nil},
		{"DATE_FORMAT", []types.Value{ts(-44, 3, 15, 0, 0, 0, 0), s("yyyy G")}, s("0045 BC"), nil},
		{"DATE_FORMAT", []types.Value{at, s("yyyy ww")}, null, ErrInvalidArgument},
	})
}

func TestParsingFunctions(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	runCases(t, ctxIn(berlin), []valueCase{
		{"TO_TIMESTAMP", []types.Value{s("2024-03-09 14:05:06")}, ts(2024, 3, 9, 14, 5, 6, 0), nil},
		{"TO_TIMESTAMP", []types.Value{s("2024-03-09 14:05:06.123456")}, ts(2024, 3, 9, 14, 5, 6, 123000), nil},
		{"TO_TIMESTAMP", []types.Value{s("09/03/2024 14:05"), s("dd/MM/yyyy HH:mm")}, ts(2024, 3, 9, 14, 5, 0, 0), nil},
		{"TO_TIMESTAMP", []types.Value{s("20240309"), s("yyyyMMdd")}, ts(2024, 3, 9, 0, 0, 0, 0), nil},
		{"TO_TIMESTAMP", []types.Value{s("1999-9-10 05:20:10"), s("yyyy-MM-dd HH:mm:ss")}, ts(1999, 9, 10, 5, 20, 10, 0), nil},
		{"TO_TIMESTAMP", []types.Value{s("2024-03-09 14:05:06.123456"), s("yyyy-MM-dd HH:mm:ss.SSSSSS")}, ts(2024, 3, 9, 14, 5, 6, 123000), nil},
		{"TO_TIMESTAMP", []types.Value{s("2024-03-09 02:05 PM"), s("yyyy-MM-dd hh:mm a")}, ts(2024, 3, 9, 14, 5, 0, 0), nil},
		{"TO_TIMESTAMP", []types.Value{s("2024-03-09 12:05 AM"), s("yyyy-MM-dd hh:mm a")}, ts(2024, 3, 9, 0, 5, 0, 0), nil},
		{"TO_TIMESTAMP", []types.Value{s("Sat, 9 Mar 2024"), s("EEE, d MMM yyyy")}, ts(2024, 3, 9, 0, 0, 0, 0), nil},
		{"TO_TIMESTAMP", []types.Value{s("garbage")}, null, nil},
		{"TO_TIMESTAMP", []types.Value{s("2024-02-30 00:00:00")}, null, nil},
		{"TO_TIMESTAMP", []types.Value{s("2024-03-09 14:05:06 trailing"), s("yyyy-MM-dd HH:mm:ss")}, null, nil},
		{"TO_DATE", []types.Value{s("2024-03-09")}, date(2024, 3, 9), nil},
		{"TO_DATE", []types.Value{s("09.03.2024"), s("dd.MM.yyyy")}, date(2024, 3, 9), nil},
		{"TO_DATE", []types.Value{s("x"), s("dd.MM.yyyy")}, null, nil},
		// Flink's documented examples, in Europe/Berlin.
		{"UNIX_TIMESTAMP", []types.Value{s("1970-01-01 08:00:01.001"), s("yyyy-MM-dd HH:mm:ss.SSS")}, i64(25201), nil},
		{"UNIX_TIMESTAMP", []types.Value{s("1970-01-01 08:00:01.001 +0800"), s("yyyy-MM-dd HH:mm:ss.SSS X")}, i64(1), nil},
		{"UNIX_TIMESTAMP", []types.Value{s("1970-01-01 08:00:01.001 +0800"), s("yyyy-MM-dd HH:mm:ss.SSS")}, i64(25201), nil},
		{"UNIX_TIMESTAMP", []types.Value{s("1970-01-01 08:00:01.001"), s("yyyy-MM-dd HH:mm:ss.SSS X")}, i64(math.MinInt64), nil},
		{"UNIX_TIMESTAMP", []types.Value{s("1970-01-01 01:00:00")}, i64(0), nil},
		{"UNIX_TIMESTAMP", []types.Value{null}, null, nil},
		{"TO_TIMESTAMP_LTZ", []types.Value{i64(1), i32(0)}, ltz(1970, 1, 1, 0, 0, 1, 0), nil},
		{"TO_TIMESTAMP_LTZ", []types.Value{i64(1500), i32(3)}, ltz(1970, 1, 1, 0, 0, 1, 500000), nil},
		{"TO_TIMESTAMP_LTZ", []types.Value{i64(1500)}, ltz(1970, 1, 1, 0, 0, 1, 500000), nil},
		{"TO_TIMESTAMP_LTZ", []types.Value{f64(1.5), i32(0)}, ltz(1970, 1, 1, 0, 0, 1, 500000), nil},
		{"TO_TIMESTAMP_LTZ", []types.Value{dec("-1.25"), i32(0)}, ltz(1969, 12, 31, 23, 59, 58, 750000), nil},
		{"TO_TIMESTAMP_LTZ", []types.Value{i64(math.MaxInt64), i32(0)}, null, nil},
		{"TO_TIMESTAMP_LTZ", []types.Value{i64(1), i32(6)}, null, ErrInvalidArgument},
		{"TO_TIMESTAMP_LTZ", []types.Value{s("1970-01-01 01:00:00")}, ltz(1970, 1, 1, 0, 0, 0, 0), nil},
		{"TO_TIMESTAMP_LTZ", []types.Value{s("01/01/1970 08:00"), s("dd/MM/yyyy HH:mm"), s("Asia/Shanghai")}, ltz(1970, 1, 1, 0, 0, 0, 0), nil},
		{"CONVERT_TZ", []types.Value{s("1970-01-01 00:00:00"), s("UTC"), s("America/Los_Angeles")}, s("1969-12-31 16:00:00"), nil},
		{"CONVERT_TZ", []types.Value{s("1970-01-01 00:00:00"), s("GMT+08:00"), s("UTC")}, s("1969-12-31 16:00:00"), nil},
		{"CONVERT_TZ", []types.Value{s("1970-01-01 00:00:00"), s("Mars/Olympus"), s("UTC")}, null, ErrInvalidArgument},
	})
	tokyo := mustZone(t, "Asia/Tokyo")
	runCases(t, ctxIn(nil), []valueCase{{"FROM_UNIXTIME", []types.Value{i64(44)}, s("1970-01-01 00:00:44"), nil}})
	runCases(t, ctxIn(tokyo), []valueCase{
		{"FROM_UNIXTIME", []types.Value{i64(44)}, s("1970-01-01 09:00:44"), nil},
		{"FROM_UNIXTIME", []types.Value{i64(44), s("HH:mm:ss z")}, s("09:00:44 JST"), nil},
	})
}

func TestExtract(t *testing.T) {
	sh := mustZone(t, "Asia/Shanghai")
	d := date(1994, 9, 27)
	at := ts(1994, 9, 27, 13, 14, 15, 789000)
	runCases(t, ctxIn(sh), []valueCase{
		{"EXTRACT", []types.Value{s("DAY"), date(2006, 6, 5)}, i64(5), nil},
		{"YEAR", []types.Value{d}, i64(1994), nil},
		{"QUARTER", []types.Value{d}, i64(3), nil},
		{"MONTH", []types.Value{d}, i64(9), nil},
		{"WEEK", []types.Value{d}, i64(39), nil},
		{"DAYOFYEAR", []types.Value{d}, i64(270), nil},
		{"DAYOFMONTH", []types.Value{d}, i64(27), nil},
		{"DAYOFWEEK", []types.Value{d}, i64(3), nil},
		{"HOUR", []types.Value{at}, i64(13), nil},
		{"MINUTE", []types.Value{at}, i64(14), nil},
		{"SECOND", []types.Value{at}, i64(15), nil},
		{"EXTRACT", []types.Value{s("MILLISECOND"), at}, i64(15789), nil},
		{"EXTRACT", []types.Value{s("DOW"), date(2024, 3, 10)}, i64(1), nil},
		{"EXTRACT", []types.Value{s("ISODOW"), date(2024, 3, 10)}, i64(7), nil},
		{"EXTRACT", []types.Value{s("EPOCH"), ts(1970, 1, 2, 0, 0, 0, 0)}, i64(86400), nil},
		{"EXTRACT", []types.Value{s("EPOCH"), ltz(1970, 1, 2, 0, 0, 0, 0)}, i64(86400), nil},
		{"EXTRACT", []types.Value{s("HOUR"), ltz(2024, 1, 1, 20, 0, 0, 0)}, i64(4), nil},
		{"EXTRACT", []types.Value{s("DAY"), ltz(2024, 1, 1, 20, 0, 0, 0)}, i64(2), nil},
		{"EXTRACT", []types.Value{s("CENTURY"), date(2000, 1, 1)}, i64(20), nil},
		{"EXTRACT", []types.Value{s("CENTURY"), date(2001, 1, 1)}, i64(21), nil},
		{"EXTRACT", []types.Value{s("DAY"), dt(2*microsPerDay + 3*microsPerHour)}, i64(2), nil},
		{"EXTRACT", []types.Value{s("HOUR"), dt(2*microsPerDay + 3*microsPerHour)}, i64(3), nil},
		{"EXTRACT", []types.Value{s("YEAR"), ym(14)}, i64(1), nil},
		{"EXTRACT", []types.Value{s("MONTH"), ym(14)}, i64(2), nil},
		{"EXTRACT", []types.Value{s("DAY"), null}, null, nil},
	})
}

func TestTimestampAddDiff(t *testing.T) {
	sh := mustZone(t, "Asia/Shanghai")
	runCases(t, ctxIn(sh), []valueCase{
		{"TIMESTAMPADD", []types.Value{s("MONTH"), i32(1), ts(2024, 1, 31, 10, 0, 0, 0)}, ts(2024, 2, 29, 10, 0, 0, 0), nil},
		{"TIMESTAMPADD", []types.Value{s("YEAR"), i32(-1), ts(2024, 2, 29, 10, 0, 0, 0)}, ts(2023, 2, 28, 10, 0, 0, 0), nil},
		{"TIMESTAMPADD", []types.Value{s("HOUR"), i32(-2), ts(2024, 1, 1, 1, 0, 0, 0)}, ts(2023, 12, 31, 23, 0, 0, 0), nil},
		{"TIMESTAMPADD", []types.Value{s("WEEK"), i32(1), date(2024, 2, 25)}, date(2024, 3, 3), nil},
		{"TIMESTAMPADD", []types.Value{s("DAY"), i32(1), ltz(2024, 1, 1, 0, 0, 0, 0)}, ltz(2024, 1, 2, 0, 0, 0, 0), nil},
		{"TIMESTAMPADD", []types.Value{s("DAY"), null, ts(2024, 1, 1, 0, 0, 0, 0)}, null, nil},
		{"TIMESTAMPDIFF", []types.Value{s("DAY"), ts(2003, 1, 2, 10, 0, 0, 0), ts(2003, 1, 3, 10, 0, 0, 0)}, i32(1), nil},
		{"TIMESTAMPDIFF", []types.Value{s("DAY"), ts(2003, 1, 3, 10, 0, 0, 0), ts(2003, 1, 2, 11, 0, 0, 0)}, i32(0), nil},
		{"TIMESTAMPDIFF", []types.Value{s("HOUR"), ts(2003, 1, 3, 10, 0, 0, 0), ts(2003, 1, 2, 9, 0, 0, 0)}, i32(-25), nil},
		{"TIMESTAMPDIFF", []types.Value{s("MONTH"), date(2003, 1, 2), date(2003, 3, 1)}, i32(1), nil},
		{"TIMESTAMPDIFF", []types.Value{s("MONTH"), date(2003, 1, 31), date(2003, 2, 28)}, i32(1), nil},
		{"TIMESTAMPDIFF", []types.Value{s("MONTH"), ts(2003, 1, 31, 12, 0, 0, 0), ts(2003, 2, 28, 11, 0, 0, 0)}, i32(0), nil},
		{"TIMESTAMPDIFF", []types.Value{s("YEAR"), date(2000, 2, 29), date(2024, 2, 28)}, i32(23), nil},
		{"TIMESTAMPDIFF", []types.Value{s("QUARTER"), date(2024, 3, 31), date(2023, 3, 31)}, i32(-4), nil},
		{"TIMESTAMPDIFF", []types.Value{s("SECOND"), ltz(2024, 1, 1, 0, 0, 0, 0), ts(2024, 1, 1, 8, 0, 1, 0)}, i32(1), nil},
	})
}

func TestCurrentTime(t *testing.T) {
	sh := mustZone(t, "Asia/Shanghai")
	la := mustZone(t, "America/Los_Angeles")
	runCases(t, ctxIn(sh), []valueCase{
		{"CURRENT_TIMESTAMP", nil, ltz(2024, 3, 10, 1, 2, 3, 456000), nil},
		{"NOW", nil, ltz(2024, 3, 10, 1, 2, 3, 456000), nil},
		{"PROCTIME", nil, ltz(2024, 3, 10, 1, 2, 3, 456000), nil},
		{"LOCALTIMESTAMP", nil, ts(2024, 3, 10, 9, 2, 3, 456000), nil},
		{"CURRENT_DATE", nil, date(2024, 3, 10), nil},
		{"CURRENT_TIME", nil, types.TimeValue(9*microsPerHour + 2*microsPerMinute + 3*microsPerSecond), nil},
		{"UNIX_TIMESTAMP", nil, i64(1710032523), nil},
	})
	runCases(t, ctxIn(la), []valueCase{{"CURRENT_DATE", nil, date(2024, 3, 9), nil}})
}
