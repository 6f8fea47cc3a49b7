package jdbc

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// Sink writes a jdbc table in PostgreSQL. Without a PRIMARY KEY it appends every row
// (COPY); with one it upserts (INSERT ... ON CONFLICT (key) DO UPDATE) and deletes by
// key, keeping only the last change of each key between flushes, as Flink's
// upsert buffer does. A flush is one transaction, so the table never shows part of one.
//
// The runtime flushes at every checkpoint; rows the job writes again after a restart
// from that checkpoint upsert to the same result, so an upsert table is exact after any
// crash (append tables are at-least-once).
//
// A lost connection is retried with backoff until the database is back, the sink
// reporting itself degraded meanwhile (connectors.Status); Write and Flush wait, which
// holds the job back without failing it. A statement the database refuses is retried
// 'sink.max-retries' times, then fails the job.
type Sink struct {
	o      *tableOptions
	log    connectors.Logger
	clock  connectors.Clock
	input  types.Schema
	keyIdx []int // input columns of the primary key; nil when appending

	table     *dbTable
	copyCols  []string // database column names, for COPY
	upsertSQL string
	deleteSQL string

	// sem is held by whoever flushes or touches the buffer: the sink's goroutine or the
	// interval flusher. It is a channel so that a Write waiting behind a flush that
	// retries through an outage gives up when its context is cancelled.
	sem       chan struct{}
	conn      *pgx.Conn
	pending   []change
	byKey     map[string]int // upsert: index in pending of each key's change
	keyBuf    []byte
	lastFlush time.Time
	bgErr     error // a failure of the interval flusher, returned by the next Write or Flush

	degraded atomic.Pointer[string]
	written  atomic.Int64

	cancel context.CancelFunc
	done   chan struct{} // closed when the interval flusher returns
}

type change struct {
	del bool
	row types.Row
}

var (
	_ connectors.Sink   = (*Sink)(nil)
	_ connectors.Status = (*Sink)(nil)
)

// NewSink opens a jdbc sink; it is the factory's NewSink. It checks the database table
// against the declared one (every written column exists with a type that holds the
// declared one; with a PRIMARY KEY, a unique index on it), so a mistake is an error
// at start that names the column.
func NewSink(ctx context.Context, cfg connectors.SinkConfig) (connectors.Sink, error) {
	return OpenSink(ctx, cfg)
}

// OpenSink is NewSink returning the concrete type.
func OpenSink(ctx context.Context, cfg connectors.SinkConfig) (*Sink, error) {
	o, err := parseOptions(cfg.TableInfo, allOptions)
	if err != nil {
		return nil, err
	}
	input := cfg.Input
	if len(input) == 0 {
		input = cfg.Schema
	}
	if cfg.Updating && len(cfg.PrimaryKey) == 0 {
		return nil, fmt.Errorf("jdbc sink %s: %w; declare PRIMARY KEY (...) NOT ENFORCED", cfg.Name, ErrUpdatingInput)
	}
	s := &Sink{o: o, log: cfg.Log, clock: connectors.ClockOr(cfg.Clock), input: input, sem: make(chan struct{}, 1)}
	conn, err := connect(ctx, o)
	if err != nil {
		if connectionLost(err) {
			err = fmt.Errorf("%w: %w", ErrUnreachable, err)
		}
		return nil, fmt.Errorf("jdbc sink %s: connect to %s: %w", cfg.Name, o.where, err)
	}
	s.conn = conn
	if err := s.prepare(ctx, cfg); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	s.lastFlush = s.clock.Now()
	bg, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	if o.flushEvery > 0 {
		go s.flushEvery(bg)
	} else {
		close(s.done)
	}
	return s, nil
}

