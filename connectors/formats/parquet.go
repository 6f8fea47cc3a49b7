package formats

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// parquet option keys, as Flink's parquet format names them (written 'parquet.<key>'),
// and the ParquetOutputFormat settings Flink passes through.
const (
	pqUTCTimezone    = "utc-timezone"
	pqTimeUnit       = "timestamp.time.unit"
	pqInt64Timestamp = "write.int64.timestamp"
	pqCompression    = "compression"
	pqBlockSize      = "block.size"
	pqPageSize       = "page.size"
	pqDictPageSize   = "dictionary.page.size"
	pqDictionary     = "enable.dictionary"
	pqWriterVersion  = "writer.version"
)

var parquetOptions = []connectors.OptionSpec{
	{Key: pqUTCTimezone, Type: connectors.BoolOption, Default: "false", Source: true, Sink: true,
		Description: "convert TIMESTAMP values to INT96 instants in UTC; false uses the machine's time zone, as Flink uses the JVM's"},
	{Key: pqTimeUnit, Type: connectors.EnumOption, Enum: []string{"nanos", "micros", "millis"}, Default: "micros", Sink: true,
		Description: "the unit of INT64 timestamps (parquet.write.int64.timestamp)"},
	{Key: pqInt64Timestamp, Type: connectors.BoolOption, Default: "false", Sink: true,
		Description: "write timestamps as INT64 with the TIMESTAMP logical type instead of INT96"},
	{Key: pqCompression, Type: connectors.EnumOption, Enum: []string{"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD"}, Default: "UNCOMPRESSED", Sink: true,
		Description: "the compression codec of column chunks"},
	{Key: pqBlockSize, Type: connectors.IntOption, Default: "134217728", Sink: true,
		Description: "a row group is closed when it holds about this many bytes"},
	{Key: pqPageSize, Type: connectors.IntOption, Default: "1048576", Sink: true,
		Description: "the size of a data page in bytes"},
	{Key: pqDictPageSize, Type: connectors.IntOption, Default: "1048576", Sink: true,
		Description: "the largest dictionary page in bytes"},
	{Key: pqDictionary, Type: connectors.BoolOption, Default: "true", Sink: true,
		Description: "dictionary-encode columns"},
	{Key: pqWriterVersion, Type: connectors.EnumOption, Enum: []string{"PARQUET_1_0", "PARQUET_2_0"}, Default: "PARQUET_1_0", Sink: true,
		Description: "the parquet format version written"},
}

// ParquetFormat is Flink's 'parquet' format: a bulk format of the filesystem
// connector (see connectors.BulkFormat), written and read through Apache Arrow's Go
// parquet implementation (pqarrow).
//
// Types map as on Flink's parquet format page: STRING to BINARY (UTF8), BYTES to
// BINARY, BOOLEAN, TINYINT and SMALLINT to INT32 (INT_8, INT_16), INT, BIGINT, FLOAT,
// DOUBLE, DECIMAL to FIXED_LEN_BYTE_ARRAY (DECIMAL), DATE to INT32 (DATE), TIME to
// INT32 (TIME_MILLIS), TIMESTAMP and TIMESTAMP_LTZ to INT96 or, with
// parquet.write.int64.timestamp, INT64 with the TIMESTAMP logical type in
// parquet.timestamp.time.unit (adjusted to UTC for TIMESTAMP_LTZ), ARRAY to LIST,
// MAP to MAP, ROW to a group. INT96 holds an instant: as in Flink, a TIMESTAMP (and
// the UTC wall clock of a TIMESTAMP_LTZ) is taken as a time in UTC with
// parquet.utc-timezone, else in the machine's time zone. Reading accepts what other
// writers produce too: any integer width for an integer column that holds it,
// decimals stored as INT32, INT64, BINARY or FIXED_LEN_BYTE_ARRAY, timestamps in any
// unit.
var ParquetFormat = &connectors.FormatFactory{
	Name:    "parquet",
	Options: parquetOptions,
	Bulk: &connectors.BulkFormat{
		Check:     checkParquet,
		NewWriter: newParquetWriter,
		NewReader: newParquetReader,
	},
}

