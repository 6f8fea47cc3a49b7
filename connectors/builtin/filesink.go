package builtin

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pipesql/pipesql/connectors"
)

// ErrBadSinkState is returned when a filesystem sink is restored from state it cannot
// use: unreadable, or naming a staged part file that no longer exists.
var ErrBadSinkState = errors.New("cannot restore sink state")

// fileSink writes rows into part files under a directory, as Flink's filesystem sink:
// rows go to a hidden in-progress file (".part-<uuid>-0-<n>.inprogress"), which a
// rolling policy closes; at every Flush (a checkpoint, or the end) closed and open
// files are renamed to "part-<uuid>-0-<n>" and become visible. Readers, pipesql's own
// filesystem source included, skip hidden files, so they never see a half-written
// part. The uuid is new for every sink, so a restarted job never overwrites files.
//
// When the job checkpoints, the sink commits in two phases (connectors.CommittingSink):
// at a checkpoint barrier the open part is closed and every closed part is staged for
// that checkpoint, still hidden; parts become visible only when a checkpoint that
// covers them completes. The staged parts, the uuid and the next part number are the
// sink's checkpointed state. Restored from it, the sink keeps the uuid, publishes the
// parts the checkpoint staged (the checkpoint completed, so they are committed output,
// whether or not the previous process got to rename them) and deletes every other part
// of its uuid numbered from the restored next part on, hidden or not: they hold rows
// written after the checkpoint, which the restarted job writes again. So the visible
// output is exactly what the completed checkpoints cover, even after a crash or a
// fallback to an older checkpoint.
type fileSink struct {
	table string
	dir   string
	enc   connectors.Encoder
	json  bool // json records need a line break; csv's encoder writes its own
	clock connectors.Clock

	rollSize     int64
	rollInterval time.Duration

	uuid    string
	part    int
	cur     *os.File
	w       *bufio.Writer
	curTmp  string
	curSize int64
	opened  time.Time
	pending []string // closed in-progress files awaiting the next Flush or PrepareCommit
	staged  []stagedPart
	log     connectors.Logger
	buf     []byte
}

// stagedPart is a closed part file waiting for the checkpoint it belongs to.
type stagedPart struct {
	Checkpoint uint64 `json:"checkpoint"`
	File       string `json:"file"` // the in-progress file's base name
}

// fileSinkState is the checkpointed state of a filesystem sink, behind a version byte.
type fileSinkState struct {
	Dir    string       `json:"dir"` // the sink's directory, cleaned
	UUID   string       `json:"uuid"`
	Next   int          `json:"next"` // the number of the next part file
	Staged []stagedPart `json:"staged"`
}

const fileSinkStateVersion = 1

func newFileSink(cfg connectors.SinkConfig, clk connectors.Clock) (*fileSink, error) {
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
	s := &fileSink{table: cfg.Name, dir: filepath.Clean(cfg.Options[optPath]), enc: enc, json: f.Name == "json", clock: clk, log: cfg.Log}
	if s.log == nil {
		s.log = discardLogger{}
	}
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
	if cfg.Restored != nil {
		err = s.restore(cfg.Restored)
	} else {
		err = s.newUUID()
	}
	if err != nil {
		return fail(err)
	}
	return s, nil
}

