package builtin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/formats"
	"github.com/pipesql/pipesql/types"
)

// filesystem option keys, as Flink's FileSystem connector names them.
const (
	optPath            = "path"
	optFormat          = "format"
	optMonitorInterval = "source.monitor-interval"
	optRollFileSize    = "sink.rolling-policy.file-size"
	optRollInterval    = "sink.rolling-policy.rollover-interval"
	optRollCheck       = "sink.rolling-policy.check-interval"
	optRollInactivity  = "sink.rolling-policy.inactivity-interval"
	optSinkParallelism = "sink.parallelism"
)

// filesystem metadata keys.
const (
	metaFilePath    = "file.path"
	metaFileName    = "file.name"
	metaFileSize    = "file.size"
	metaFileModTime = "file.modification-time"
)

var filesystemOptions = []connectors.OptionSpec{
	{Key: optPath, Type: connectors.StringOption, Required: true, Source: true, Sink: true,
		Description: "a file or a directory of files (read recursively in name order; written as part files)"},
	{Key: optFormat, Type: connectors.EnumOption, Required: true, Enum: []string{"json", "csv", "debezium-json", "canal-json", "maxwell-json"}, Source: true, Sink: true,
		Description: "the format of the files"},
	{Key: optMonitorInterval, Type: connectors.DurationOption, Source: true,
		Description: "when set, the source is unbounded and looks for new files this often"},
	{Key: optRollFileSize, Type: connectors.StringOption, Default: "128MB", Sink: true,
		Description: "a part file is closed when it reaches this size"},
	{Key: optRollInterval, Type: connectors.DurationOption, Default: "30 min", Sink: true,
		Description: "a part file is closed when it has been open this long"},
	{Key: optRollCheck, Type: connectors.DurationOption, Default: "1 min", Sink: true,
		Description: "how often the rollover and inactivity intervals are checked"},
	{Key: optRollInactivity, Type: connectors.DurationOption, Default: "30 min", Sink: true,
		Description: "a part file is closed when no row has been written to it this long"},
	{Key: optSinkParallelism, Type: connectors.IntOption, Sink: true,
		Description: "accepted for compatibility: pipesql writes with one writer"},
}

var filesystemFactory = &connectors.Factory{
	Name:    "filesystem",
	Options: filesystemOptions,
	Metadata: []connectors.MetadataSpec{
		{Key: metaFilePath, Type: types.TypeString.WithNotNull(true)},
		{Key: metaFileName, Type: types.TypeString.WithNotNull(true)},
		{Key: metaFileSize, Type: types.TypeBigInt.WithNotNull(true)},
		{Key: metaFileModTime, Type: types.TimestampLTZType(3).WithNotNull(true)},
	},
	Formats: []string{"json", "csv", "debezium-json", "canal-json", "maxwell-json"},
	// debezium-json's source.timestamp is read as 'source.timestamp'.
	FormatMetadata: true,
	Validate:       validateFilesystem,
	SplitNoun:      "files",
	NewSource: func(ctx context.Context, cfg connectors.SourceConfig) (connectors.Source, error) {
		return newFileSource(cfg, connectors.ClockOr(cfg.Clock))
	},
	NewSink: func(ctx context.Context, cfg connectors.SinkConfig) (connectors.Sink, error) {
		return newFileSink(cfg, connectors.ClockOr(cfg.Clock))
	},
}

// localPath returns the local file path of a filesystem table's 'path': a plain path, or
// a file: URI as Flink jobs write them (file:///tmp/out, file:/tmp/out). Other schemes
// (hdfs://, s3://, ...) are refused: pipesql reads and writes the local file system.
func localPath(p string) (string, error) {
	p = strings.TrimSpace(p)
	scheme, rest, ok := strings.Cut(p, "://")
	if !ok {
		if r, isFile := strings.CutPrefix(p, "file:"); isFile {
			return filepath.Clean(r), nil
		}
		return filepath.Clean(p), nil
	}
	if !strings.EqualFold(scheme, "file") || strings.ContainsAny(scheme, "/\\") {
		return "", fmt.Errorf("%w: unsupported: the %s:// file system (the filesystem connector reads and writes local paths, or file:// URIs)", connectors.ErrInvalidOption, scheme)
	}
	if rest != "" && rest[0] != '/' {
		// file://host/path: only the local host.
		host, path, _ := strings.Cut(rest, "/")
		if host != "localhost" {
			return "", fmt.Errorf("%w: unsupported: file://%s/... names another host; write file:///path", connectors.ErrInvalidOption, host)
		}
		rest = "/" + path
	}
	return filepath.Clean(rest), nil
}