func init() { connectors.RegisterFormat(ParquetFormat) }

// parquetConfig is the parquet options of a table, read once.
type parquetConfig struct {
	utc      bool
	int64TS  bool
	unit     arrow.TimeUnit
	props    *parquet.WriterProperties
	rowGroup int64
}

func parseParquetOptions(opts map[string]string) (*parquetConfig, error) {
	o := connectors.NewOptions("", opts, parquetOptions)
	c := &parquetConfig{}
	var err error
	if c.utc, err = o.Bool(pqUTCTimezone); err != nil {
		return nil, err
	}
	if c.int64TS, err = o.Bool(pqInt64Timestamp); err != nil {
		return nil, err
	}
	unit, err := o.Enum(pqTimeUnit, "nanos", "micros", "millis")
	if err != nil {
		return nil, err
	}
	c.unit = map[string]arrow.TimeUnit{"nanos": arrow.Nanosecond, "micros": arrow.Microsecond, "millis": arrow.Millisecond}[unit]
	codecName, err := o.Enum(pqCompression, parquetOptions[3].Enum...)
	if err != nil {
		return nil, err
	}
	codec := map[string]compress.Compression{
		"UNCOMPRESSED": compress.Codecs.Uncompressed, "SNAPPY": compress.Codecs.Snappy, "GZIP": compress.Codecs.Gzip,
		"BROTLI": compress.Codecs.Brotli, "ZSTD": compress.Codecs.Zstd,
	}
	cc, ok := codec[codecName]
	if !ok {
		// LZO's license keeps it out of Apache Arrow's Go library, and Hadoop's LZ4
		// framing differs from the LZ4 that library writes.
		return nil, &connectors.OptionError{Key: "parquet." + pqCompression, Value: o.String(pqCompression),
			Err: fmt.Errorf("%w: pipesql cannot write %s (it writes UNCOMPRESSED, SNAPPY, GZIP, BROTLI and ZSTD)", connectors.ErrInvalidOption, codecName)}
	}
	ints := map[string]int64{}
	for _, k := range []string{pqBlockSize, pqPageSize, pqDictPageSize} {
		n, _, err := o.Int(k)
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return nil, &connectors.OptionError{Key: "parquet." + k, Value: o.String(k), Err: fmt.Errorf("%w: must be positive", connectors.ErrInvalidOption)}
		}
		ints[k] = n
	}
	dict, err := o.Bool(pqDictionary)
	if err != nil {
		return nil, err
	}
	version, err := o.Enum(pqWriterVersion, "PARQUET_1_0", "PARQUET_2_0")
	if err != nil {
		return nil, err
	}
	pv, dpv := parquet.V1_0, parquet.DataPageV1
	if version == "PARQUET_2_0" {
		pv, dpv = parquet.V2_LATEST, parquet.DataPageV2
	}
	c.rowGroup = ints[pqBlockSize]
	c.props = parquet.NewWriterProperties(
		parquet.WithCompression(cc), parquet.WithDictionaryDefault(dict),
		parquet.WithDataPageSize(ints[pqPageSize]), parquet.WithDictionaryPageSizeLimit(ints[pqDictPageSize]),
		parquet.WithVersion(pv), parquet.WithDataPageVersion(dpv), parquet.WithCreatedBy("pipesql"),
		parquet.WithMaxRowGroupLength(1<<40), // row groups are cut by size (parquet.block.size)
	)
	return c, nil
}

// checkParquet validates the options and that every column has a parquet type.
func checkParquet(schema types.Schema, opts map[string]string) error {
	c, err := parseParquetOptions(opts)
	if err != nil {
		return err
	}
	_, err = c.arrowSchema(schema)
	return err
}

