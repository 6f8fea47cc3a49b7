package formats

import (
	"strconv"

	"github.com/pipesql/pipesql/types"
)

// Dates and times are parsed and printed by types (ParseDate, ParseTime,
// ParseTimestamp, AppendDate, AppendTimestamp) rather than with time.Parse: this is
// the hot path of every event, the formats are fixed (Flink's SQL_TIMESTAMP_FORMAT and
// ISO_LOCAL_DATE_TIME), and types reads the []byte of a record without allocating.

const microsPerSecond = 1_000_000

// dateSyntax is what both formats accept for a DATE: yyyy-MM-dd with a four-digit year,
// the month and day of one or two digits, as java.sql.Date.valueOf accepts them.
const dateSyntax = types.ShortDate

// timestampSyntax is a DATE, sep (' ' for Flink's SQL format, 'T' for ISO-8601), a
// two-digit HH:mm[:ss[.fffffffff]] and, when utc, an optional Z or +00:00 zone.
func timestampSyntax(sep byte, utc bool) types.Syntax {
	syn := dateSyntax | types.SpaceSep
	if sep == 'T' {
		syn = dateSyntax | types.TSep
	}
	if utc {
		syn |= types.UTCSuffix
	}
	return syn
}

// parseDate reads a DATE that is all of b.
func parseDate(b []byte) (int64, bool) {
	days, n, ok := types.ParseDate(b, dateSyntax)
	return days, ok && n == len(b)
}

func appendPadded(dst []byte, n int64, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], n, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}