// validateFilesystem checks the options of a filesystem table together.
func validateFilesystem(t connectors.TableInfo) error {
	o := connectors.NewOptions(t.Name, t.Options, filesystemOptions)
	if strings.TrimSpace(o.String(optPath)) == "" {
		return &connectors.OptionError{Table: t.Name, Key: optPath, Err: fmt.Errorf("%w: must not be empty", connectors.ErrInvalidOption)}
	}
	if _, err := localPath(o.String(optPath)); err != nil {
		return &connectors.OptionError{Table: t.Name, Key: optPath, Value: o.String(optPath), Err: err}
	}
	if _, _, err := o.MemorySize(optRollFileSize); err != nil {
		return err
	}
	if d, set, err := o.Duration(optMonitorInterval); err != nil {
		return err
	} else if set && d <= 0 {
		return &connectors.OptionError{Table: t.Name, Key: optMonitorInterval, Value: o.String(optMonitorInterval),
			Err: fmt.Errorf("%w: must be positive", connectors.ErrInvalidOption)}
	}
	return nil
}

// lookupFormat returns the table's format and its options (without the format prefix).
func lookupFormat(t connectors.TableInfo) (*connectors.FormatFactory, map[string]string, error) {
	name := strings.ToLower(strings.TrimSpace(t.Options[optFormat]))
	f, ok := connectors.LookupFormat(name)
	if !ok || !isFilesystemFormat(name) {
		return nil, nil, &connectors.OptionError{Table: t.Name, Key: optFormat, Value: t.Options[optFormat],
			Err: fmt.Errorf("%w: unknown format (filesystem reads and writes %s)", connectors.ErrInvalidOption, strings.Join(filesystemFormatNames(), ", "))}
	}
	return f, connectors.FormatOptions(t.Options, "", name), nil
}

