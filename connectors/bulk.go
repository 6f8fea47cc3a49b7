package connectors

import (
	"io"

	"github.com/pipesql/pipesql/types"
)

// BulkFormat is a format that encodes whole files rather than one record at a time:
// parquet writes row groups of columns and a footer, so a file is only readable once
// it is complete. A file sink gives a BulkWriter each in-progress part file and
// finishes it (Close) when the part rolls, which the filesystem sink does at every
// checkpoint, as Flink rolls bulk formats on checkpoint: a part file staged for a
// checkpoint is always a complete file. FormatFactory.Bulk is set for such formats,
// whose NewDecoder and NewEncoder are nil.
type BulkFormat struct {
	// Check validates the options and that every column of schema can be stored; the
	// connector calls it when the table is created, so a bad table fails at plan time.
	Check func(schema types.Schema, opts map[string]string) error
	// NewWriter starts a file of rows of schema on w.
	NewWriter func(w io.Writer, schema types.Schema, opts map[string]string) (BulkWriter, error)
	// NewReader reads a file of size bytes, filling cols in order: columns are found in
	// the file by name, and a column the file lacks, or a column of the NULL type, is
	// left NULL.
	NewReader func(r ReaderAtSeeker, size int64, cols []ProducedColumn, opts map[string]string) (BulkReader, error)
}

// ReaderAtSeeker is what a bulk reader reads from (an *os.File).
type ReaderAtSeeker interface {
	io.ReaderAt
	io.ReadSeeker
}

// BulkWriter writes the rows of one file. Nothing written is readable before Close.
type BulkWriter interface {
	Write(row types.Row) error
	// Size estimates the file's size so far, rows buffered in memory included, for
	// sink.rolling-policy.file-size.
	Size() int64
	// Close writes what is buffered and the footer, completing the file; it does not
	// close the underlying writer.
	Close() error
}

// BulkReader reads the rows of one file in order.
type BulkReader interface {
	// Next fills dst (len(dst) == len(cols)) with the next row; io.EOF after the last.
	Next(dst types.Row) error
	// Skip passes over the next n rows (a restored position).
	Skip(n int64) error
	Close() error
}
