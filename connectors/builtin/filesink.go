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
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
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
// A PARTITIONED BY table has an in-progress file per partition directory
// (path/dt=2024-05-01/...), and its rows are written without the partition columns.
// The part numbers count across partitions, so every part of a sink has its own.
//
// Rolling follows Flink's options: a part is closed when it reaches
// sink.rolling-policy.file-size (checked before each row), and, checked every
// sink.rolling-policy.check-interval, when it has been open for rollover-interval or
// has had no row for inactivity-interval. Every checkpoint closes every open part
// too: Flink rolls bulk formats (parquet) on every checkpoint, since a parquet file is
// only readable once its footer is written, and its row formats are committed at
// checkpoints as well, so pipesql rolls both there. A bulk format writes row groups
// into the in-progress file and its footer when the part is closed.
//
// When the job checkpoints, the sink commits in two phases (connectors.CommittingSink):
// at a checkpoint barrier the open parts are closed and every closed part is staged for
// that checkpoint, still hidden; parts become visible only when a checkpoint that
// covers them completes. The staged parts, the uuid and the next part number are the
// sink's checkpointed state. Restored from it, the sink keeps the uuid, publishes the
// parts the checkpoint staged (the checkpoint completed, so they are committed output,
// whether or not the previous process got to rename them) and deletes every other part
// of its uuid numbered from the restored next part on, hidden or not: they hold rows
// written after the checkpoint, which the restarted job writes again. So the visible
// output is exactly what the completed checkpoints cover, even after a crash or a
// fallback to an older checkpoint.
//
// Partition commit (sink.partition-commit.*, with the success-file policy): a
// partition that received parts is pending; when a checkpoint that published its parts
// completes, the trigger decides whether it is committed, and a committed partition
// gets an empty success file (_SUCCESS). With the partition-time trigger it is
// committed once the watermark at that checkpoint's barrier passes the partition's
// time plus the delay; with process-time once the clock passes the partition's
// creation plus the delay. Pending partitions and the watermark are in the state, so
// a restored sink commits what the restored checkpoint allows, as the checkpoint's
// completion would have. A partition that receives rows again after its commit is
// pending again and committed again, as in Flink.
type fileSink struct {
	table  string
	dir    string
	schema types.Schema // the input's columns
	data   []int        // the columns written into files (all but the partition keys)
	dataSc types.Schema
	enc    connectors.Encoder
	bulk   *connectors.BulkFormat
	fopts  map[string]string
	json   bool // json records need a line break; csv's encoder writes its own
	clock  connectors.Clock
	parts  *partitionSpec // nil when the table is not partitioned

	rollSize       int64
	rollInterval   time.Duration
	rollInactivity time.Duration // 0: never
	checkInterval  time.Duration
	nextCheck      time.Time

	uuid    string
	part    int
	open    map[string]*openPart // by partition directory ("" when unpartitioned)
	pending []string             // closed in-progress files (relative to dir) awaiting the next Flush or PrepareCommit
	staged  []stagedPart
	// partitions awaiting their commit, by directory
	waiting   map[string]*pendingPartition
	wm        int64            // the input's watermark
	cpWM      map[uint64]int64 // the watermark at each staged checkpoint's barrier
	committed map[string]bool  // partitions committed by this sink (for tests and logs)
	warned    map[string]bool  // partitions whose time could not be read, warned about
	log       connectors.Logger
	buf       []byte
	row       types.Row
}

// openPart is the in-progress file of one partition.
type openPart struct {
	rel       string // the file, relative to the sink's directory
	f         *os.File
	w         *bufio.Writer
	bw        connectors.BulkWriter // nil for row formats
	size      int64                 // bytes written by a row format
	opened    time.Time
	lastRow   time.Time
	partition string
}

// stagedPart is a closed part file waiting for the checkpoint it belongs to.
type stagedPart struct {
	Checkpoint uint64 `json:"checkpoint"`
	File       string `json:"file"` // the in-progress file, relative to the sink's directory ('/'-separated)
}

// pendingPartition is a partition with parts not yet committed.
type pendingPartition struct {
	Created    int64  `json:"created_ms"` // when the sink first wrote into it since its last commit
	Checkpoint uint64 `json:"checkpoint"` // the last checkpoint that staged parts of it
}

