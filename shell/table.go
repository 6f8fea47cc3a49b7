package shell

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// PrintBoxed prints rows as Flink's SQL client does, with +---+ borders.
func PrintBoxed(w io.Writer, header []string, rows [][]string) {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	border := borderLine(widths)
	fmt.Fprintln(w, border)
	fmt.Fprintln(w, boxedRow(widths, header))
	fmt.Fprintln(w, border)
	for _, row := range rows {
		fmt.Fprintln(w, boxedRow(widths, row))
	}
	if len(rows) > 0 {
		fmt.Fprintln(w, border)
	}
}

func borderLine(widths []int) string {
	var b strings.Builder
	b.WriteString("+")
	for _, w := range widths {
		b.WriteString(strings.Repeat("-", w+2))
		b.WriteString("+")
	}
	return b.String()
}

func boxedRow(widths []int, cells []string) string {
	var b strings.Builder
	b.WriteString("|")
	for i, w := range widths {
		cell := ""
		if i < len(cells) {
			cell = cells[i]
		}
		b.WriteString(" ")
		b.WriteString(strings.Repeat(" ", w-utf8.RuneCountInString(cell)))
		b.WriteString(cell)
		b.WriteString(" |")
	}
	return b.String()
}

// tableau prints a streaming result as an appended text table with an op column, like
// Flink's tableau result mode. Column widths come from the types, since rows arrive one
// at a time and the header is printed first.
type tableau struct {
	w      io.Writer
	names  []string
	widths []int
	rows   int
}

func newTableau(w io.Writer, schema types.Schema) *tableau {
	t := &tableau{w: w, names: append([]string{"op"}, schema.Names()...)}
	t.widths = append(t.widths, 2)
	for _, c := range schema {
		t.widths = append(t.widths, max(utf8.RuneCountInString(c.Name), typeWidth(c.Type)))
	}
	return t
}

// typeWidth is the display width Flink's tableau uses for a column of type t.
func typeWidth(t types.Type) int {
	switch t.Kind {
	case types.Boolean:
		return 5
	case types.TinyInt:
		return 4
	case types.SmallInt:
		return 6
	case types.Int:
		return 11
	case types.BigInt:
		return 20
	case types.Float, types.Double, types.Decimal:
		return 20
	case types.Date:
		return 10
	case types.Time:
		return 8
	case types.Timestamp, types.TimestampLTZ:
		return 23
	case types.Char, types.Varchar:
		if t.Length > 0 && t.Length < 30 {
			return t.Length
		}
	}
	return 30
}

func (t *tableau) header() {
	fmt.Fprintln(t.w, borderLine(t.widths))
	fmt.Fprintln(t.w, boxedRow(t.widths, t.names))
	fmt.Fprintln(t.w, borderLine(t.widths))
}

func (t *tableau) row(kind connectors.RowKind, row types.Row) {
	cells := make([]string, 0, len(row)+1)
	cells = append(cells, kind.String())
	for i, v := range row {
		s := "<NULL>"
		if !v.IsNull() {
			s = v.String()
		}
		if w := t.widths[i+1]; utf8.RuneCountInString(s) > w {
			s = string([]rune(s)[:w-3]) + "..."
		}
		cells = append(cells, s)
	}
	fmt.Fprintln(t.w, boxedRow(t.widths, cells))
	t.rows++
}

func (t *tableau) footer() {
	if t.rows > 0 {
		fmt.Fprintln(t.w, borderLine(t.widths))
	}
	switch t.rows {
	case 0:
		fmt.Fprintln(t.w, "Empty set")
	case 1:
		fmt.Fprintln(t.w, "Received a total of 1 row")
	default:
		fmt.Fprintf(t.w, "Received a total of %d rows\n", t.rows)
	}
}