// arrowSchema is the Arrow schema pqarrow turns into the file's parquet schema.
func (c *parquetConfig) arrowSchema(schema types.Schema) (*arrow.Schema, error) {
	fields := make([]arrow.Field, len(schema))
	for i, col := range schema {
		dt, err := c.arrowType(col.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", col.Name, err)
		}
		fields[i] = arrow.Field{Name: col.Name, Type: dt, Nullable: !col.Type.NotNull}
	}
	return arrow.NewSchema(fields, nil), nil
}

func (c *parquetConfig) arrowType(t types.Type) (arrow.DataType, error) {
	switch t.Kind {
	case types.Boolean:
		return arrow.FixedWidthTypes.Boolean, nil
	case types.TinyInt:
		return arrow.PrimitiveTypes.Int8, nil
	case types.SmallInt:
		return arrow.PrimitiveTypes.Int16, nil
	case types.Int:
		return arrow.PrimitiveTypes.Int32, nil
	case types.BigInt:
		return arrow.PrimitiveTypes.Int64, nil
	case types.Float:
		return arrow.PrimitiveTypes.Float32, nil
	case types.Double:
		return arrow.PrimitiveTypes.Float64, nil
	case types.Decimal:
		if t.Prec > 38 {
			return nil, fmt.Errorf("DECIMAL(%d, %d) has more than 38 digits", t.Prec, t.Scale)
		}
		return &arrow.Decimal128Type{Precision: int32(t.Prec), Scale: int32(t.Scale)}, nil
	case types.Char, types.Varchar:
		return arrow.BinaryTypes.String, nil
	case types.Bytes:
		return arrow.BinaryTypes.Binary, nil
	case types.Date:
		return arrow.FixedWidthTypes.Date32, nil
	case types.Time:
		return arrow.FixedWidthTypes.Time32ms, nil
	case types.Timestamp, types.TimestampLTZ:
		unit := arrow.Nanosecond // INT96: pqarrow writes nanosecond timestamps as INT96
		if c.int64TS {
			unit = c.unit
		}
		tz := ""
		if t.Kind == types.TimestampLTZ {
			tz = "UTC"
		}
		return &arrow.TimestampType{Unit: unit, TimeZone: tz}, nil
	case types.Array:
		et, err := c.arrowType(*t.Elem)
		if err != nil {
			return nil, err
		}
		return arrow.ListOfField(arrow.Field{Name: "element", Type: et, Nullable: !t.Elem.NotNull}), nil
	case types.Map:
		kt, err := c.arrowType(*t.Key)
		if err != nil {
			return nil, err
		}
		vt, err := c.arrowType(*t.Elem)
		if err != nil {
			return nil, err
		}
		return arrow.MapOf(kt, vt), nil
	case types.Struct:
		fs := make([]arrow.Field, len(t.Fields))
		for i, f := range t.Fields {
			ft, err := c.arrowType(f.Type)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			fs[i] = arrow.Field{Name: f.Name, Type: ft, Nullable: !f.Type.NotNull}
		}
		return arrow.StructOf(fs...), nil
	}
	return nil, fmt.Errorf("%w: parquet has no mapping for %s", ErrUnsupportedType, t)
}

// ---- writing ----

// parquetWriter buffers rows in Arrow builders and writes them to the current row
// group every parquetBatch rows; a row group ends when it holds parquet.block.size
// bytes, the file at Close.
type parquetWriter struct {
	cfg     *parquetConfig
	schema  types.Schema
	fw      *pqarrow.FileWriter
	rb      *array.RecordBuilder
	pending int
	closed  int64 // bytes of finished row groups
	rgBytes int64 // the raw size of the rows of the current row group
	rowTZ   *time.Location
}

const parquetBatch = 4096

func newParquetWriter(w io.Writer, schema types.Schema, opts map[string]string) (connectors.BulkWriter, error) {
	c, err := parseParquetOptions(opts)
	if err != nil {
		return nil, err
	}
	as, err := c.arrowSchema(schema)
	if err != nil {
		return nil, err
	}
	aprops := pqarrow.NewArrowWriterProperties(pqarrow.WithDeprecatedInt96Timestamps(!c.int64TS))
	fw, err := pqarrow.NewFileWriter(as, w, c.props, aprops)
	if err != nil {
		return nil, err
	}
	fw.NewBufferedRowGroup()
	return &parquetWriter{cfg: c, schema: schema, fw: fw, rb: array.NewRecordBuilder(memory.DefaultAllocator, as), rowTZ: c.zone()}, nil
}