// fileSinkState is the checkpointed state of a filesystem sink, behind a version byte.
type fileSinkState struct {
	Dir        string                       `json:"dir"` // the sink's directory, cleaned
	UUID       string                       `json:"uuid"`
	Next       int                          `json:"next"` // the number of the next part file
	Staged     []stagedPart                 `json:"staged"`
	Partitions map[string]*pendingPartition `json:"partitions,omitempty"`
	Watermark  *int64                       `json:"watermark,omitempty"` // at the barrier
}

const fileSinkStateVersion = 1

func newFileSink(cfg connectors.SinkConfig, clk connectors.Clock) (*fileSink, error) {
	fail := func(err error) (*fileSink, error) { return nil, tableError("filesystem", "sink", cfg.Name, err) }
	if err := validateFilesystem(cfg.TableInfo); err != nil {
		return nil, err
	}
	f, fopts, err := lookupFormat(cfg.TableInfo)
	if err != nil {
		return nil, err
	}
	if cfg.Updating && f.Changelog != connectors.AllChangesMode {
		return fail(ErrUpdatingInput) // a changelog format (debezium-json ...) writes every kind
	}
	dir, err := localPath(cfg.Options[optPath])
	if err != nil {
		return nil, tableError("filesystem", "sink", cfg.Name, err)
	}
	s := &fileSink{table: cfg.Name, dir: dir, schema: cfg.Input, json: f.Name == "json" || f.Changelog == connectors.AllChangesMode, clock: clk, log: cfg.Log,
		open: map[string]*openPart{}, waiting: map[string]*pendingPartition{}, cpWM: map[uint64]int64{}, committed: map[string]bool{}, warned: map[string]bool{},
		wm: minWatermark, fopts: fopts, bulk: f.Bulk}
	if s.log == nil {
		s.log = discardLogger{}
	}
	if len(cfg.PartitionKeys) > 0 {
		info := cfg.TableInfo
		info.Schema = cfg.Input
		if s.parts, err = newPartitionSpec(info); err != nil {
			return fail(err)
		}
	}
	isKey := map[int]bool{}
	if s.parts != nil {
		for _, i := range s.parts.keyIdx {
			isKey[i] = true
		}
	}
	for i, c := range cfg.Input {
		if !isKey[i] {
			s.data = append(s.data, i)
			s.dataSc = append(s.dataSc, c)
		}
	}
	switch {
	case f.Bulk != nil:
		if err := f.Bulk.Check(s.dataSc, fopts); err != nil {
			return fail(err)
		}
	case f.NewEncoder == nil:
		return fail(fmt.Errorf("format %s cannot be written", f.Name))
	default:
		if s.enc, err = f.NewEncoder(s.dataSc, fopts); err != nil {
			return fail(err)
		}
	}
	o := connectors.NewOptions(cfg.Name, cfg.Options, filesystemOptions)
	if s.rollSize, _, err = o.MemorySize(optRollFileSize); err != nil {
		return nil, err
	}
	if s.rollInterval, _, err = o.Duration(optRollInterval); err != nil {
		return nil, err
	}
	if s.rollInactivity, _, err = o.Duration(optRollInactivity); err != nil {
		return nil, err
	}
	if s.checkInterval, _, err = o.Duration(optRollCheck); err != nil {
		return nil, err
	}
	s.nextCheck = clk.Now().Add(s.checkInterval)
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

// minWatermark is the watermark before any arrived.
const minWatermark int64 = -1 << 63

var _ connectors.WatermarkSink = (*fileSink)(nil)

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

// Watermark records the input's watermark for the partition-time commit trigger.
func (s *fileSink) Watermark(_ context.Context, wm int64) error {
	if wm > s.wm {
		s.wm = wm
	}
	return nil
}

func (s *fileSink) Write(ctx context.Context, batch connectors.ChangeBatch) error {
	now := s.clock.Now()
	if !now.Before(s.nextCheck) {
		// the time-based rolling policy, checked every check-interval as in Flink
		s.nextCheck = now.Add(s.checkInterval)
		for _, p := range s.sortedOpen() {
			if now.Sub(p.opened) >= s.rollInterval || s.rollInactivity > 0 && now.Sub(p.lastRow) >= s.rollInactivity {
				if err := s.closePart(p); err != nil {
					return s.fail(err)
				}
			}
		}
	}
	changes, _ := s.enc.(connectors.ChangeEncoder) // a changelog format writes every kind
	for i, row := range batch.Rows {
		kind := connectors.Insert
		if i < len(batch.Kinds) {
			kind = batch.Kinds[i]
		}
		if kind != connectors.Insert && changes == nil {
			return s.fail(fmt.Errorf("%w: got a %s row", ErrUpdatingInput, kind))
		}
		partition := ""
		if s.parts != nil {
			partition = s.parts.path(row, s.schema)
		}
		p := s.open[partition]
		if p != nil && p.sizeNow() >= s.rollSize {
			if err := s.closePart(p); err != nil {
				return s.fail(err)
			}
			p = nil
		}
		if p == nil {
			var err error
			if p, err = s.openPart(partition, now); err != nil {
				return s.fail(err)
			}
		}
		p.lastRow = now
		if len(s.data) == len(row) {
			s.row = row
		} else {
			s.row = s.row[:0]
			for _, j := range s.data {
				s.row = append(s.row, row[j])
			}
		}
		if p.bw != nil {
			if err := p.bw.Write(s.row); err != nil {
				return s.fail(err)
			}
			continue
		}
		var err error
		if changes != nil {
			s.buf, err = changes.EncodeChange(s.buf[:0], kind, s.row)
		} else {
			s.buf, err = s.enc.Encode(s.buf[:0], s.row)
		}
		if err != nil {
			return s.fail(err)
		}
		if s.json {
			s.buf = append(s.buf, '\n')
		}
		if _, err := p.w.Write(s.buf); err != nil {
			return s.fail(err)
		}
		p.size += int64(len(s.buf))
	}
	return nil
}

func (p *openPart) sizeNow() int64 {
	if p.bw != nil {
		return p.bw.Size()
	}
	return p.size
}

func (s *fileSink) sortedOpen() []*openPart {
	keys := make([]string, 0, len(s.open))
	for k := range s.open {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*openPart, len(keys))
	for i, k := range keys {
		out[i] = s.open[k]
	}
	return out
}

func (s *fileSink) openPart(partition string, now time.Time) (*openPart, error) {
	dir := filepath.Join(s.dir, filepath.FromSlash(partition))
	if partition != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	name := "." + s.partName(s.part) + ".inprogress"
	s.part++
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	rel := name
	if partition != "" {
		rel = partition + "/" + name
	}
	p := &openPart{rel: rel, f: f, w: bufio.NewWriterSize(f, 64<<10), opened: now, lastRow: now, partition: partition}
	if s.bulk != nil {
		if p.bw, err = s.bulk.NewWriter(p.w, s.dataSc, s.fopts); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, err
		}
	}
	if _, ok := s.waiting[partition]; !ok && s.parts != nil {
		s.waiting[partition] = &pendingPartition{Created: now.UnixMilli()}
	}
	s.open[partition] = p
	return p, nil
}

