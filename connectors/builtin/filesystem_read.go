package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/formats"
	"github.com/pipesql/pipesql/types"
)

// The filesystem connector's bulk format (parquet) and partitioned tables: the options,
// and how the source reads them. A bulk file is read row by row through the format's
// BulkReader; its position is the number of rows returned (fileState.Rows), so a
// restored source skips exactly those. A partitioned table's key columns are not in
// its files: each file's values come from its directories (k=v/), typed as the columns
// are, partition.default-name being NULL.

func init() {
	filesystemFactory.Formats = append(filesystemFactory.Formats, "parquet")
	for i := range filesystemOptions {
		if filesystemOptions[i].Key == optFormat {
			filesystemOptions[i].Enum = append(filesystemOptions[i].Enum, "parquet")
		}
	}
	filesystemOptions = append(filesystemOptions, partitionOptions...)
	filesystemFactory.Options = filesystemOptions
	filesystemFactory.Partitioned = true
	validate := filesystemFactory.Validate
	filesystemFactory.Validate = func(t connectors.TableInfo) error {
		if err := validate(t); err != nil {
			return err
		}
		return validateFilesystemMore(t)
	}
}

// validateFilesystemMore checks the rolling intervals, the partition options and that a
// bulk format can store the table's columns.
func validateFilesystemMore(t connectors.TableInfo) error {
	o := connectors.NewOptions(t.Name, t.Options, filesystemOptions)
	for _, k := range []string{optRollCheck, optRollInterval} {
		if d, _, err := o.Duration(k); err != nil {
			return err
		} else if d <= 0 {
			return &connectors.OptionError{Table: t.Name, Key: k, Value: o.String(k), Err: fmt.Errorf("%w: must be positive", connectors.ErrInvalidOption)}
		}
	}
	if _, err := newPartitionSpec(t); err != nil {
		return err
	}
	f, fopts, err := lookupFormat(t)
	if err != nil {
		return err
	}
	if f.Bulk != nil {
		if err := f.Bulk.Check(dataSchema(t), fopts); err != nil {
			return &connectors.OptionError{Table: t.Name, Key: optFormat, Value: f.Name, Err: fmt.Errorf("%w: %v", connectors.ErrInvalidOption, err)}
		}
	}
	return nil
}

// dataSchema is the columns of t stored in its files: all but the partition keys.
func dataSchema(t connectors.TableInfo) types.Schema {
	var out types.Schema
	for _, c := range t.Schema {
		if !slices.Contains(t.PartitionKeys, c.Name) {
			out = append(out, c)
		}
	}
	return out
}

// colSource says where a produced physical column comes from: the file's data
// (data >= 0, its index among the decoded columns) or the path (part, a key index).
type colSource struct {
	data, part int
}

// setupDecoding builds the source's decoder (or bulk columns) for the columns the plan
// wants, keeping partition keys out of what is read from the files.
func (s *fileSource) setupDecoding(cfg connectors.SourceConfig, f *connectors.FormatFactory, fopts map[string]string) error {
	if err := validateFilesystemMore(cfg.TableInfo); err != nil {
		return err
	}
	s.schema = cfg.Schema
	if len(cfg.PartitionKeys) > 0 {
		p, err := newPartitionSpec(cfg.TableInfo)
		if err != nil {
			return err
		}
		s.parts = p
	}
	var dataProduce []connectors.ProducedColumn
	for _, p := range cfg.Produce {
		if p.MetadataKey != "" {
			continue
		}
		if s.parts != nil {
			if k := slices.Index(s.parts.keys, p.Name); k >= 0 {
				s.layout = append(s.layout, colSource{data: -1, part: k})
				continue
			}
		}
		s.layout = append(s.layout, colSource{data: len(dataProduce), part: -1})
		dataProduce = append(dataProduce, p)
	}
	if f.Bulk != nil {
		s.bulk, s.fopts, s.bulkCols = f.Bulk, fopts, dataProduce
		return nil
	}
	dec, err := connectors.NewProjectedDecoder(f, dataSchema(cfg.TableInfo), dataProduce, fopts)
	if err != nil {
		return err
	}
	_, changes := dec.(connectors.ChangeDecoder)
	if len(s.fmetaKeys) > 0 {
		md, ok := dec.(connectors.MetadataDecoder)
		if !ok || !changes {
			return fmt.Errorf("%w: format %s offers no metadata", ErrBadOptions, f.Name)
		}
		if err := md.SetMetadata(s.fmetaKeys, s.fmetaTypes); err != nil {
			return err
		}
	}
	if s.parts == nil {
		s.dec = dec
		if workers := runtime.GOMAXPROCS(0); workers > 1 && !changes {
			s.par, err = newParallelDecode(s, workers, func() (connectors.Decoder, error) {
				return connectors.NewProjectedDecoder(f, dataSchema(cfg.TableInfo), dataProduce, fopts)
			})
		}
		return err
	}
	if changes {
		return fmt.Errorf("%w: format %s cannot read a PARTITIONED BY table", ErrBadOptions, f.Name)
	}
	s.dec = &partitionDecoder{src: s, dec: dec, scratch: make(types.Row, len(dataProduce))}
	return nil
}