// isHidden reports files Flink's file source skips: names starting with '.' or '_'
// (in-progress part files, _SUCCESS markers).
func isHidden(name string) bool { return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") }

// fileState is the position in one file: the byte offset after the last record
// returned and the number of lines consumed, so that restore continues exactly there
// and errors keep their line numbers.
type fileState struct {
	Offset int64 `json:"offset"`
	Line   int64 `json:"line"`
	Done   bool  `json:"done,omitempty"`
	Rows   int64 `json:"rows,omitempty"` // rows returned from a bulk (parquet) file, whose Offset stays 0
}

// fileSourceState is the snapshot of a filesystem source, behind a version byte.
type fileSourceState struct {
	Files map[string]*fileState `json:"files"`
}

const fileStateVersion = 1

// fileSource reads the files under a path one after another, each a split, line by
// line through the table's format.
type fileSource struct {
	table string
	root  string
	dec   connectors.Decoder
	nPhys int      // physical columns decoded, first in each row
	meta  []string // metadata key of each produced column after the physical ones
	// fmeta[i] >= 0 says meta[i] is a key of the format's metadata (debezium-json's
	// source.timestamp), its index among them: the decoder fills it after the physical
	// columns of each row.
	fmeta      []int
	fmetaKeys  []string
	fmetaTypes []types.Type
	monitor    time.Duration
	clock      connectors.Clock
	log        connectors.Logger
	// bulk is set for a bulk format (parquet), read through bulkCols; parts for a
	// PARTITIONED BY table, whose key columns come from the path (filesystem_read.go).
	bulk     *connectors.BulkFormat
	fopts    map[string]string
	bulkCols []connectors.ProducedColumn
	parts    *partitionSpec
	layout   []colSource
	schema   types.Schema // the table's physical columns

	files    map[string]*fileState   // every file seen, by path
	idents   map[string]fileIdentity // files read from, as they were when opened (fileidentity.go)
	pending  []string                // files not done, in name order
	cur      *openFile
	nextScan time.Time
	skipped  int64
	// changeRows is scratch for the rows of one record of a changelog format.
	changeRows []types.Row
	// par decodes lines on several goroutines (filesystem_parallel.go); nil: Poll
	// decodes them.
	par *parallelDecode
}

type openFile struct {
	path  string
	f     *os.File
	r     *bufio.Reader
	st    *fileState
	meta  []types.Value // metadata values of the file, in meta order
	carry []byte        // a line longer than the reader's buffer, read so far
	bulk  connectors.BulkReader
	part  []types.Value // the partition values of the file, in key order
}

func newFileSource(cfg connectors.SourceConfig, clk connectors.Clock) (*fileSource, error) {
	fail := func(err error) (*fileSource, error) { return nil, tableError("filesystem", "source", cfg.Name, err) }
	if err := validateFilesystem(cfg.TableInfo); err != nil {
		return nil, err
	}
	f, fopts, err := lookupFormat(cfg.TableInfo)
	if err != nil {
		return nil, err
	}
	s := &fileSource{table: cfg.Name, clock: clk, log: cfg.Log, files: map[string]*fileState{}, idents: map[string]fileIdentity{}}
	if s.log == nil {
		s.log = discardLogger{}
	}
	root, err := localPath(cfg.Options[optPath])
	if err != nil {
		return nil, tableError("filesystem", "source", cfg.Name, err)
	}
	s.root = root
	if d, set, _ := connectors.NewOptions(cfg.Name, cfg.Options, filesystemOptions).Duration(optMonitorInterval); set {
		s.monitor = d
	}
	for _, p := range cfg.Produce {
		if p.MetadataKey == "" {
			if len(s.meta) > 0 {
				return fail(fmt.Errorf("%w: physical column %s comes after metadata columns", ErrBadOptions, p.Name))
			}
			s.nPhys++
			continue
		}
		at := -1
		switch p.MetadataKey {
		case metaFilePath, metaFileName, metaFileSize, metaFileModTime:
		default:
			if !slices.ContainsFunc(f.Metadata, func(m connectors.MetadataSpec) bool { return m.Key == p.MetadataKey }) {
				return fail(fmt.Errorf("%w: filesystem has no metadata %q", ErrBadOptions, p.MetadataKey))
			}
			at = len(s.fmetaKeys)
			s.fmetaKeys = append(s.fmetaKeys, p.MetadataKey)
			s.fmetaTypes = append(s.fmetaTypes, p.Type)
		}
		s.meta = append(s.meta, p.MetadataKey)
		s.fmeta = append(s.fmeta, at)
	}
	if err = s.setupDecoding(cfg, f, fopts); err != nil {
		return fail(err)
	}
	if cfg.Restored != nil {
		if len(cfg.Restored) < 1 || cfg.Restored[0] != fileStateVersion {
			return fail(fmt.Errorf("%w: unknown state version", ErrBadState))
		}
		var st fileSourceState
		if err := json.Unmarshal(cfg.Restored[1:], &st); err != nil {
			return fail(fmt.Errorf("%w: %v", ErrBadState, err))
		}
		for p, fs := range st.Files {
			if fs == nil || fs.Offset < 0 || fs.Line < 0 {
				return fail(fmt.Errorf("%w: bad position of %s", ErrBadState, p))
			}
			s.files[p] = fs
		}
	}
	if err := s.scan(); err != nil {
		return fail(err)
	}
	s.nextScan = clk.Now().Add(s.monitor)
	return s, nil
}

// scan lists the files under root and queues those not seen before.
func (s *fileSource) scan() error {
	info, err := os.Stat(s.root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if s.monitor > 0 {
				return nil // the directory may appear later
			}
			return fmt.Errorf("%w: %s", ErrNoFiles, s.root)
		}
		return err
	}
	var found []string
	if !info.IsDir() {
		found = []string{s.root}
	} else {
		err := filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p != s.root && isHidden(d.Name()) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	sort.Strings(found)
	for _, p := range found {
		if _, seen := s.files[p]; seen {
			continue
		}
		s.files[p] = &fileState{}
	}
	// pending is every known file not done, in name order (restored ones included)
	s.pending = s.pending[:0]
	for p, st := range s.files {
		if !st.Done && (s.cur == nil || s.cur.path != p) {
			s.pending = append(s.pending, p)
		}
	}
	sort.Strings(s.pending)
	return nil
}

func (s *fileSource) open(path string) error {
	st := s.files[path]
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	s.idents[path] = identityOfInfo(info)
	if st.Offset > info.Size() {
		f.Close()
		return fmt.Errorf("%w: %s is shorter (%d bytes) than the restored position %d", ErrBadState, path, info.Size(), st.Offset)
	}
	if _, err := f.Seek(st.Offset, io.SeekStart); err != nil {
		f.Close()
		return err
	}
	o := &openFile{path: path, f: f, r: bufio.NewReaderSize(f, 64<<10), st: st}
	for _, k := range s.meta {
		switch k {
		case metaFilePath:
			o.meta = append(o.meta, types.StringValue(path))
		case metaFileName:
			o.meta = append(o.meta, types.StringValue(filepath.Base(path)))
		case metaFileSize:
			o.meta = append(o.meta, types.BigIntValue(info.Size()))
		case metaFileModTime:
			o.meta = append(o.meta, types.TimestampLTZValue(info.ModTime().UnixMilli()*1000))
		default:
			o.meta = append(o.meta, types.NullValue) // the format's, per record
		}
	}
	s.cur = o
	if err := s.openData(o, info); err != nil {
		s.cur = nil
		f.Close()
		return err
	}
	return nil
}

// readLine returns the next line without its line break, and the bytes it took.
func (o *openFile) readLine() (line []byte, n int, err error) {
	o.carry = o.carry[:0]
	for {
		chunk, err := o.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			o.carry = append(o.carry, chunk...)
			continue
		}
		if len(o.carry) > 0 {
			o.carry = append(o.carry, chunk...)
			chunk = o.carry
		}
		n = len(chunk)
		if err != nil && !(errors.Is(err, io.EOF) && n > 0) {
			return nil, 0, err
		}
		line = bytes.TrimSuffix(chunk, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		return line, n, nil
	}
}

func (s *fileSource) closeCurrent() {
	if s.cur != nil {
		if s.cur.bulk != nil {
			s.cur.bulk.Close()
		}
		s.cur.f.Close()
		s.cur = nil
	}
}

// openNext opens the next pending file (line-by-line Poll and bulk pollBulk), scanning
// the path again every source.monitor-interval when none is pending, waiting at most
// maxWait for the next scan. ok is false when no file could be opened: err is io.EOF
// when a bounded source has read every file, nil when there is nothing to read yet.
func (s *fileSource) openNext(ctx context.Context, maxWait time.Duration) (ok bool, err error) {
	if len(s.pending) == 0 {
		if s.monitor <= 0 {
			return false, io.EOF
		}
		now := s.clock.Now()
		if now.Before(s.nextScan) {
			timer := s.clock.NewTimer(min(s.nextScan.Sub(now), maxWait))
			select {
			case <-ctx.Done():
				timer.Stop()
				return false, ctx.Err()
			case <-timer.C():
			}
			if s.clock.Now().Before(s.nextScan) {
				return false, nil
			}
		}
		s.nextScan = s.clock.Now().Add(s.monitor)
		if err := s.scan(); err != nil {
			return false, tableError("filesystem", "source", s.table, err)
		}
		if len(s.pending) == 0 {
			return false, nil
		}
	}
	next := s.pending[0]
	s.pending = s.pending[1:]
	if err := s.open(next); err != nil {
		return false, tableError("filesystem", "source", s.table, err)
	}
	return true, nil
}

func (s *fileSource) Poll(ctx context.Context, maxWait time.Duration) ([]connectors.SourceBatch, error) {
	if s.bulk != nil {
		return s.pollBulk(ctx, maxWait)
	}
	if s.par != nil {
		return s.pollParallel(ctx, maxWait)
	}
	var batches []connectors.SourceBatch
	var rows []types.Row
	var kinds []connectors.RowKind // with a changelog format (debezium-json ...)
	changes, _ := s.dec.(connectors.ChangeDecoder)
	flush := func() {
		if len(rows) > 0 {
			batches = append(batches, connectors.SourceBatch{Split: s.cur.path, Rows: rows, Kinds: kinds})
			rows, kinds = nil, nil
		}
	}
	total := 0
	width := s.nPhys + len(s.meta)
	var slab []types.Value
	for total < maxBatch {
		if s.cur == nil {
			if len(s.pending) == 0 && len(batches) > 0 {
				return batches, nil
			}
			if ok, err := s.openNext(ctx, maxWait); !ok {
				return nil, err
			}
		}
		o := s.cur
		line, n, err := o.readLine()
		if errors.Is(err, io.EOF) {
			flush()
			o.st.Done = true
			s.closeCurrent()
			continue
		}
		if err != nil {
			return nil, tableError("filesystem", "source", s.table, fmt.Errorf("%s: %w", o.path, err))
		}
		offset := o.st.Offset
		o.st.Offset += int64(n)
		o.st.Line++
		if len(bytes.TrimSpace(line)) == 0 {
			continue // blank lines, a trailing newline: no record
		}
		var row types.Row
		var decoded []types.Row
		if changes != nil {
			decoded, kinds, err = changes.DecodeChanges(line, s.changeRows[:0], kinds)
		} else {
			// The rows of a poll share one backing array: one allocation, not one a row.
			if len(slab) < width {
				slab = make([]types.Value, width*(maxBatch-total))
			}
			row, slab = slab[:width:width], slab[width:]
			err = s.dec.Decode(line, row[:s.nPhys])
		}
		if err != nil {
			if errors.Is(err, connectors.ErrSkipped) {
				s.skipped++
				if s.skipped == 1 && !errors.Is(err, formats.ErrComment) {
					s.log.Warn("skipping records that cannot be parsed", "table", s.table, "first", (&RecordError{Table: s.table, Path: o.path, Line: o.st.Line, Offset: offset, Err: err}).Error())
				}
				continue
			}
			return nil, &RecordError{Table: s.table, Path: o.path, Line: o.st.Line, Offset: offset, Err: err}
		}
		if changes != nil {
			for _, r := range decoded {
				full := make(types.Row, width)
				copy(full, r[:s.nPhys])
				copy(full[s.nPhys:], o.meta)
				for i, at := range s.fmeta {
					if at >= 0 {
						full[s.nPhys+i] = r[s.nPhys+at]
					}
				}
				rows = append(rows, full)
			}
			total += len(decoded)
			clear(decoded)
			s.changeRows = decoded[:0]
			continue
		}
		copy(row[s.nPhys:], o.meta)
		if rows == nil {
			rows = make([]types.Row, 0, maxBatch-total)
		}
		rows = append(rows, row)
		total++
	}
	flush()
	return batches, nil
}

// Splits returns the file being read: files are read one at a time, so the others
// hold no watermark back.
func (s *fileSource) Splits() []string {
	if s.cur != nil {
		return []string{s.cur.path}
	}
	return nil
}

// Skipped returns how many records were skipped because the format ignores parse errors.
func (s *fileSource) Skipped() int64 { return s.skipped }

func (s *fileSource) Snapshot() ([]byte, error) {
	b, err := json.Marshal(fileSourceState{Files: s.files})
	if err != nil {
		return nil, err
	}
	return append([]byte{fileStateVersion}, b...), nil
}

func (s *fileSource) CheckpointComplete(context.Context, uint64) error { return nil }

func (s *fileSource) Close() error {
	s.closeCurrent()
	if s.par != nil {
		s.par.stop()
	}
	return nil
}
