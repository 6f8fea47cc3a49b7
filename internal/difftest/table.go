package difftest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"
)

// Type is a SQL type the generator uses.
type Type uint8

// The generator's types.
const (
	TInt Type = iota
	TBigInt
	TDouble
	TString
	TBool
	TTimestamp
	TDecimal // DECIMAL(10, 2) in the table; wider in expressions
	TLtz     // TIMESTAMP_LTZ(3): only the event time and windows over it
	TDate    // in expressions only
)

// Flink is the type's name in Flink SQL.
func (t Type) Flink() string {
	return [...]string{"INT", "BIGINT", "DOUBLE", "STRING", "BOOLEAN", "TIMESTAMP(3)", "DECIMAL(10, 2)", "TIMESTAMP_LTZ(3)", "DATE"}[t]
}

// Duck is the type's name in DuckDB.
func (t Type) Duck() string {
	return [...]string{"INTEGER", "BIGINT", "DOUBLE", "VARCHAR", "BOOLEAN", "TIMESTAMP", "DECIMAL(10,2)", "TIMESTAMP", "DATE"}[t]
}

func (t Type) numeric() bool { return t == TInt || t == TBigInt || t == TDouble || t == TDecimal }

// cents is a DECIMAL(10, 2) value of a generated row.
type cents int64

func (c cents) String() string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

// Column is one column of a generated table or query.
type Column struct {
	Name string
	Type Type
	// Computed is the Flink expression of a computed column (ts AS TO_TIMESTAMP_LTZ(ems, 3))
	// and Duck the same in DuckDB; such a column is not in the files.
	Computed, Duck string
}

// Table is a generated table: its columns (the last is the event time ts) and rows.
type Table struct {
	Name    string
	Columns []Column
	Rows    [][]any // nil is NULL; int64, float64, string, bool, time.Time
	// Delay is the watermark delay; rows are out of order by less than it, so that no
	// row is late for a window.
	Delay time.Duration
	// Format is json or csv; the rows are written to Files files in name order, each
	// a stretch of time after the one before, so that no split's rows are late for the
	// watermark of the splits read before it.
	Format string
	Files  int
	Dir    string   // the directory pipesql reads
	Paths  []string // the files in Dir
	// Zone is table.local-time-zone when the event time is a TIMESTAMP_LTZ computed from
	// epoch milliseconds (as in the DAU job), "" when it is a TIMESTAMP; ZoneOffset is
	// its fixed offset from UTC.
	Zone       string
	ZoneOffset time.Duration
}

// zones have fixed offsets, so that DuckDB can align windows by arithmetic.
var zones = []struct {
	name   string
	offset time.Duration
}{{"UTC", 0}, {"Asia/Shanghai", 8 * time.Hour}, {"Asia/Kolkata", 5*time.Hour + 30*time.Minute}, {"Asia/Kathmandu", 5*time.Hour + 45*time.Minute}, {"America/Bogota", -5 * time.Hour}}

// physical is the table's columns that are in its files.
func (t *Table) physical() []Column {
	var cs []Column
	for _, c := range t.Columns {
		if c.Computed == "" {
			cs = append(cs, c)
		}
	}
	return cs
}

// Alphabets small enough that groups collide; keys mixes case and the empty string.
var (
	keyWords  = []string{"a", "b", "c", "A", "B", "", "ab", " a", "é"}
	textChars = []rune("abAB _%xé")
)

