package jdbc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// Scan option keys, as Flink names them.
const (
	optPartColumn = "scan.partition.column"
	optPartNum    = "scan.partition.num"
	optPartLower  = "scan.partition.lower-bound"
	optPartUpper  = "scan.partition.upper-bound"
	optFetchSize  = "scan.fetch-size"
	optAutoCommit = "scan.auto-commit"
)

// defaultFetch is how many rows a FETCH reads when 'scan.fetch-size' is 0 (Flink leaves
// it to the driver, which reads everything at once; a bounded batch keeps Poll short).
const defaultFetch = 1000

var scanOptions = []connectors.OptionSpec{
	{Key: optPartColumn, Type: connectors.StringOption, Source: true,
		Description: "a numeric column to split the scan by: partition i reads the rows whose column is in its part of [lower-bound, upper-bound]"},
	{Key: optPartNum, Type: connectors.IntOption, Source: true, Description: "how many partitions (splits) the scan has"},
	{Key: optPartLower, Type: connectors.IntOption, Source: true, Description: "the smallest value of the first partition"},
	{Key: optPartUpper, Type: connectors.IntOption, Source: true, Description: "the largest value of the last partition"},
	{Key: optFetchSize, Type: connectors.IntOption, Default: "0", Source: true,
		Description: "rows read per round trip (a cursor's FETCH); 0 reads 1000"},
	{Key: optAutoCommit, Type: connectors.BoolOption, Default: "true", Source: true,
		Description: "accepted for compatibility: pipesql reads each partition in a read-only transaction"},
}

// scanOptions read and checked.
type scanSpec struct {
	partColumn   string
	partitions   [][2]int64 // inclusive ranges; nil for one unpartitioned split
	fetch        int
	lower, upper int64
}

func parseScan(t connectors.TableInfo) (*scanSpec, error) {
	o := connectors.NewOptions(t.Name, t.Options, allOptions)
	s := &scanSpec{partColumn: o.String(optPartColumn)}
	n, _, err := o.Int(optFetchSize)
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("table %s: %w: option '%s' = '%d' must not be negative", t.Name, ErrBadOptions, optFetchSize, n)
	}
	s.fetch = int(n)
	if s.fetch == 0 {
		s.fetch = defaultFetch
	}
	set := 0
	for _, k := range []string{optPartColumn, optPartNum, optPartLower, optPartUpper} {
		if o.IsSet(k) {
			set++
		}
	}
	if set == 0 {
		return s, nil
	}
	if set != 4 {
		return nil, fmt.Errorf("table %s: %w: a partitioned scan needs all of '%s', '%s', '%s' and '%s'",
			t.Name, ErrBadOptions, optPartColumn, optPartNum, optPartLower, optPartUpper)
	}
	num, _, err := o.Int(optPartNum)
	if err != nil {
		return nil, err
	}
	if s.lower, _, err = o.Int(optPartLower); err != nil {
		return nil, err
	}
	if s.upper, _, err = o.Int(optPartUpper); err != nil {
		return nil, err
	}
	if num < 1 {
		return nil, fmt.Errorf("table %s: %w: option '%s' = '%d' must be at least 1", t.Name, ErrBadOptions, optPartNum, num)
	}
	if s.lower > s.upper {
		return nil, fmt.Errorf("table %s: %w: '%s' = %d is above '%s' = %d", t.Name, ErrBadOptions, optPartLower, s.lower, optPartUpper, s.upper)
	}
	if i := t.Schema.Index(s.partColumn); i < 0 {
		return nil, fmt.Errorf("table %s: %w: '%s' = '%s' is not a column of the table", t.Name, ErrBadOptions, optPartColumn, s.partColumn)
	} else if k := t.Schema[i].Type.Kind; k < types.TinyInt || k > types.BigInt {
		return nil, fmt.Errorf("table %s: %w: '%s' = '%s' is %s; pipesql partitions by an integer column", t.Name, ErrBadOptions, optPartColumn, s.partColumn, t.Schema[i].Type)
	}
	s.partitions = betweenRanges(s.lower, s.upper, num)
	return s, nil
}