// partitionDecoder decodes a line's data columns and puts in the partition values of
// the file being read.
type partitionDecoder struct {
	src     *fileSource
	dec     connectors.Decoder
	scratch types.Row
}

func (d *partitionDecoder) Decode(data []byte, dst types.Row) error {
	if err := d.dec.Decode(data, d.scratch); err != nil {
		return err
	}
	d.src.fill(dst, d.scratch, d.src.cur.part)
	return nil
}

// fill puts the data columns and partition values in their produced order.
func (s *fileSource) fill(dst, data types.Row, part []types.Value) {
	for i, l := range s.layout {
		if l.data >= 0 {
			dst[i] = data[l.data]
		} else {
			dst[i] = part[l.part]
		}
	}
}

// openData reads the partition values of a file that was just opened, and opens a bulk
// file at its restored row.
func (s *fileSource) openData(o *openFile, info fs.FileInfo) error {
	if s.parts != nil {
		rel, err := filepath.Rel(s.root, filepath.Dir(o.path))
		if err != nil {
			rel = ""
		}
		vals := s.parts.values(rel)
		o.part = make([]types.Value, len(vals))
		for k, v := range vals {
			if v == s.parts.defaultName {
				continue // NULL
			}
			idx := s.parts.keyIdx[k]
			if o.part[k], err = partitionTyped(v, s.parts.keys[k], s.schemaType(idx)); err != nil {
				return fmt.Errorf("%s: %w", o.path, err)
			}
		}
	}
	if s.bulk == nil {
		return nil
	}
	r, err := s.bulk.NewReader(o.f, info.Size(), s.bulkCols, s.fopts)
	if err != nil {
		return fmt.Errorf("%s: %w", o.path, err)
	}
	if o.st.Rows > 0 {
		if err := r.Skip(o.st.Rows); err != nil {
			r.Close()
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("%w: %s has fewer rows than the restored position %d", ErrBadState, o.path, o.st.Rows)
			}
			return fmt.Errorf("%s: %w", o.path, err)
		}
	}
	o.bulk = r
	return nil
}

func (s *fileSource) schemaType(idx int) types.Type { return s.schema[idx].Type }

// partitionTyped converts a partition value from its path to the column's type, as
// Flink casts it from a string.
func partitionTyped(v, key string, t types.Type) (types.Value, error) {
	if t.IsString() {
		return types.StringValue(v), nil
	}
	switch t.Kind {
	case types.Bytes:
		return types.BytesValue([]byte(v)), nil
	case types.Timestamp, types.TimestampLTZ:
		// the sink writes Flink's LocalDateTime text (2024-05-01T10:00), as CAST reads it
		micros, ok := types.ParseTimestamp(v, types.CastSyntax)
		if !ok {
			return types.Value{}, fmt.Errorf("partition %s=%s is not a %s", key, v, t)
		}
		if t.Kind == types.Timestamp {
			return types.TimestampValue(micros), nil
		}
		return types.TimestampLTZValue(micros), nil
	}
	dec, err := formats.CSVFormat.NewDecoder([]connectors.ProducedColumn{{Name: key, Type: t}}, nil)
	if err != nil {
		return types.Value{}, err
	}
	row := make(types.Row, 1)
	if err := dec.Decode([]byte(v), row); err != nil {
		return types.Value{}, fmt.Errorf("partition %s=%s is not a %s: %w", key, v, t, err)
	}
	return row[0], nil
}

// pollBulk reads rows of bulk files, one file at a time, as Poll does for lines.
func (s *fileSource) pollBulk(ctx context.Context, maxWait time.Duration) ([]connectors.SourceBatch, error) {
	var batches []connectors.SourceBatch
	var rows []types.Row
	flush := func() {
		if len(rows) > 0 {
			batches = append(batches, connectors.SourceBatch{Split: s.cur.path, Rows: rows})
			rows = nil
		}
	}
	width := len(s.layout) + len(s.meta)
	data := make(types.Row, len(s.bulkCols))
	for total := 0; total < maxBatch; {
		if s.cur == nil {
			if len(s.pending) == 0 && len(batches) > 0 {
				return batches, nil
			}
			if ok, err := s.openNext(ctx, maxWait); !ok {
				return nil, err
			}
		}
		o := s.cur
		err := o.bulk.Next(data)
		if errors.Is(err, io.EOF) {
			flush()
			o.st.Done = true
			s.closeCurrent()
			continue
		}
		if err != nil {
			return nil, &RecordError{Table: s.table, Path: o.path, Line: o.st.Rows + 1, Err: err}
		}
		o.st.Rows++
		row := make(types.Row, width)
		s.fill(row, data, o.part)
		copy(row[len(s.layout):], o.meta)
		rows = append(rows, row)
		total++
	}
	flush()
	return batches, nil
}

// filesystemFormatNames are the values of the 'format' option.
func filesystemFormatNames() []string {
	for _, o := range filesystemOptions {
		if o.Key == optFormat {
			return o.Enum
		}
	}
	return nil
}

func isFilesystemFormat(name string) bool { return slices.Contains(filesystemFormatNames(), name) }