// GenTable makes a random table named name with up to maxRows rows.
func GenTable(rng *rand.Rand, name string, maxRows int) *Table {
	t := &Table{
		Name: name,
		Columns: []Column{
			{Name: "k1", Type: TString}, {Name: "k2", Type: TInt}, {Name: "i", Type: TInt}, {Name: "j", Type: TInt}, {Name: "b", Type: TBigInt},
			{Name: "d", Type: TDouble}, {Name: "s", Type: TString}, {Name: "f", Type: TBool}, {Name: "m", Type: TDecimal},
			{Name: "ts", Type: TTimestamp},
		},
	}
	ltz := rng.IntN(3) == 0
	if ltz {
		z := zones[rng.IntN(len(zones))]
		t.Zone, t.ZoneOffset = z.name, z.offset
		t.Columns[len(t.Columns)-1] = Column{Name: "ems", Type: TBigInt}
		t.Columns = append(t.Columns, Column{Name: "ts", Type: TLtz, Computed: "TO_TIMESTAMP_LTZ(ems, 3)", Duck: "epoch_ms(ems)"})
	}
	switch rng.IntN(4) {
	case 0:
		t.Delay = 0 // then event time only grows
	case 1:
		t.Delay = time.Duration(1+rng.IntN(30)) * time.Second
	default:
		t.Delay = time.Duration(1+rng.IntN(10)) * time.Minute
	}
	n := rng.IntN(maxRows + 1)
	switch rng.IntN(20) {
	case 0, 1:
		n = rng.IntN(3) // empty and tiny inputs
	case 2:
		// more rows than a source poll and an operator batch hold, so that watermarks
		// advance and windows fire before the end of the input
		n = 2000 + rng.IntN(4000)
	}
	t.Format = []string{"json", "csv"}[rng.IntN(2)]
	t.Files = 1
	if rng.IntN(4) == 0 {
		t.Files = 2 + rng.IntN(3)
	}
	nullRate := []float64{0, 0.1, 0.3, 0.8}[rng.IntN(4)]
	start := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.IntN(24*60)) * time.Minute)
	at := start
	step := time.Duration(1+rng.IntN(180)) * time.Second
	for range n {
		at = at.Add(time.Millisecond + time.Duration(rng.Int64N(int64(2*step))))
		ts := at
		if t.Delay > 0 {
			// out of order by less than the delay: never late
			ts = at.Add(-time.Duration(rng.Int64N(int64(t.Delay))))
		}
		ts = ts.Truncate(time.Millisecond)
		if ts.Before(start) {
			ts = start
		}
		null := func() bool { return rng.Float64() < nullRate }
		row := make([]any, 10)
		if !null() {
			row[0] = keyWords[rng.IntN(len(keyWords))]
		}
		if !null() {
			row[1] = int64(rng.IntN(7) - 3)
		}
		if !null() {
			row[2] = int64(rng.IntN(201) - 100)
		}
		if !null() {
			row[3] = int64(rng.IntN(11) - 5)
		}
		if !null() {
			if rng.IntN(2) == 0 {
				row[4] = rng.Int64N(2e10) - 1e10
			} else {
				row[4] = rng.Int64N(21) - 10
			}
		}
		if !null() {
			row[5] = float64(rng.IntN(401)-200) / 4
		}
		if !null() {
			var b strings.Builder
			for range rng.IntN(5) {
				b.WriteRune(textChars[rng.IntN(len(textChars))])
			}
			row[6] = b.String()
		}
		if !null() {
			row[7] = rng.IntN(2) == 0
		}
		if !null() {
			row[8] = cents(rng.IntN(20001) - 10000)
		}
		row[9] = ts
		if ltz {
			row[9] = ts.UnixMilli()
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// Write writes the rows into a new directory under parent, in Files files.
func (t *Table) Write(parent string) error {
	dir, err := os.MkdirTemp(parent, t.Name+"-")
	if err != nil {
		return err
	}
	t.Dir, t.Paths = dir, nil
	for f := range t.Files {
		lo, hi := len(t.Rows)*f/t.Files, len(t.Rows)*(f+1)/t.Files
		var b strings.Builder
		for _, row := range t.Rows[lo:hi] {
			var err error
			if t.Format == "csv" {
				err = t.csvLine(&b, row)
			} else {
				err = t.jsonLine(&b, row)
			}
			if err != nil {
				return err
			}
		}
		path := fmt.Sprintf("%s/part-%d.%s", dir, f, t.Format)
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			return err
		}
		t.Paths = append(t.Paths, path)
	}
	return nil
}

func (t *Table) jsonLine(b *strings.Builder, row []any) error {
	b.WriteByte('{')
	for i, c := range t.physical() {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, "%q:", c.Name)
		switch v := row[i].(type) {
		case nil:
			b.WriteString("null")
		case time.Time:
			fmt.Fprintf(b, "%q", v.Format("2006-01-02 15:04:05.000"))
		case cents:
			b.WriteString(v.String())
		default:
			j, err := json.Marshal(v)
			if err != nil {
				return err
			}
			b.Write(j)
		}
	}
	b.WriteString("}\n")
	return nil
}