// betweenRanges splits [lo, hi] into at most n ranges of nearly equal size, the first
// ones one larger, as Flink's JdbcNumericBetweenParametersProvider does.
func betweenRanges(lo, hi, n int64) [][2]int64 {
	count := hi - lo + 1
	n = min(n, count)
	size, bigger := count/n, count%n
	var out [][2]int64
	start := lo
	for i := int64(0); i < n; i++ {
		end := start + size - 1
		if i < bigger {
			end++
		}
		out = append(out, [2]int64{start, end})
		start = end + 1
	}
	return out
}

// Source reads a jdbc table once (a bounded scan), one split per partition, each with
// a cursor over SELECT ... ORDER BY every column it reads. Its position is the split
// and the rows read of it: equal rows are indistinguishable, so after a restore, the
// same query skipping that many rows reads exactly the rest (on an unchanged table).
type Source struct {
	o     *tableOptions
	spec  *scanSpec
	log   connectors.Logger
	clock connectors.Clock
	cols  []connectors.ProducedColumn
	sql   string // the query of a split, $1 $2 its bounds when partitioned, then OFFSET

	conn   *pgx.Conn
	tx     pgx.Tx
	split  int   // the split being read
	offset int64 // rows of it returned by Poll
	open   bool  // a cursor is open at offset

	degraded string
	lost     int
}

var (
	_ connectors.Source = (*Source)(nil)
	_ connectors.Status = (*Source)(nil)
)

// NewSource opens a bounded scan of a jdbc table; it is the factory's NewSource.
func NewSource(ctx context.Context, cfg connectors.SourceConfig) (connectors.Source, error) {
	o, err := parseOptions(cfg.TableInfo, allOptions)
	if err != nil {
		return nil, err
	}
	spec, err := parseScan(cfg.TableInfo)
	if err != nil {
		return nil, err
	}
	s := &Source{o: o, spec: spec, log: cfg.Log, clock: connectors.ClockOr(cfg.Clock)}
	for _, c := range cfg.Produce {
		if c.MetadataKey != "" {
			return nil, fmt.Errorf("jdbc source %s: %w: metadata column %s", cfg.Name, ErrBadOptions, c.Name)
		}
		s.cols = append(s.cols, c)
	}
	conn, err := connect(ctx, o)
	if err != nil {
		if connectionLost(err) {
			err = fmt.Errorf("%w: %w", ErrUnreachable, err)
		}
		return nil, fmt.Errorf("jdbc source %s: connect to %s: %w", cfg.Name, o.where, err)
	}
	s.conn = conn
	t, err := describeTable(ctx, conn, o)
	if err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	schema := make(types.Schema, len(s.cols))
	for i, c := range s.cols {
		schema[i] = types.Column{Name: c.Name, Type: c.Type}
	}
	dbCols, err := t.match(cfg.Name, schema, reading)
	if err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	s.sql = scanSQL(t, dbCols, spec)
	if cfg.Restored != nil {
		if err := s.restore(cfg.Restored); err != nil {
			conn.Close(context.Background())
			return nil, fmt.Errorf("jdbc source %s: restore: %w", cfg.Name, err)
		}
	}
	return s, nil
}

func scanSQL(t *dbTable, cols []dbColumn, spec *scanSpec) string {
	var sel, order []string
	for i, c := range cols {
		sel = append(sel, pgx.Identifier{c.name}.Sanitize())
		order = append(order, fmt.Sprint(i+1))
	}
	list := strings.Join(sel, ", ")
	if len(cols) == 0 {
		list = "1" // COUNT(*) and friends read no column
		order = []string{"1"}
	}
	q := "SELECT " + list + " FROM " + t.ident()
	next := 1
	if spec.partitions != nil {
		if c, ok := t.column(spec.partColumn); ok {
			q += fmt.Sprintf(" WHERE %s BETWEEN $1 AND $2", pgx.Identifier{c.name}.Sanitize())
		}
		next = 3
	}
	return q + " ORDER BY " + strings.Join(order, ", ") + fmt.Sprintf(" OFFSET $%d", next)
}

func (s *Source) splitCount() int { return max(1, len(s.spec.partitions)) }

func (s *Source) splitName(i int) string {
	if s.spec.partitions == nil {
		return s.o.dbTable
	}
	p := s.spec.partitions[i]
	return fmt.Sprintf("%s[%d..%d]", s.o.dbTable, p[0], p[1])
}