// prepare checks the database table and builds the statements.
func (s *Sink) prepare(ctx context.Context, cfg connectors.SinkConfig) error {
	t, err := describeTable(ctx, s.conn, s.o)
	if err != nil {
		return err
	}
	s.table = t
	dbCols, err := t.match(cfg.Name, s.input, writing)
	if err != nil {
		return err
	}
	quoted := make([]string, len(dbCols))
	for i, c := range dbCols {
		s.copyCols = append(s.copyCols, c.name)
		quoted[i] = pgx.Identifier{c.name}.Sanitize()
	}
	if len(cfg.PrimaryKey) == 0 {
		return nil
	}
	var keyNames []string
	isKey := map[int]bool{}
	for _, k := range cfg.PrimaryKey {
		i := s.input.Index(k)
		if i < 0 {
			return fmt.Errorf("jdbc sink %s: %w: primary key column %s is not written", cfg.Name, ErrSchemaMismatch, k)
		}
		s.keyIdx = append(s.keyIdx, i)
		isKey[i] = true
		keyNames = append(keyNames, dbCols[i].name)
	}
	if !t.hasUnique(keyNames) {
		return fmt.Errorf("jdbc sink %s: %w: PRIMARY KEY (%s) needs a primary key or unique index on (%s) in %s for INSERT ... ON CONFLICT",
			cfg.Name, ErrSchemaMismatch, strings.Join(cfg.PrimaryKey, ", "), strings.Join(keyNames, ", "), t)
	}
	// One statement per flush for each kind of change: the rows go as one array per
	// column, unnested (keys are unique in a flush, as the buffer folds them).
	unnest := make([]string, len(quoted))
	var set []string
	for i, q := range quoted {
		unnest[i] = fmt.Sprintf("$%d::%s[]", i+1, dbCols[i].display)
		if !isKey[i] {
			set = append(set, q+" = EXCLUDED."+q)
		}
	}
	conflict := "DO NOTHING"
	if len(set) > 0 {
		conflict = "DO UPDATE SET " + strings.Join(set, ", ")
	}
	keyQuoted := make([]string, len(s.keyIdx))
	keyUnnest := make([]string, len(s.keyIdx))
	for j, i := range s.keyIdx {
		keyQuoted[j] = quoted[i]
		keyUnnest[j] = fmt.Sprintf("$%d::%s[]", j+1, dbCols[i].display)
	}
	s.upsertSQL = fmt.Sprintf("INSERT INTO %s (%s) SELECT * FROM unnest(%s) ON CONFLICT (%s) %s", t.ident(),
		strings.Join(quoted, ", "), strings.Join(unnest, ", "), strings.Join(keyQuoted, ", "), conflict)
	s.deleteSQL = fmt.Sprintf("DELETE FROM %s WHERE (%s) IN (SELECT * FROM unnest(%s))", t.ident(),
		strings.Join(keyQuoted, ", "), strings.Join(keyUnnest, ", "))
	s.byKey = map[string]int{}
	return nil
}

func (s *Sink) lock(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Sink) unlock() { <-s.sem }

// Write buffers the batch and flushes when 'sink.buffer-flush.max-rows' rows are buffered.
func (s *Sink) Write(ctx context.Context, b connectors.ChangeBatch) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if s.bgErr != nil {
		return s.bgErr
	}
	for i, r := range b.Rows {
		kind := connectors.Insert
		if b.Kinds != nil {
			kind = b.Kinds[i]
		}
		if s.byKey == nil {
			if kind == connectors.UpdateBefore || kind == connectors.Delete {
				return fmt.Errorf("jdbc sink %s: %w", s.o.table, ErrUpdatingInput)
			}
			s.pending = append(s.pending, change{row: append(types.Row(nil), r...)})
			continue
		}
		if kind == connectors.UpdateBefore {
			// The +U that follows replaces the row: an upsert needs no retraction.
			continue
		}
		s.keyBuf = s.keyBuf[:0]
		for _, k := range s.keyIdx {
			s.keyBuf = types.AppendValue(s.keyBuf, r[k], types.Canonical)
		}
		c := change{del: kind == connectors.Delete, row: append(types.Row(nil), r...)}
		if j, ok := s.byKey[string(s.keyBuf)]; ok {
			s.pending[j] = c
		} else {
			s.byKey[string(s.keyBuf)] = len(s.pending)
			s.pending = append(s.pending, c)
		}
	}
	if s.o.flushRows > 0 && len(s.pending) >= s.o.flushRows {
		return s.flushLocked(ctx)
	}
	return nil
}

// Flush writes everything buffered; the runtime calls it at checkpoints and at the end.
func (s *Sink) Flush(ctx context.Context) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if s.bgErr != nil {
		return s.bgErr
	}
	return s.flushLocked(ctx)
}

// flushEvery flushes rows that waited 'sink.buffer-flush.interval'.
func (s *Sink) flushEvery(ctx context.Context) {
	defer close(s.done)
	tick := s.clock.NewTicker(max(s.o.flushEvery/2, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
		}
		if s.lock(ctx) != nil {
			return
		}
		if s.bgErr == nil && len(s.pending) > 0 && s.clock.Now().Sub(s.lastFlush) >= s.o.flushEvery {
			if err := s.flushLocked(ctx); err != nil && ctx.Err() == nil {
				s.bgErr = err
			}
		}
		s.unlock()
	}
}