// zone is where an INT96 instant's wall clock is: UTC with parquet.utc-timezone, else
// the machine's zone.
func (c *parquetConfig) zone() *time.Location {
	if c.utc {
		return time.UTC
	}
	return time.Local
}

func (w *parquetWriter) Write(row types.Row) error {
	for i, col := range w.schema {
		if err := w.appendValue(w.rb.Field(i), col.Type, row[i]); err != nil {
			return fmt.Errorf("column %s: %w", col.Name, err)
		}
		w.rgBytes += parquetRawSize(row[i])
	}
	w.pending++
	if w.pending >= parquetBatch {
		return w.flushBatch()
	}
	return nil
}

func (w *parquetWriter) flushBatch() error {
	if w.pending == 0 {
		return nil
	}
	rec := w.rb.NewRecordBatch()
	defer rec.Release()
	w.pending = 0
	if err := w.fw.WriteBuffered(rec); err != nil {
		return err
	}
	// parquet.block.size is the size of a row group in memory, before encoding, as
	// parquet-mr measures it
	if w.rgBytes >= w.cfg.rowGroup {
		w.closed += w.fw.RowGroupTotalCompressedBytes()
		w.rgBytes = 0
		w.fw.NewBufferedRowGroup()
	}
	return nil
}

// Size is the bytes of the finished row groups plus the current one's encoded size,
// or its raw size while its pages are still in memory.
func (w *parquetWriter) Size() int64 {
	return w.closed + max(w.fw.RowGroupTotalCompressedBytes(), w.rgBytes)
}

// parquetRawSize estimates a value's size before encoding.
func parquetRawSize(v types.Value) int64 {
	switch v.Kind() {
	case types.Null:
		return 1
	case types.Char, types.Varchar, types.Bytes:
		return int64(len(v.Str())) + 4
	case types.Decimal:
		return 16
	case types.Array, types.Struct:
		n := int64(4)
		for _, e := range v.Elems() {
			n += parquetRawSize(e)
		}
		return n
	case types.Map:
		n := int64(4)
		for _, e := range v.Entries() {
			n += parquetRawSize(e.Key) + parquetRawSize(e.Value)
		}
		return n
	}
	return 8
}

func (w *parquetWriter) Close() error {
	err := w.flushBatch()
	w.rb.Release()
	if cerr := w.fw.Close(); err == nil {
		err = cerr
	}
	return err
}

// timestampUnits converts microseconds to the unit of an Arrow timestamp.
func toUnit(micros int64, unit arrow.TimeUnit) int64 {
	switch unit {
	case arrow.Nanosecond:
		return micros * 1000
	case arrow.Millisecond:
		return floorDiv(micros, 1000)
	case arrow.Second:
		return floorDiv(micros, 1_000_000)
	}
	return micros
}

func fromUnit(n int64, unit arrow.TimeUnit) int64 {
	switch unit {
	case arrow.Nanosecond:
		return floorDiv(n, 1000)
	case arrow.Millisecond:
		return n * 1000
	case arrow.Second:
		return n * 1_000_000
	}
	return n
}

// wallToInstant takes micros as a wall clock in loc and returns the instant.
func wallToInstant(micros int64, loc *time.Location) int64 {
	if loc == time.UTC {
		return micros
	}
	t := time.UnixMicro(micros).UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc).UnixMicro()
}

// instantToWall returns the wall clock in loc of an instant, as UTC micros.
func instantToWall(micros int64, loc *time.Location) int64 {
	if loc == time.UTC {
		return micros
	}
	t := time.UnixMicro(micros).In(loc)
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC).UnixMicro()
}