// Splits returns the split being read (splits are read one after the other).
func (s *Source) Splits() []string {
	if s.split >= s.splitCount() {
		return nil
	}
	return []string{s.splitName(s.split)}
}

// Poll fetches up to 'scan.fetch-size' rows of the current split.
func (s *Source) Poll(ctx context.Context, maxWait time.Duration) ([]connectors.SourceBatch, error) {
	if s.split >= s.splitCount() {
		return nil, io.EOF
	}
	rows, err := s.fetch(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !connectionLost(err) {
			return nil, fmt.Errorf("jdbc source %s: read %s: %w", s.o.table, s.splitName(s.split), err)
		}
		s.reset()
		s.lost++
		s.degraded = fmt.Sprintf("connection to %s lost: %v; retrying (attempt %d)", s.o.where, err, s.lost)
		if s.lost == 1 {
			s.log.Warn("jdbc source: connection lost, retrying until it is back", "table", s.o.table, "error", err.Error())
		}
		return nil, sleep(ctx, s.clock, min(backoff(s.lost), maxWait+minBackoff))
	}
	s.lost, s.degraded = 0, ""
	batch := connectors.SourceBatch{Split: s.splitName(s.split), Rows: rows}
	s.offset += int64(len(rows))
	if len(rows) < s.spec.fetch {
		s.finishSplit()
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return []connectors.SourceBatch{batch}, nil
}

func (s *Source) fetch(ctx context.Context) ([]types.Row, error) {
	if s.conn == nil || s.conn.IsClosed() {
		conn, err := connect(ctx, s.o)
		if err != nil {
			return nil, err
		}
		s.conn = conn
	}
	if !s.open {
		tx, err := s.conn.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
		if err != nil {
			return nil, err
		}
		args := []any{}
		if s.spec.partitions != nil {
			p := s.spec.partitions[s.split]
			args = append(args, p[0], p[1])
		}
		args = append(args, s.offset)
		if _, err := tx.Exec(ctx, "DECLARE pipesql_scan NO SCROLL CURSOR FOR "+s.sql, args...); err != nil {
			tx.Rollback(context.Background())
			return nil, err
		}
		s.tx, s.open = tx, true
	}
	rs, err := s.tx.Query(ctx, fmt.Sprintf("FETCH %d FROM pipesql_scan", s.spec.fetch))
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []types.Row
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			return nil, err
		}
		row := make(types.Row, len(s.cols))
		for i, c := range s.cols {
			row[i] = fromDB(vals[i], c.Type)
		}
		out = append(out, row)
	}
	return out, rs.Err()
}

// finishSplit moves on to the next split.
func (s *Source) finishSplit() {
	if s.tx != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s.tx.Rollback(ctx) // read only: nothing to keep
		cancel()
	}
	s.tx, s.open = nil, false
	s.split++
	s.offset = 0
}

// reset drops the connection after a failure; the next Poll reopens the split at offset.
func (s *Source) reset() {
	if s.conn != nil {
		s.conn.Close(context.Background())
	}
	s.conn, s.tx, s.open = nil, nil, false
}

// Snapshot is a version byte, the split index and the rows read of it.
func (s *Source) Snapshot() ([]byte, error) {
	b := []byte{1}
	b = binary.AppendUvarint(b, uint64(s.split))
	b = binary.AppendUvarint(b, uint64(s.offset))
	return b, nil
}

func (s *Source) restore(b []byte) error {
	if len(b) == 0 || b[0] != 1 {
		return errors.New("unknown state version")
	}
	split, n := binary.Uvarint(b[1:])
	if n <= 0 {
		return errors.New("truncated state")
	}
	offset, m := binary.Uvarint(b[1+n:])
	if m <= 0 {
		return errors.New("truncated state")
	}
	if int(split) > s.splitCount() {
		return fmt.Errorf("the checkpoint was reading split %d of %d: the partitions changed", split, s.splitCount())
	}
	s.split, s.offset = int(split), int64(offset)
	return nil
}

// CheckpointComplete has nothing to do: the position is all in the checkpoint.
func (s *Source) CheckpointComplete(context.Context, uint64) error { return nil }

// Degraded says why the scan waits for the database, "" when it does not.
func (s *Source) Degraded() string { return s.degraded }

// Close ends the scan's transaction and connection.
func (s *Source) Close() error {
	s.reset()
	return nil
}