// closePart completes the part file (a bulk format's footer), makes it durable and
// queues it for publication.
func (s *fileSink) closePart(p *openPart) error {
	delete(s.open, p.partition)
	var err error
	if p.bw != nil {
		err = p.bw.Close()
	}
	if ferr := p.w.Flush(); err == nil {
		err = ferr
	}
	if err == nil {
		err = p.f.Sync()
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	s.pending = append(s.pending, p.rel)
	return nil
}

func (s *fileSink) closeAll() error {
	for _, p := range s.sortedOpen() {
		if err := s.closePart(p); err != nil {
			return err
		}
	}
	return nil
}

// partitionOf is the partition directory of a part file (relative).
func partitionOf(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

// Flush closes the open part files, publishes every closed one and commits the
// partitions the trigger allows (the end of a bounded input sends the largest
// watermark, which allows them all).
func (s *fileSink) Flush(ctx context.Context) error {
	if err := s.closeAll(); err != nil {
		return s.fail(err)
	}
	dirs := map[string]bool{}
	for len(s.pending) > 0 {
		rel := s.pending[0]
		if err := s.publish(s.dir, rel); err != nil {
			return s.fail(err)
		}
		dirs[partitionOf(rel)] = true
		s.pending = s.pending[1:]
	}
	if err := s.syncDirs(s.dir, dirs); err != nil {
		return s.fail(err)
	}
	return s.commitPartitions(^uint64(0), s.wm)
}

// PrepareCommit closes the open part files and stages every closed one for checkpoint id.
func (s *fileSink) PrepareCommit(ctx context.Context, id uint64) ([]byte, error) {
	if err := s.closeAll(); err != nil {
		return nil, s.fail(err)
	}
	for _, rel := range s.pending {
		s.staged = append(s.staged, stagedPart{Checkpoint: id, File: rel})
		if pp := s.waiting[partitionOf(rel)]; pp != nil {
			pp.Checkpoint = id
		}
	}
	s.pending = s.pending[:0]
	s.cpWM[id] = s.wm
	wm := s.wm
	st := fileSinkState{Dir: absDir(s.dir), UUID: s.uuid, Next: s.part, Staged: s.staged, Watermark: &wm}
	if s.parts != nil && s.parts.commit {
		st.Partitions = map[string]*pendingPartition{}
		for k, v := range s.waiting {
			if v.Checkpoint != 0 {
				st.Partitions[k] = v
			}
		}
	}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, s.fail(err)
	}
	return append([]byte{fileSinkStateVersion}, b...), nil
}

// CheckpointComplete publishes the parts staged for checkpoints up to id, then commits
// the partitions whose parts are all published and whose trigger allows it.
func (s *fileSink) CheckpointComplete(ctx context.Context, id uint64) error {
	kept := s.staged[:0]
	dirs := map[string]bool{}
	for _, p := range s.staged {
		if p.Checkpoint > id {
			kept = append(kept, p)
			continue
		}
		if err := s.publish(s.dir, p.File); err != nil {
			return s.fail(err)
		}
		dirs[partitionOf(p.File)] = true
	}
	s.staged = kept
	if err := s.syncDirs(s.dir, dirs); err != nil {
		return s.fail(err)
	}
	wm, ok := s.cpWM[id]
	if !ok {
		wm = minWatermark
	}
	for k := range s.cpWM {
		if k <= id {
			delete(s.cpWM, k)
		}
	}
	return s.commitPartitions(id, wm)
}

// commitPartitions writes the success file of each pending partition whose parts
// were all published by checkpoint upTo and whose trigger allows it at watermark wm.
func (s *fileSink) commitPartitions(upTo uint64, wm int64) error {
	if s.parts == nil || !s.parts.commit {
		return nil
	}
	keys := make([]string, 0, len(s.waiting))
	for k := range s.waiting {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	now := s.clock.Now()
	for _, k := range keys {
		pp := s.waiting[k]
		if pp.Checkpoint == 0 && upTo != ^uint64(0) || pp.Checkpoint > upTo {
			continue // parts of it are not published yet
		}
		ok, err := s.parts.committable(k, time.UnixMilli(pp.Created), now, wm)
		if err != nil {
			// Flink fails the job here; a partition whose time cannot be read waits for
			// the end of the input instead, with a warning, so one odd value (NULL's
			// default partition) does not stop the job in a restart loop.
			if !s.warned[k] {
				s.warned[k] = true
				s.log.Warn("a partition's time cannot be read; it is committed only at the end of the input", "table", s.table, "err", err.Error())
			}
			continue
		}
		if !ok {
			continue
		}
		if err := s.writeSuccessFile(s.dir, k); err != nil {
			return s.fail(err)
		}
		if _, open := s.open[k]; open {
			// rows written after the barrier: the partition is pending again
			s.waiting[k] = &pendingPartition{Created: now.UnixMilli()}
		} else {
			delete(s.waiting, k)
		}
		s.committed[k] = true
	}
	return nil
}

// writeSuccessFile commits a partition with the success-file policy: an empty file
// named sink.partition-commit.success-file.name, made durable.
func (s *fileSink) writeSuccessFile(dir, partition string) error {
	p := filepath.Join(dir, filepath.FromSlash(partition), s.parts.successName)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	s.log.Info("committed partition", "table", s.table, "partition", partition, "file", p)
	return syncDir(filepath.Dir(p))
}

// publish renames a hidden in-progress part (relative to dir) to its visible name. A
// part already published (by a run that crashed before it could record so) is left as it is.
func (s *fileSink) publish(dir, rel string) error {
	tmp := filepath.Join(dir, filepath.FromSlash(rel))
	final := filepath.Join(filepath.Dir(tmp), visibleName(filepath.Base(tmp)))
	err := os.Rename(tmp, final)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(final); serr == nil {
			return nil
		}
		return fmt.Errorf("%w: staged part %s is gone", ErrBadSinkState, tmp)
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

// syncDirs makes renames in dir and the given partition directories durable.
func (s *fileSink) syncDirs(dir string, partitions map[string]bool) error {
	for p := range partitions {
		if err := syncDir(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			return s.fail(err)
		}
	}
	return nil
}

// syncDir makes renames durable; not every file system supports syncing a directory.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// validRel reports whether a staged file named in state is one of this sink's parts
// under its directory.
func validRel(rel, uuid string) bool {
	if rel == "" || strings.HasPrefix(rel, "/") || strings.Contains(rel, `\`) {
		return false
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return strings.HasPrefix(filepath.Base(rel), ".part-"+uuid+"-0-")
}

// restore takes over the state of a checkpoint: it publishes the parts it staged,
// commits the partitions that checkpoint's completion commits, and deletes the parts
// of the same uuid written after it.
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
	var last uint64
	for _, p := range st.Staged {
		if !validRel(p.File, st.UUID) {
			return fmt.Errorf("%w: staged part %q is not one of this sink's", ErrBadSinkState, p.File)
		}
		last = max(last, p.Checkpoint)
	}
	for k, pp := range st.Partitions {
		if pp == nil || strings.Contains(k, "..") || strings.HasPrefix(k, "/") {
			return fmt.Errorf("%w: bad pending partition %q", ErrBadSinkState, k)
		}
		last = max(last, pp.Checkpoint)
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
	if st.Watermark != nil {
		s.wm = *st.Watermark
	}
	if s.parts != nil && s.parts.commit {
		for k, pp := range st.Partitions {
			s.waiting[k] = pp
		}
		if dir == s.dir {
			// what the checkpoint's completion would have committed
			if err := s.commitPartitions(last, s.wm); err != nil {
				return err
			}
		} else {
			s.waiting = map[string]*pendingPartition{}
		}
	}
	if dir != s.dir {
		// The table's path changed: the old directory keeps what was committed there and
		// this sink starts its own parts here.
		return s.newUUID()
	}
	s.uuid, s.part = st.UUID, st.Next
	prefix := "part-" + s.uuid + "-0-"
	dirs := map[string]bool{}
	err := filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		name := d.Name()
		hidden := strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".inprogress")
		base := name
		if hidden {
			base = visibleName(name)
		}
		n, err := strconv.Atoi(strings.TrimPrefix(base, prefix))
		if !strings.HasPrefix(base, prefix) || err != nil {
			return nil
		}
		// Every part numbered below Next was staged or published by the checkpoint, so a
		// hidden part left now was written after it; a visible one numbered from Next on
		// was committed by a later checkpoint, not the one restored.
		switch {
		case hidden:
		case n >= st.Next:
			s.log.Warn("deleting a part file written after the restored checkpoint; the job writes its rows again",
				"table", s.table, "file", path)
		default:
			return nil
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		rel, _ := filepath.Rel(s.dir, filepath.Dir(path))
		dirs[filepath.ToSlash(rel)] = true
		return nil
	})
	if err != nil {
		return err
	}
	dirs["."] = true
	return s.syncDirs(s.dir, dirs)
}

// Close releases the open part files without publishing them: the runtime flushes at
// the end of a job, and a Close without that Flush is a failed job whose rows the
// restarted job writes again, so publishing them here would duplicate them.
func (s *fileSink) Close() error {
	var err error
	for _, p := range s.sortedOpen() {
		delete(s.open, p.partition)
		if ferr := p.w.Flush(); err == nil {
			err = ferr
		}
		if cerr := p.f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