func (w *parquetWriter) appendValue(b array.Builder, t types.Type, v types.Value) error {
	if v.IsNull() {
		if t.NotNull {
			return errors.New("NULL in a NOT NULL column")
		}
		b.AppendNull()
		return nil
	}
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		bb.Append(v.Bool())
	case *array.Int8Builder:
		bb.Append(int8(v.Int()))
	case *array.Int16Builder:
		bb.Append(int16(v.Int()))
	case *array.Int32Builder:
		bb.Append(int32(v.Int()))
	case *array.Int64Builder:
		bb.Append(v.Int())
	case *array.Float32Builder:
		bb.Append(float32(v.Float()))
	case *array.Float64Builder:
		bb.Append(v.Float())
	case *array.Decimal128Builder:
		unscaled := roundUnscaled(v.Rat(), t.Scale)
		if unscaled.CmpAbs(pow10(t.Prec)) >= 0 {
			return fmt.Errorf("%s does not fit DECIMAL(%d, %d)", v, t.Prec, t.Scale)
		}
		bb.Append(decimal128.FromBigInt(unscaled))
	case *array.StringBuilder:
		bb.Append(v.Str())
	case *array.BinaryBuilder:
		bb.Append([]byte(v.Str()))
	case *array.Date32Builder:
		bb.Append(arrow.Date32(v.Int()))
	case *array.Time32Builder:
		bb.Append(arrow.Time32(floorDiv(v.Int(), 1000)))
	case *array.TimestampBuilder:
		unit := bb.Type().(*arrow.TimestampType).Unit
		micros := v.Int()
		if !w.cfg.int64TS {
			micros = wallToInstant(micros, w.rowTZ)
		}
		bb.Append(arrow.Timestamp(toUnit(micros, unit)))
	case *array.ListBuilder:
		bb.Append(true)
		for _, e := range v.Elems() {
			if err := w.appendValue(bb.ValueBuilder(), *t.Elem, e); err != nil {
				return err
			}
		}
	case *array.MapBuilder:
		bb.Append(true)
		for _, e := range v.Entries() {
			if e.Key.IsNull() {
				return errors.New("a MAP key is NULL, which parquet cannot store")
			}
			if err := w.appendValue(bb.KeyBuilder(), *t.Key, e.Key); err != nil {
				return err
			}
			if err := w.appendValue(bb.ItemBuilder(), *t.Elem, e.Value); err != nil {
				return err
			}
		}
	case *array.StructBuilder:
		bb.Append(true)
		fields := v.Elems()
		for i, f := range t.Fields {
			fv := types.Value{}
			if i < len(fields) {
				fv = fields[i]
			}
			if err := w.appendValue(bb.FieldBuilder(i), f.Type, fv); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
	default:
		return fmt.Errorf("%w: cannot write %s", ErrUnsupportedType, t)
	}
	return nil
}

// ---- reading ----

// parquetReader reads a file's record batches and converts the columns asked for.
type parquetReader struct {
	cfg    *parquetConfig
	pf     *file.Reader
	rr     pqarrow.RecordReader
	cols   []connectors.ProducedColumn
	src    []int  // the column of the batch each produced column comes from; -1: NULL
	int96  []bool // the produced column is an INT96 timestamp
	rec    arrow.RecordBatch
	row    int
	loc    *time.Location
	nRows  int64
	noData bool
}