// newUUID names this sink's part files afresh.
func (s *fileSink) newUUID() error {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	id[6] = id[6]&0x0f | 0x40 // version 4
	id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
	s.uuid = fmt.Sprintf("%x-%x-%x-%x-%x", id[0:4], id[4:6], id[6:8], id[8:10], id[10:])
	return nil
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

// PrepareCommit closes the open part file and stages every closed one for checkpoint id.
func (s *fileSink) PrepareCommit(ctx context.Context, id uint64) ([]byte, error) {
	if err := s.closePart(); err != nil {
		return nil, s.fail(err)
	}
	for _, tmp := range s.pending {
		s.staged = append(s.staged, stagedPart{Checkpoint: id, File: filepath.Base(tmp)})
	}
	s.pending = s.pending[:0]
	b, err := json.Marshal(fileSinkState{Dir: absDir(s.dir), UUID: s.uuid, Next: s.part, Staged: s.staged})
	if err != nil {
		return nil, s.fail(err)
	}
	return append([]byte{fileSinkStateVersion}, b...), nil
}

// CheckpointComplete publishes the parts staged for checkpoints up to id.
func (s *fileSink) CheckpointComplete(ctx context.Context, id uint64) error {
	kept := s.staged[:0]
	published := false
	for _, p := range s.staged {
		if p.Checkpoint > id {
			kept = append(kept, p)
			continue
		}
		if err := s.publish(s.dir, p.File); err != nil {
			return s.fail(err)
		}
		published = true
	}
	s.staged = kept
	if published {
		return s.syncDir()
	}
	return nil
}

// publish renames a hidden in-progress part in dir to its visible name. A part already
// published (by a run that crashed before it could record so) is left as it is.
func (s *fileSink) publish(dir, tmpName string) error {
	final := filepath.Join(dir, visibleName(tmpName))
	err := os.Rename(filepath.Join(dir, tmpName), final)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(final); serr == nil {
			return nil
		}
		return fmt.Errorf("%w: staged part %s is gone", ErrBadSinkState, filepath.Join(dir, tmpName))
	}
	return err
}

// visibleName turns ".part-<uuid>-0-<n>.inprogress" into "part-<uuid>-0-<n>".
func visibleName(tmpName string) string {
	return strings.TrimSuffix(strings.TrimPrefix(tmpName, "."), ".inprogress")
}

// absDir is dir made absolute, so that state written from one working directory
// names the same place in another.
func absDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// syncDir makes renames durable; not every file system supports syncing a directory.
func (s *fileSink) syncDir() error {
	d, err := os.Open(s.dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return s.fail(err)
	}
	return nil
}

// restore takes over the state of a checkpoint: it publishes the parts it staged and
// deletes the parts of the same uuid written after it.
func (s *fileSink) restore(data []byte) error {
	if len(data) < 1 || data[0] != fileSinkStateVersion {
		return fmt.Errorf("%w: unknown state version", ErrBadSinkState)
	}
	var st fileSinkState
	if err := json.Unmarshal(data[1:], &st); err != nil {
		return fmt.Errorf("%w: %v", ErrBadSinkState, err)
	}
	if st.UUID == "" || st.Next < 0 || strings.ContainsAny(st.UUID, `/\`) {
		return fmt.Errorf("%w: bad uuid or part number", ErrBadSinkState)
	}
	for _, p := range st.Staged {
		if p.File != filepath.Base(p.File) || !strings.HasPrefix(p.File, ".part-"+st.UUID+"-0-") {
			return fmt.Errorf("%w: staged part %q is not one of this sink's", ErrBadSinkState, p.File)
		}
	}
	dir := s.dir
	if st.Dir != "" && st.Dir != absDir(s.dir) {
		dir = filepath.Clean(st.Dir)
	}
	// The checkpoint completed, so what it staged is committed output: publish it where
	// it was written. A part that is gone cannot be brought back by failing the job.
	for _, p := range st.Staged {
		if err := s.publish(dir, p.File); err != nil {
			if !errors.Is(err, ErrBadSinkState) {
				return err
			}
			s.log.Warn("a part file the restored checkpoint committed is missing", "table", s.table, "err", err.Error())
		}
	}
	if dir != s.dir {
		// The table's path changed: the old directory keeps what was committed there and
		// this sink starts its own parts here.
		return s.newUUID()
	}
	s.uuid, s.part = st.UUID, st.Next
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	prefix := "part-" + s.uuid + "-0-"
	for _, e := range entries {
		name := e.Name()
		hidden := strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".inprogress")
		base := name
		if hidden {
			base = visibleName(name)
		}
		n, err := strconv.Atoi(strings.TrimPrefix(base, prefix))
		if !strings.HasPrefix(base, prefix) || err != nil {
			continue
		}
		// Every part numbered below Next was staged or published by the checkpoint, so a
		// hidden part left now was written after it; a visible one numbered from Next on
		// was committed by a later checkpoint, not the one restored.
		switch {
		case hidden:
		case n >= st.Next:
			s.log.Warn("deleting a part file written after the restored checkpoint; the job writes its rows again",
				"table", s.table, "file", filepath.Join(s.dir, name))
		default:
			continue
		}
		if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return s.syncDir()
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
