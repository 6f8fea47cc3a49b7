package builtin

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pipesql/pipesql/connectors"
)

// fileSink writes rows into part files under a directory, as Flink's filesystem sink:
// rows go to a hidden in-progress file (".part-<uuid>-0-<n>.inprogress"), which a
// rolling policy closes; at every Flush (a checkpoint, or the end) closed and open
// files are renamed to "part-<uuid>-0-<n>" and become visible. Readers, pipesql's own
// filesystem source included, skip hidden files, so they never see a half-written
// part. The uuid is new for every sink, so a restarted job never overwrites files.
type fileSink struct {
	table string
	dir   string
	enc   connectors.Encoder
	json  bool // json records need a line break; csv's encoder writes its own
	clock clock

	rollSize     int64
	rollInterval time.Duration

	uuid    string
	part    int
	cur     *os.File
	w       *bufio.Writer
	curTmp  string
	curSize int64
	opened  time.Time
	pending []string // closed in-progress files awaiting the next Flush
	buf     []byte
}

func newFileSink(cfg connectors.SinkConfig, clk clock) (*fileSink, error) {
	fail := func(err error) (*fileSink, error) { return nil, tableError("filesystem", "sink", cfg.Name, err) }
	if cfg.Updating {
		return fail(ErrUpdatingInput)
	}
	if err := validateFilesystem(cfg.TableInfo); err != nil {
		return nil, err
	}
	f, fopts, err := lookupFormat(cfg.TableInfo)
	if err != nil {
		return nil, err
	}
	if f.NewEncoder == nil {
		return fail(fmt.Errorf("format %s cannot be written", f.Name))
	}
	enc, err := f.NewEncoder(cfg.Input, fopts)
	if err != nil {
		return fail(err)
	}
	o := connectors.NewOptions(cfg.Name, cfg.Options, filesystemOptions)
	s := &fileSink{table: cfg.Name, dir: filepath.Clean(cfg.Options[optPath]), enc: enc, json: f.Name == "json", clock: clk}
	if s.rollSize, _, err = o.MemorySize(optRollFileSize); err != nil {
		return nil, err
	}
	if s.rollInterval, _, err = o.Duration(optRollInterval); err != nil {
		return nil, err
	}
	if info, err := os.Stat(s.dir); err == nil && !info.IsDir() {
		return fail(fmt.Errorf("path %s is a file; the filesystem sink writes part files into a directory", s.dir))
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fail(err)
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return fail(err)
	}
	id[6] = id[6]&0x0f | 0x40 // version 4
	id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
	s.uuid = fmt.Sprintf("%x-%x-%x-%x-%x", id[0:4], id[4:6], id[6:8], id[8:10], id[10:])
	return s, nil
}

func (s *fileSink) partName(n int) string { return fmt.Sprintf("part-%s-0-%d", s.uuid, n) }

func (s *fileSink) fail(err error) error { return tableError("filesystem", "sink", s.table, err) }

func (s *fileSink) Write(ctx context.Context, batch connectors.ChangeBatch) error {
	for i, row := range batch.Rows {
		if i < len(batch.Kinds) && batch.Kinds[i] != connectors.Insert {
			return s.fail(fmt.Errorf("%w: got a %s row", ErrUpdatingInput, batch.Kinds[i]))
		}
		if s.cur != nil && (s.curSize >= s.rollSize || s.clock.Now().Sub(s.opened) >= s.rollInterval) {
			if err := s.closePart(); err != nil {
				return s.fail(err)
			}
		}
		if s.cur == nil {
			if err := s.openPart(); err != nil {
				return s.fail(err)
			}
		}
		var err error
		if s.buf, err = s.enc.Encode(s.buf[:0], row); err != nil {
			return s.fail(err)
		}
		if s.json {
			s.buf = append(s.buf, '\n')
		}
		if _, err := s.w.Write(s.buf); err != nil {
			return s.fail(err)
		}
		s.curSize += int64(len(s.buf))
	}
	return nil
}

func (s *fileSink) openPart() error {
	name := s.partName(s.part)
	s.part++
	s.curTmp = filepath.Join(s.dir, "."+name+".inprogress")
	f, err := os.OpenFile(s.curTmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	s.cur, s.w, s.curSize, s.opened = f, bufio.NewWriterSize(f, 64<<10), 0, s.clock.Now()
	return nil
}

// closePart makes the open part file durable and queues it for publication.
func (s *fileSink) closePart() error {
	if s.cur == nil {
		return nil
	}
	f := s.cur
	s.cur = nil
	err := s.w.Flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	s.pending = append(s.pending, s.curTmp)
	return nil
}

// Flush closes the open part file and publishes every closed one.
func (s *fileSink) Flush(ctx context.Context) error {
	if err := s.closePart(); err != nil {
		return s.fail(err)
	}
	for len(s.pending) > 0 {
		tmp := s.pending[0]
		final := filepath.Join(s.dir, filepath.Base(tmp)[1:len(filepath.Base(tmp))-len(".inprogress")])
		if err := os.Rename(tmp, final); err != nil {
			return s.fail(err)
		}
		s.pending = s.pending[1:]
	}
	if d, err := os.Open(s.dir); err == nil {
		// make the renames durable; not every file system supports syncing a directory
		if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
			d.Close()
			return s.fail(err)
		}
		d.Close()
	}
	return nil
}

// Close releases the open part file without publishing it: the runtime flushes at the
// end of a job, and a Close without that Flush is a failed job whose rows the restarted
// job writes again, so publishing them here would duplicate them.
func (s *fileSink) Close() error {
	if s.cur == nil {
		return nil
	}
	f := s.cur
	s.cur = nil
	err := s.w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