func newParquetReader(r connectors.ReaderAtSeeker, size int64, cols []connectors.ProducedColumn, opts map[string]string) (connectors.BulkReader, error) {
	c, err := parseParquetOptions(opts)
	if err != nil {
		return nil, err
	}
	pf, err := file.NewParquetReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a parquet file: %w", err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: parquetBatch}, memory.DefaultAllocator)
	if err != nil {
		pf.Close()
		return nil, err
	}
	as, err := fr.Schema()
	if err != nil {
		pf.Close()
		return nil, err
	}
	pr := &parquetReader{cfg: c, pf: pf, cols: cols, loc: c.zone(), nRows: pf.NumRows()}
	// Columns are found by name (exactly, else ignoring case, as Hive does); only the
	// leaves of the columns asked for are read.
	var leaves []int
	picked := map[int]int{} // top-level field -> position among the fields read
	var order []int
	for _, col := range cols {
		idx := -1
		if col.Type.Kind != types.Null {
			idx = findField(as, col.Name)
		}
		if idx >= 0 {
			if _, ok := picked[idx]; !ok {
				picked[idx] = -1
				order = append(order, idx)
			}
		}
		pr.src = append(pr.src, idx)
	}
	// pqarrow returns the fields read in file order
	for i := 0; i < as.NumFields(); i++ {
		if _, ok := picked[i]; ok {
			picked[i] = len(leaves) // placeholder, fixed below
		}
	}
	n := 0
	for i := 0; i < as.NumFields(); i++ {
		if _, ok := picked[i]; !ok {
			continue
		}
		picked[i] = n
		n++
		leaves = appendLeaves(leaves, &fr.Manifest.Fields[i])
	}
	for i, idx := range pr.src {
		pr.int96 = append(pr.int96, false)
		if idx < 0 {
			continue
		}
		f := &fr.Manifest.Fields[idx]
		if f.IsLeaf() && pf.MetaData().Schema.Column(f.ColIndex).PhysicalType() == parquet.Types.Int96 {
			pr.int96[i] = true
		}
		if err := checkReadable(as.Field(idx).Type, cols[i].Type); err != nil {
			pf.Close()
			return nil, fmt.Errorf("column %s: %w", cols[i].Name, err)
		}
		pr.src[i] = picked[idx]
	}
	if len(leaves) == 0 || pr.nRows == 0 {
		pr.noData = true // nothing to read from the file but its row count
		return pr, nil
	}
	if pr.rr, err = fr.GetRecordReader(context.Background(), leaves, nil); err != nil {
		pf.Close()
		return nil, err
	}
	return pr, nil
}