// flushLocked writes the buffer in one transaction, retrying as the type says.
func (s *Sink) flushLocked(ctx context.Context) error {
	if len(s.pending) == 0 {
		s.lastFlush = s.clock.Now()
		return nil
	}
	var lost, refused int
	var since time.Time
	for {
		err := s.tryFlush(ctx)
		if err == nil {
			if lost > 0 {
				s.log.Info("jdbc sink: connection restored", "table", s.o.table, "database", s.o.where,
					"attempts", lost, "after", s.clock.Now().Sub(since).Round(time.Millisecond).String())
			}
			s.degraded.Store(nil)
			s.written.Add(int64(len(s.pending)))
			clear(s.pending)
			s.pending = s.pending[:0]
			if s.byKey != nil {
				clear(s.byKey)
			}
			s.lastFlush = s.clock.Now()
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if connectionLost(err) {
			if lost == 0 {
				since = s.clock.Now()
				s.log.Warn("jdbc sink: connection lost, retrying until it is back", "table", s.o.table, "database", s.o.where, "error", err.Error())
			}
			lost++
			reason := fmt.Sprintf("connection to %s lost since %s: %v; retrying (attempt %d), %d rows waiting",
				s.o.where, since.UTC().Format("15:04:05"), err, lost, len(s.pending))
			s.degraded.Store(&reason)
			if err := sleep(ctx, s.clock, backoff(lost)); err != nil {
				return err
			}
			continue
		}
		refused++
		if refused > s.o.maxRetries {
			return fmt.Errorf("jdbc sink %s: write to %s: %w", s.o.table, s.o.where, err)
		}
		s.log.Warn("jdbc sink: write refused, retrying", "table", s.o.table, "attempt", refused, "error", err.Error())
		if err := sleep(ctx, s.clock, time.Duration(refused)*time.Second); err != nil {
			return err
		}
	}
}

// tryFlush makes one attempt: (re)connect, then write the buffer in a transaction.
func (s *Sink) tryFlush(ctx context.Context) (err error) {
	if s.conn == nil || s.conn.IsClosed() {
		s.conn = nil
		conn, err := connect(ctx, s.o)
		if err != nil {
			return err
		}
		s.conn = conn
	}
	defer func() {
		if err != nil && s.conn.IsClosed() {
			s.conn = nil
		}
	}()
	tx, err := s.conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	if s.byKey == nil {
		_, err = tx.CopyFrom(ctx, pgx.Identifier{s.table.schema, s.table.name}, s.copyCols, &copyRows{s: s})
	} else {
		err = s.sendUpserts(ctx, tx)
	}
	if err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func (s *Sink) sendUpserts(ctx context.Context, tx pgx.Tx) error {
	ups := make([][]any, len(s.input))
	dels := make([][]any, len(s.keyIdx))
	for _, c := range s.pending {
		if c.del {
			for j, k := range s.keyIdx {
				dels[j] = append(dels[j], toArg(c.row[k], s.input[k].Type))
			}
			continue
		}
		for i, col := range s.input {
			ups[i] = append(ups[i], toArg(c.row[i], col.Type))
		}
	}
	b := &pgx.Batch{}
	if len(dels[0]) > 0 {
		b.Queue(s.deleteSQL, anys(dels)...)
	}
	if len(ups[0]) > 0 {
		b.Queue(s.upsertSQL, anys(ups)...)
	}
	return tx.SendBatch(ctx, b).Close()
}

func anys(cols [][]any) []any {
	out := make([]any, len(cols))
	for i, c := range cols {
		out[i] = c
	}
	return out
}

func (s *Sink) args(r types.Row) []any {
	args := make([]any, len(s.input))
	for i, c := range s.input {
		args[i] = toArg(r[i], c.Type)
	}
	return args
}

// copyRows feeds the buffer to COPY.
type copyRows struct {
	s *Sink
	i int
}

func (c *copyRows) Next() bool { c.i++; return c.i <= len(c.s.pending) }

func (c *copyRows) Values() ([]any, error) { return c.s.args(c.s.pending[c.i-1].row), nil }

func (c *copyRows) Err() error { return nil }

// Degraded says why the sink is waiting for the database, "" when it is not. It is
// safe to call from any goroutine: while a flush waits out an outage, the sink's own
// goroutine is inside Write or Flush.
func (s *Sink) Degraded() string {
	if r := s.degraded.Load(); r != nil {
		return *r
	}
	return ""
}

// Written counts the rows (changes after folding by key) the sink has committed.
func (s *Sink) Written() int64 { return s.written.Load() }

// Close stops the interval flusher and closes the connection; rows not flushed are
// dropped (the runtime flushes before it closes a sink that finished).
func (s *Sink) Close() error {
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
	if s.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.conn.Close(ctx) // the server ends the session either way
		s.conn = nil
	}
	return nil
}