// csvNull is the CSV text of NULL; strings are quoted, so the empty string is "".
const csvNull = `\N`

func (t *Table) csvLine(b *strings.Builder, row []any) error {
	for i := range t.physical() {
		if i > 0 {
			b.WriteByte(',')
		}
		switch v := row[i].(type) {
		case nil:
			b.WriteString(csvNull)
		case time.Time:
			b.WriteString(v.Format("2006-01-02 15:04:05.000"))
		case string:
			b.WriteString(`"` + strings.ReplaceAll(v, `"`, `""`) + `"`)
		case float64:
			b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
		case cents:
			b.WriteString(v.String())
		default:
			fmt.Fprint(b, v)
		}
	}
	b.WriteString("\n")
	return nil
}

// Settings is the SET statements the table's queries run with.
func (t *Table) Settings() string {
	if t.Zone == "" {
		return ""
	}
	return fmt.Sprintf("SET 'table.local-time-zone' = '%s';\n", t.Zone)
}

// DDL is the Flink CREATE TABLE over the table's directory.
func (t *Table) DDL() string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n", t.Name)
	for _, c := range t.Columns {
		if c.Computed != "" {
			fmt.Fprintf(&b, "  %s AS %s,\n", c.Name, c.Computed)
			continue
		}
		fmt.Fprintf(&b, "  %s %s,\n", c.Name, c.Type.Flink())
	}
	switch {
	case t.Delay == 0:
		b.WriteString("  WATERMARK FOR ts AS ts\n")
	case t.Delay%time.Minute == 0:
		fmt.Fprintf(&b, "  WATERMARK FOR ts AS ts - INTERVAL '%d' MINUTE\n", int(t.Delay.Minutes()))
	default:
		fmt.Fprintf(&b, "  WATERMARK FOR ts AS ts - INTERVAL '%d' SECOND\n", int(t.Delay.Seconds()))
	}
	fmt.Fprintf(&b, ") WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = '%s'", t.Dir, t.Format)
	if t.Format == "csv" {
		fmt.Fprintf(&b, ", 'csv.null-literal' = '%s'", csvNull)
	}
	b.WriteString(");\n")
	return b.String()
}

// DuckLoad is the DuckDB statement that loads the same files into a table.
func (t *Table) DuckLoad() string {
	var cols []string
	computed := ""
	for _, c := range t.Columns {
		if c.Computed != "" {
			computed += ", " + c.Duck + " AS " + c.Name
			continue
		}
		cols = append(cols, fmt.Sprintf("'%s': '%s'", c.Name, c.Type.Duck()))
	}
	read := fmt.Sprintf("read_json('%s/*.json', format = 'newline_delimited', columns = {%s})", t.Dir, strings.Join(cols, ", "))
	if t.Format == "csv" {
		read = fmt.Sprintf(`read_csv('%s/*.csv', auto_detect = false, header = false, delim = ',', quote = '"', escape = '"', nullstr = '%s', columns = {%s})`,
			t.Dir, csvNull, strings.Join(cols, ", "))
	}
	return fmt.Sprintf("CREATE OR REPLACE TABLE %s AS SELECT *%s FROM %s", t.Name, computed, read)
}