func findField(as *arrow.Schema, name string) int {
	if idx := as.FieldIndices(name); len(idx) > 0 {
		return idx[0]
	}
	for i, f := range as.Fields() {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

func appendLeaves(dst []int, f *pqarrow.SchemaField) []int {
	if f.IsLeaf() {
		return append(dst, f.ColIndex)
	}
	for i := range f.Children {
		dst = appendLeaves(dst, &f.Children[i])
	}
	return dst
}

// checkReadable refuses a file column that cannot become the table's column type.
func checkReadable(dt arrow.DataType, t types.Type) error {
	ok := false
	switch t.Kind {
	case types.Boolean:
		ok = dt.ID() == arrow.BOOL
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		ok = arrow.IsInteger(dt.ID())
	case types.Float, types.Double:
		ok = arrow.IsFloating(dt.ID()) || arrow.IsInteger(dt.ID())
	case types.Decimal:
		ok = dt.ID() == arrow.DECIMAL128 || dt.ID() == arrow.DECIMAL256 || arrow.IsInteger(dt.ID())
	case types.Char, types.Varchar:
		ok = dt.ID() == arrow.STRING || dt.ID() == arrow.LARGE_STRING || dt.ID() == arrow.BINARY
	case types.Bytes:
		ok = dt.ID() == arrow.BINARY || dt.ID() == arrow.LARGE_BINARY || dt.ID() == arrow.STRING || dt.ID() == arrow.FIXED_SIZE_BINARY
	case types.Date:
		ok = dt.ID() == arrow.DATE32 || dt.ID() == arrow.DATE64
	case types.Time:
		ok = dt.ID() == arrow.TIME32 || dt.ID() == arrow.TIME64
	case types.Timestamp, types.TimestampLTZ:
		ok = dt.ID() == arrow.TIMESTAMP
	case types.Array:
		if lt, isList := dt.(arrow.ListLikeType); isList && dt.ID() != arrow.MAP {
			return checkReadable(lt.Elem(), *t.Elem)
		}
	case types.Map:
		if mt, isMap := dt.(*arrow.MapType); isMap {
			if err := checkReadable(mt.KeyType(), *t.Key); err != nil {
				return err
			}
			return checkReadable(mt.ItemType(), *t.Elem)
		}
	case types.Struct:
		if st, isStruct := dt.(*arrow.StructType); isStruct {
			for _, f := range t.Fields {
				if i, found := st.FieldIdx(f.Name); found {
					if err := checkReadable(st.Field(i).Type, f.Type); err != nil {
						return fmt.Errorf("field %s: %w", f.Name, err)
					}
				}
			}
			return nil
		}
	}
	if !ok {
		return fmt.Errorf("%w: the file stores %s, which cannot be read as %s", ErrUnsupportedType, dt, t)
	}
	return nil
}

func (r *parquetReader) advance() error {
	for r.rec == nil || r.row >= int(r.rec.NumRows()) {
		if r.noData {
			if r.nRows <= 0 {
				return io.EOF
			}
			r.nRows--
			return nil
		}
		if r.rec != nil {
			r.rec = nil
		}
		if !r.rr.Next() {
			if err := r.rr.Err(); err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			return io.EOF
		}
		r.rec, r.row = r.rr.RecordBatch(), 0
	}
	return nil
}

func (r *parquetReader) Next(dst types.Row) error {
	if err := r.advance(); err != nil {
		return err
	}
	for i, col := range r.cols {
		if r.src[i] < 0 || r.noData {
			dst[i] = types.Value{}
			continue
		}
		v, err := r.value(r.rec.Column(r.src[i]), r.row, col.Type, r.int96[i])
		if err != nil {
			return fmt.Errorf("column %s: %w", col.Name, err)
		}
		dst[i] = v
	}
	if !r.noData {
		r.row++
	}
	return nil
}

func (r *parquetReader) Skip(n int64) error {
	for ; n > 0; n-- {
		if err := r.advance(); err != nil {
			return err
		}
		if !r.noData {
			r.row++
		}
	}
	return nil
}

func (r *parquetReader) Close() error {
	if r.rr != nil {
		r.rr.Release()
	}
	return r.pf.Close()
}

func (r *parquetReader) value(a arrow.Array, i int, t types.Type, int96 bool) (types.Value, error) {
	if a.IsNull(i) {
		return types.Value{}, nil
	}
	switch t.Kind {
	case types.Boolean:
		return types.BoolValue(a.(*array.Boolean).Value(i)), nil
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		n, err := intAt(a, i)
		if err != nil {
			return types.Value{}, err
		}
		return types.IntValue(t.Kind, n), nil
	case types.Float, types.Double:
		var f float64
		switch x := a.(type) {
		case *array.Float32:
			f = float64(x.Value(i))
		case *array.Float64:
			f = x.Value(i)
		default:
			n, err := intAt(a, i)
			if err != nil {
				return types.Value{}, err
			}
			f = float64(n)
		}
		if t.Kind == types.Float {
			return types.FloatValue(float64(float32(f))), nil
		}
		return types.DoubleValue(f), nil
	case types.Decimal:
		var r *big.Rat
		switch x := a.(type) {
		case *array.Decimal128:
			dt := x.DataType().(*arrow.Decimal128Type)
			r = new(big.Rat).SetFrac(x.Value(i).BigInt(), pow10(int(dt.Scale)))
		case *array.Decimal256:
			dt := x.DataType().(*arrow.Decimal256Type)
			r = new(big.Rat).SetFrac(x.Value(i).BigInt(), pow10(int(dt.Scale)))
		default:
			n, err := intAt(a, i)
			if err != nil {
				return types.Value{}, err
			}
			r = new(big.Rat).SetInt64(n)
		}
		unscaled := roundUnscaled(r, t.Scale)
		if unscaled.CmpAbs(pow10(t.Prec)) >= 0 {
			return types.Value{}, nil // does not fit the column's precision: NULL, as Flink's casts
		}
		return types.DecimalValue(new(big.Rat).SetFrac(unscaled, pow10(t.Scale))), nil
	case types.Char, types.Varchar:
		switch x := a.(type) {
		case *array.String:
			return types.StringValue(x.Value(i)), nil
		case *array.LargeString:
			return types.StringValue(x.Value(i)), nil
		case *array.Binary:
			return types.StringValue(string(x.Value(i))), nil
		}
	case types.Bytes:
		switch x := a.(type) {
		case *array.Binary:
			return types.BytesValue(append([]byte(nil), x.Value(i)...)), nil
		case *array.LargeBinary:
			return types.BytesValue(append([]byte(nil), x.Value(i)...)), nil
		case *array.String:
			return types.BytesValue([]byte(x.Value(i))), nil
		case *array.FixedSizeBinary:
			return types.BytesValue(append([]byte(nil), x.Value(i)...)), nil
		}
	case types.Date:
		switch x := a.(type) {
		case *array.Date32:
			return types.DateValue(int64(x.Value(i))), nil
		case *array.Date64:
			return types.DateValue(floorDiv(int64(x.Value(i)), 86_400_000)), nil
		}
	case types.Time:
		switch x := a.(type) {
		case *array.Time32:
			return types.TimeValue(fromUnit(int64(x.Value(i)), x.DataType().(*arrow.Time32Type).Unit)), nil
		case *array.Time64:
			return types.TimeValue(fromUnit(int64(x.Value(i)), x.DataType().(*arrow.Time64Type).Unit)), nil
		}
	case types.Timestamp, types.TimestampLTZ:
		x := a.(*array.Timestamp)
		micros := fromUnit(int64(x.Value(i)), x.DataType().(*arrow.TimestampType).Unit)
		if int96 {
			micros = instantToWall(micros, r.loc)
		}
		if t.Kind == types.Timestamp {
			return types.TimestampValue(micros), nil
		}
		return types.TimestampLTZValue(micros), nil
	case types.Array:
		x := a.(array.ListLike)
		start, end := x.ValueOffsets(i)
		elems := make([]types.Value, 0, end-start)
		for j := start; j < end; j++ {
			e, err := r.value(x.ListValues(), int(j), *t.Elem, false)
			if err != nil {
				return types.Value{}, err
			}
			elems = append(elems, e)
		}
		return types.ArrayValue(elems), nil
	case types.Map:
		x := a.(*array.Map)
		start, end := x.ValueOffsets(i)
		entries := make([]types.MapEntry, 0, end-start)
		for j := start; j < end; j++ {
			k, err := r.value(x.Keys(), int(j), *t.Key, false)
			if err != nil {
				return types.Value{}, err
			}
			v, err := r.value(x.Items(), int(j), *t.Elem, false)
			if err != nil {
				return types.Value{}, err
			}
			entries = append(entries, types.MapEntry{Key: k, Value: v})
		}
		return types.MapValue(entries), nil
	case types.Struct:
		x := a.(*array.Struct)
		st := x.DataType().(*arrow.StructType)
		fields := make([]types.Value, len(t.Fields))
		for j, f := range t.Fields {
			idx, found := st.FieldIdx(f.Name)
			if !found {
				continue
			}
			v, err := r.value(x.Field(idx), i, f.Type, false)
			if err != nil {
				return types.Value{}, fmt.Errorf("field %s: %w", f.Name, err)
			}
			fields[j] = v
		}
		return types.RowValue(fields), nil
	}
	return types.Value{}, fmt.Errorf("%w: cannot read %s as %s", ErrUnsupportedType, a.DataType(), t)
}

func intAt(a arrow.Array, i int) (int64, error) {
	switch x := a.(type) {
	case *array.Int8:
		return int64(x.Value(i)), nil
	case *array.Int16:
		return int64(x.Value(i)), nil
	case *array.Int32:
		return int64(x.Value(i)), nil
	case *array.Int64:
		return x.Value(i), nil
	case *array.Uint8:
		return int64(x.Value(i)), nil
	case *array.Uint16:
		return int64(x.Value(i)), nil
	case *array.Uint32:
		return int64(x.Value(i)), nil
	case *array.Uint64:
		return int64(x.Value(i)), nil
	}
	return 0, fmt.Errorf("%w: %s is not an integer", ErrUnsupportedType, a.DataType())
}
