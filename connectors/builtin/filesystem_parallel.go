package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/connectors/formats"
	"github.com/pipesql/pipesql/types"
)

// Parallel decoding of line formats
//
// Decoding (JSON, CSV, ...) is most of what reading a file costs, so with more than one
// processor the source decodes on several goroutines, each with its own decoder: Poll
// reads lines ahead into jobs of up to maxBatch lines, the workers decode the jobs, and
// Poll returns their rows in file order. The read-ahead stays within the file being
// read and only Poll touches the file's position: it moves past a job's lines when it
// returns the job's rows, so Snapshot still describes exactly the records returned (a
// restored source reads the lines that were read ahead again). Rows, skipped records
// (and the warning about the first) and the first error are those of decoding the lines
// one after another. Changelog formats (one record, several rows) and partitioned
// tables decode in Poll.

// decodeJob is a run of consecutive lines of one file and, once decoded, their rows.
type decodeJob struct {
	buf   []byte // the lines, without line breaks
	ends  []int  // end of each line in buf
	sizes []int  // bytes each line took in the file, line break included
	line  int64  // line number of the line before the first (fileState.Line)
	start int64  // file offset of the first line
	path  string
	meta  []types.Value // the file's metadata values, copied after the physical columns

	done    chan struct{} // closed when decoded
	rows    []types.Row
	skipped int
	// firstSkip is the error of the first skipped record; err the error that stopped
	// decoding (rows holds the rows before it).
	firstSkip, err error
}

// parallelDecode is the worker pool and read-ahead of a file source.
type parallelDecode struct {
	jobs  chan *decodeJob
	queue []*decodeJob // read, in file order, not yet returned
	free  []*decodeJob
	depth int  // jobs read ahead at most
	eof   bool // the current file is read to its end
	// read position of the current file: the line and offset after the last line read
	line, offset int64
	start        func() // starts the workers; nil once started
	closed       bool
}

// newParallelDecode starts workers goroutines, each decoding with a decoder of its own.
func newParallelDecode(s *fileSource, workers int, newDecoder func() (connectors.Decoder, error)) (*parallelDecode, error) {
	p := &parallelDecode{depth: 2 * workers, jobs: make(chan *decodeJob, 2*workers)}
	decs := make([]connectors.Decoder, workers)
	for i := range decs {
		d, err := newDecoder()
		if err != nil {
			return nil, err
		}
		decs[i] = d
	}
	p.start = func() {
		for _, d := range decs {
			go func() {
				for j := range p.jobs {
					s.decodeJob(d, j)
					close(j.done)
				}
			}()
		}
	}
	return p, nil
}

// dispatch queues j for the workers, starting them at the first job (so that a source
// that fails to open or is never polled leaves no goroutines behind).
func (p *parallelDecode) dispatch(j *decodeJob) {
	if p.start != nil {
		p.start()
		p.start = nil
	}
	p.queue = append(p.queue, j)
	p.jobs <- j
}

func (p *parallelDecode) stop() {
	if !p.closed {
		p.closed = true
		close(p.jobs)
	}
}

// startFile begins the read-ahead of a file just opened.
func (p *parallelDecode) startFile(o *openFile) {
	p.queue, p.eof = p.queue[:0], false
	p.line, p.offset = o.st.Line, o.st.Offset
}

// readJob reads up to maxBatch lines of o into a job; nil at the end of the file.
func (p *parallelDecode) readJob(o *openFile) (*decodeJob, error) {
	var j *decodeJob
	if n := len(p.free); n > 0 {
		j, p.free = p.free[n-1], p.free[:n-1]
	} else {
		j = &decodeJob{}
	}
	*j = decodeJob{buf: j.buf[:0], ends: j.ends[:0], sizes: j.sizes[:0], line: p.line, start: p.offset,
		path: o.path, meta: o.meta, done: make(chan struct{})}
	for len(j.ends) < maxBatch {
		line, n, err := o.readLine()
		if errors.Is(err, io.EOF) {
			p.eof = true
			break
		}
		if err != nil {
			return nil, err
		}
		j.buf = append(j.buf, line...)
		j.ends = append(j.ends, len(j.buf))
		j.sizes = append(j.sizes, n)
		p.line++
		p.offset += int64(n)
	}
	if len(j.ends) == 0 {
		p.free = append(p.free, j)
		return nil, nil
	}
	return j, nil
}

// decodeJob decodes the lines of j with dec, as Poll does them one by one.
func (s *fileSource) decodeJob(dec connectors.Decoder, j *decodeJob) {
	width := s.nPhys + len(s.meta)
	slab := make([]types.Value, width*len(j.ends))
	j.rows = make([]types.Row, 0, len(j.ends))
	begin, offset := 0, j.start
	for i, end := range j.ends {
		line := j.buf[begin:end]
		lineNo := j.line + int64(i) + 1
		recOffset := offset
		begin, offset = end, offset+int64(j.sizes[i])
		if len(bytes.TrimSpace(line)) == 0 {
			continue // blank lines, a trailing newline: no record
		}
		row := slab[:width:width]
		if err := dec.Decode(line, row[:s.nPhys]); err != nil {
			recErr := &RecordError{Table: s.table, Path: j.path, Line: lineNo, Offset: recOffset, Err: err}
			if errors.Is(err, connectors.ErrSkipped) {
				if j.skipped == 0 {
					j.firstSkip = recErr
				}
				j.skipped++
				clear(row)
				continue
			}
			j.err = recErr
			return
		}
		slab = slab[width:]
		copy(row[s.nPhys:], j.meta)
		j.rows = append(j.rows, row)
	}
}

// pollParallel is Poll with the lines decoded by the workers.
func (s *fileSource) pollParallel(ctx context.Context, maxWait time.Duration) ([]connectors.SourceBatch, error) {
	p := s.par
	var batches []connectors.SourceBatch
	total := 0
	for total < maxBatch {
		if s.cur == nil {
			if len(s.pending) == 0 && len(batches) > 0 {
				return batches, nil
			}
			if ok, err := s.openNext(ctx, maxWait); !ok {
				return nil, err
			}
			p.startFile(s.cur)
		}
		o := s.cur
		for !p.eof && len(p.queue) < p.depth {
			j, err := p.readJob(o)
			if err != nil {
				return nil, tableError("filesystem", "source", s.table, fmt.Errorf("%s: %w", o.path, err))
			}
			if j == nil {
				break
			}
			p.dispatch(j)
		}
		if len(p.queue) == 0 {
			o.st.Done = true
			s.closeCurrent()
			continue
		}
		j := p.queue[0]
		if total > 0 {
			if total+len(j.ends) > maxBatch {
				break
			}
			select {
			case <-j.done:
			default:
				return batches, nil // return what is decoded rather than wait
			}
		}
		select {
		case <-j.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		p.queue = p.queue[1:]
		if j.skipped > 0 {
			if s.skipped == 0 && !errors.Is(j.firstSkip, formats.ErrComment) {
				s.log.Warn("skipping records that cannot be parsed", "table", s.table, "first", j.firstSkip.Error())
			}
			s.skipped += int64(j.skipped)
		}
		if j.err != nil {
			return nil, j.err
		}
		o.st.Line = j.line + int64(len(j.ends))
		o.st.Offset = j.start
		for _, n := range j.sizes {
			o.st.Offset += int64(n)
		}
		if len(j.rows) > 0 {
			batches = append(batches, connectors.SourceBatch{Split: o.path, Rows: j.rows})
			total += len(j.rows)
		}
		j.rows, j.meta = nil, nil
		p.free = append(p.free, j)
	}
	return batches, nil
}
