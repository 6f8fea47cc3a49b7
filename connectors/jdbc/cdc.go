package jdbc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/types"
)

// postgres-cdc option keys, as Flink CDC names them.
const (
	cdcHost    = "hostname"
	cdcPort    = "port"
	cdcDB      = "database-name"
	cdcSchema  = "schema-name"
	cdcTable   = "table-name"
	cdcUser    = "username"
	cdcPass    = "password"
	cdcSlot    = "slot.name"
	cdcPlugin  = "decoding.plugin.name"
	cdcStartup = "scan.startup.mode"
	cdcFetch   = "scan.snapshot.fetch.size"
)

var cdcOptions = []connectors.OptionSpec{
	{Key: cdcHost, Type: connectors.StringOption, Required: true, Source: true, Description: "the PostgreSQL server"},
	{Key: cdcPort, Type: connectors.IntOption, Default: "5432", Source: true, Description: "its port"},
	{Key: cdcDB, Type: connectors.StringOption, Required: true, Source: true, Description: "the database"},
	{Key: cdcSchema, Type: connectors.StringOption, Required: true, Source: true, Description: "the table's schema"},
	{Key: cdcTable, Type: connectors.StringOption, Required: true, Source: true, Description: "the table"},
	{Key: cdcUser, Type: connectors.StringOption, Required: true, Source: true, Description: "a user with the REPLICATION attribute who owns the table (to create its publication)"},
	{Key: cdcPass, Type: connectors.StringOption, Source: true, Description: "the user's password"},
	{Key: cdcSlot, Type: connectors.StringOption, Required: true, Source: true, Description: "the logical replication slot the job owns"},
	{Key: cdcPlugin, Type: connectors.EnumOption, Default: "pgoutput", Enum: []string{"pgoutput"}, Source: true,
		Description: "the logical decoding plugin: pgoutput, built into PostgreSQL"},
	{Key: cdcStartup, Type: connectors.EnumOption, Default: "initial", Enum: []string{"initial", "latest-offset", "snapshot"}, Source: true,
		Description: "initial: a snapshot then the changes; latest-offset: the changes from now on; snapshot: the snapshot only"},
	{Key: cdcFetch, Type: connectors.IntOption, Default: "1024", Source: true, Description: "rows of the snapshot read per round trip"},
}

// Metadata keys of postgres-cdc, as Flink CDC names them.
var cdcMetadata = []connectors.MetadataSpec{
	{Key: "database_name", Type: types.TypeString.WithNotNull(true)},
	{Key: "schema_name", Type: types.TypeString.WithNotNull(true)},
	{Key: "table_name", Type: types.TypeString.WithNotNull(true)},
	{Key: "op_ts", Type: types.TimestampLTZType(3).WithNotNull(true)},
}

// cdcPhase is where a CDC source is.
type cdcPhase uint8

const (
	phaseSnapshot cdcPhase = iota // reading the table's snapshot
	phaseStream                   // reading changes from the slot
	phaseDone                     // 'snapshot' mode: the snapshot was read
)

// snapRange says which snapshot read the rows up to a key: a change to such a row that
// committed before lsn is in that snapshot already, and is skipped when streamed.
type snapRange struct {
	upTo types.Row // nil: no upper bound
	lsn  pglogrepl.LSN
}

// CDCSource reads a PostgreSQL table as a changelog: a snapshot of its rows (+I), taken
// at the point its replication slot was created, then the slot's logical replication
// stream (pgoutput) as +I, -U/+U and -D, one transaction at a time. Its checkpointed
// position is the phase, the last key of the snapshot read, and the end LSN of the last
// transaction returned; the slot's confirmed LSN advances only when a checkpoint
// completes, so a restart from any checkpoint finds its changes still in the slot.
//
// A restart in the middle of the snapshot reads the rest of the table (keys after the
// last one read) from a new snapshot, and skips the streamed changes to those rows
// that the new snapshot holds already, so nothing is lost or counted twice.
type CDCSource struct {
	o       *cdcOptionsRead
	log     connectors.Logger
	clock   connectors.Clock
	produce []connectors.ProducedColumn
	phys    []int // for each produced column, its column in the table (-1: metadata)
	schema  types.Schema
	keyIdx  []int // the primary key's columns in schema
	dbCols  []dbColumn
	relID   uint32
	typeMap *pgtype.Map

	phase   cdcPhase
	start   pglogrepl.LSN // the slot's consistent point: the stream starts there
	pos     pglogrepl.LSN // end of the last transaction returned
	lastKey types.Row     // the last key of the snapshot returned, nil before the first
	ranges  []snapRange

	conn     *pgx.Conn // the snapshot's transaction
	tx       pgx.Tx
	repl     *pgconn.PgConn // the replication connection
	snapSel  string         // SELECT columns FROM table
	keyTuple string         // (key columns) for comparing with the last key
	orderBy  string
	streams  bool          // START_REPLICATION was sent
	txnLSN   pglogrepl.LSN // the commit LSN of the transaction being received

	pending   []types.Row // the transaction being received
	kinds     []connectors.RowKind
	txnCommit time.Time
	lastAck   time.Time
	confirmed pglogrepl.LSN
	// lastSnap is the position of the last Snapshot. Checkpoints run one at a time, so
	// when one completes, the last snapshot is its.
	lastSnap pglogrepl.LSN
	degraded string
	lost     int // failed attempts to reach the server since it was last reached
}

type cdcOptionsRead struct {
	table, host, db, schema, name, user, pass, slot, mode string
	port, fetch                                           int64
	pub                                                   string
	o                                                     *tableOptions
}

var (
	_ connectors.Source = (*CDCSource)(nil)
	_ connectors.Status = (*CDCSource)(nil)
)

func parseCDC(t connectors.TableInfo) (*cdcOptionsRead, error) {
	o := connectors.NewOptions(t.Name, t.Options, cdcOptions)
	r := &cdcOptionsRead{table: t.Name, host: o.String(cdcHost), db: o.String(cdcDB), schema: o.String(cdcSchema),
		name: o.String(cdcTable), user: o.String(cdcUser), pass: o.String(cdcPass), slot: o.String(cdcSlot)}
	var err error
	if r.port, _, err = o.Int(cdcPort); err != nil {
		return nil, err
	}
	if r.fetch, _, err = o.Int(cdcFetch); err != nil {
		return nil, err
	}
	if r.fetch < 1 {
		return nil, fmt.Errorf("table %s: %w: option '%s' = '%d' must be at least 1", t.Name, ErrBadOptions, cdcFetch, r.fetch)
	}
	if r.mode, err = o.Enum(cdcStartup, "initial", "latest-offset", "snapshot"); err != nil {
		return nil, err
	}
	if _, err = o.Enum(cdcPlugin, "pgoutput"); err != nil {
		return nil, err
	}
	for _, c := range r.slot {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return nil, fmt.Errorf("table %s: %w: option '%s' = '%s': a slot name is lower-case letters, digits and _", t.Name, ErrBadOptions, cdcSlot, r.slot)
		}
	}
	if len(t.PrimaryKey) == 0 {
		return nil, fmt.Errorf("table %s: %w: a postgres-cdc table needs PRIMARY KEY (...) NOT ENFORCED: the key its snapshot is read by", t.Name, ErrBadOptions)
	}
	r.pub = "pipesql_" + r.slot
	u := url.URL{Scheme: "postgres", Host: fmt.Sprintf("%s:%d", r.host, r.port), Path: "/" + r.db,
		RawQuery: "sslmode=prefer&connect_timeout=10"}
	u.User = url.UserPassword(r.user, r.pass)
	if r.pass == "" {
		u.User = url.User(r.user)
	}
	r.o = &tableOptions{table: t.Name, dsn: u.String(), where: fmt.Sprintf("%s:%d/%s", r.host, r.port, r.db),
		dbTable: pgx.Identifier{r.schema, r.name}.Sanitize()}
	return r, nil
}

// NewCDCSource opens a postgres-cdc source; it is the factory's NewSource.
func NewCDCSource(ctx context.Context, cfg connectors.SourceConfig) (connectors.Source, error) {
	o, err := parseCDC(cfg.TableInfo)
	if err != nil {
		return nil, err
	}
	s := &CDCSource{o: o, log: cfg.Log, clock: connectors.ClockOr(cfg.Clock), produce: cfg.Produce, schema: cfg.Schema,
		typeMap: pgtype.NewMap()}
	for _, c := range cfg.Produce {
		s.phys = append(s.phys, cfg.Schema.Index(c.Name))
		if c.MetadataKey != "" {
			s.phys[len(s.phys)-1] = -1
		}
	}
	for _, k := range cfg.PrimaryKey {
		s.keyIdx = append(s.keyIdx, cfg.Schema.Index(k))
	}
	conn, err := connect(ctx, o.o)
	if err != nil {
		if connectionLost(err) {
			err = fmt.Errorf("%w: %w", ErrUnreachable, err)
		}
		return nil, fmt.Errorf("postgres-cdc %s: connect to %s: %w", cfg.Name, o.o.where, err)
	}
	s.conn = conn
	if err := s.prepare(ctx, cfg); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *CDCSource) prepare(ctx context.Context, cfg connectors.SourceConfig) error {
	t, err := describeTable(ctx, s.conn, s.o.o)
	if err != nil {
		return err
	}
	if s.dbCols, err = t.match(cfg.Name, cfg.Schema, reading); err != nil {
		return err
	}
	if len(t.columns) != len(cfg.Schema) {
		return fmt.Errorf("postgres-cdc %s: %w: %s has %d columns, the table declares %d (declare them all, in order)",
			cfg.Name, ErrSchemaMismatch, t, len(t.columns), len(cfg.Schema))
	}
	for i, c := range s.dbCols {
		if c.name != t.columns[i].name {
			return fmt.Errorf("postgres-cdc %s: %w: column %s is column %d of %s; declare the columns in the table's order",
				cfg.Name, ErrSchemaMismatch, cfg.Schema[i].Name, i+1, t)
		}
	}
	var keyNames []string
	for _, k := range s.keyIdx {
		keyNames = append(keyNames, s.dbCols[k].name)
	}
	if !t.hasUnique(keyNames) {
		return fmt.Errorf("postgres-cdc %s: %w: PRIMARY KEY (%s) is not a primary key or unique index of %s", cfg.Name, ErrSchemaMismatch, strings.Join(cfg.PrimaryKey, ", "), t)
	}
	var ident string
	if err := s.conn.QueryRow(ctx, "SELECT relreplident::text, oid::int8 FROM pg_class WHERE oid = to_regclass($1)", s.o.o.dbTable).Scan(&ident, new(int64)); err != nil {
		return err
	}
	if ident != "f" {
		return fmt.Errorf("postgres-cdc %s: %w: %s must send whole old rows for -U and -D: ALTER TABLE %s REPLICA IDENTITY FULL", cfg.Name, ErrBadOptions, t, t.ident())
	}
	var has bool
	if err := s.conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)", s.o.pub).Scan(&has); err != nil {
		return err
	}
	if !has {
		if _, err := s.conn.Exec(ctx, fmt.Sprintf("CREATE PUBLICATION %s FOR TABLE %s", pgx.Identifier{s.o.pub}.Sanitize(), t.ident())); err != nil {
			return fmt.Errorf("postgres-cdc %s: create publication %s: %w", cfg.Name, s.o.pub, err)
		}
	}
	var order, sel []string
	for _, c := range s.dbCols {
		sel = append(sel, pgx.Identifier{c.name}.Sanitize())
	}
	for _, k := range s.keyIdx {
		q := pgx.Identifier{s.dbCols[k].name}.Sanitize()
		if s.schema[k].Type.IsString() {
			q += ` COLLATE "C"` // the order types.Compare has
		}
		order = append(order, q)
	}
	s.snapSel = "SELECT " + strings.Join(sel, ", ") + " FROM " + t.ident()
	s.keyTuple = "(" + strings.Join(order, ", ") + ")"
	s.orderBy = " ORDER BY " + strings.Join(order, ", ")

	if s.repl, err = s.replConn(ctx); err != nil {
		return err
	}
	if cfg.Restored != nil {
		return s.restore(ctx, cfg.Restored)
	}
	// A fresh start owns the slot: one left by an earlier run without a checkpoint goes.
	s.conn.Exec(ctx, "SELECT pg_drop_replication_slot($1) FROM pg_replication_slots WHERE slot_name = $1", s.o.slot)
	res, err := pglogrepl.CreateReplicationSlot(ctx, s.repl, s.o.slot, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{SnapshotAction: "EXPORT_SNAPSHOT", Mode: pglogrepl.LogicalReplication})
	if err != nil {
		return fmt.Errorf("postgres-cdc %s: create slot %s: %w", cfg.Name, s.o.slot, err)
	}
	if s.start, err = pglogrepl.ParseLSN(res.ConsistentPoint); err != nil {
		return err
	}
	s.pos, s.confirmed = s.start, s.start
	if s.o.mode == "latest-offset" {
		s.phase = phaseStream
		return nil
	}
	s.ranges = []snapRange{{lsn: s.start}}
	return s.beginSnapshot(ctx, res.SnapshotName)
}

func (s *CDCSource) replConn(ctx context.Context) (*pgconn.PgConn, error) {
	sep := "&"
	if !strings.Contains(s.o.o.dsn, "?") {
		sep = "?"
	}
	c, err := pgconn.Connect(ctx, s.o.o.dsn+sep+"replication=database")
	if err != nil {
		return nil, fmt.Errorf("postgres-cdc %s: replication connection: %w", s.o.table, err)
	}
	return c, nil
}

// beginSnapshot opens the snapshot's transaction on the exported snapshot and its cursor
// over the rows after lastKey.
func (s *CDCSource) beginSnapshot(ctx context.Context, snapshot string) error {
	tx, err := s.conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, fmt.Sprintf("SET TRANSACTION SNAPSHOT '%s'", snapshot)); err != nil {
		tx.Rollback(context.Background())
		return fmt.Errorf("postgres-cdc %s: import snapshot: %w", s.o.table, err)
	}
	sql := s.snapSel + s.orderBy
	var args []any
	if s.lastKey != nil {
		params := make([]string, len(s.keyIdx))
		for i, k := range s.keyIdx {
			params[i] = fmt.Sprintf("$%d", i+1)
			args = append(args, toArg(s.lastKey[i], s.schema[k].Type))
		}
		sql = s.snapSel + " WHERE " + s.keyTuple + " > (" + strings.Join(params, ", ") + ")" + s.orderBy
	}
	if _, err := tx.Exec(ctx, "DECLARE pipesql_snapshot NO SCROLL CURSOR FOR "+sql, args...); err != nil {
		tx.Rollback(context.Background())
		return fmt.Errorf("postgres-cdc %s: snapshot: %w", s.o.table, err)
	}
	s.tx, s.phase = tx, phaseSnapshot
	return nil
}

// restore continues from a checkpoint: the stream from its position, or the rest of
// the snapshot from a new one.
func (s *CDCSource) restore(ctx context.Context, data []byte) error {
	if err := s.decodeState(data); err != nil {
		return fmt.Errorf("postgres-cdc %s: restore: %w", s.o.table, err)
	}
	var exists bool
	if err := s.conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)", s.o.slot).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return fmt.Errorf("postgres-cdc %s: %w: the checkpoint reads slot %s, which no longer exists; start the job without its checkpoints to take a new snapshot",
			s.o.table, connectors.ErrInputMismatch, s.o.slot)
	}
	s.confirmed = s.pos
	if s.phase != phaseSnapshot {
		return nil
	}
	// The snapshot the checkpoint was reading is gone with its connection: read the rest
	// from a temporary slot's snapshot, and remember from which LSN the stream holds what
	// it does not.
	tmp, err := s.replConn(ctx)
	if err != nil {
		return err
	}
	defer tmp.Close(context.Background())
	res, err := pglogrepl.CreateReplicationSlot(ctx, tmp, s.o.slot+"_resume", "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Temporary: true, SnapshotAction: "EXPORT_SNAPSHOT", Mode: pglogrepl.LogicalReplication})
	if err != nil {
		return fmt.Errorf("postgres-cdc %s: snapshot to resume from: %w", s.o.table, err)
	}
	lsn, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return err
	}
	if n := len(s.ranges); n > 0 && s.ranges[n-1].upTo == nil {
		s.ranges[n-1].upTo = s.lastKey
	}
	if s.lastKey == nil {
		s.ranges = nil // nothing was read: the new snapshot holds every row
	}
	s.ranges = append(s.ranges, snapRange{lsn: lsn})
	return s.beginSnapshot(ctx, res.SnapshotName)
}

// Splits is the one split of the table.
func (s *CDCSource) Splits() []string { return []string{s.o.schema + "." + s.o.name} }

// Poll returns the next rows of the snapshot, or the changes of the transactions that
// committed since the last call.
func (s *CDCSource) Poll(ctx context.Context, maxWait time.Duration) ([]connectors.SourceBatch, error) {
	switch s.phase {
	case phaseDone:
		return nil, io.EOF
	case phaseSnapshot:
		return s.pollSnapshot(ctx)
	}
	return s.pollStream(ctx, maxWait)
}

func (s *CDCSource) pollSnapshot(ctx context.Context) ([]connectors.SourceBatch, error) {
	rs, err := s.tx.Query(ctx, fmt.Sprintf("FETCH %d FROM pipesql_snapshot", s.o.fetch))
	if err != nil {
		return nil, fmt.Errorf("postgres-cdc %s: snapshot: %w", s.o.table, err)
	}
	var rows []types.Row
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			rs.Close()
			return nil, err
		}
		full := make(types.Row, len(s.schema))
		for i, c := range s.schema {
			full[i] = fromDB(vals[i], c.Type)
		}
		rows = append(rows, s.emit(full, time.Unix(0, 0)))
		s.lastKey = s.key(full)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("postgres-cdc %s: snapshot: %w", s.o.table, err)
	}
	if int64(len(rows)) < s.o.fetch {
		s.tx.Commit(ctx)
		s.tx = nil
		if s.o.mode == "snapshot" {
			s.phase = phaseDone
		} else {
			s.phase = phaseStream
		}
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return []connectors.SourceBatch{{Split: s.Splits()[0], Rows: rows}}, nil
}

func (s *CDCSource) key(full types.Row) types.Row {
	k := make(types.Row, len(s.keyIdx))
	for i, j := range s.keyIdx {
		k[i] = full[j]
	}
	return k
}

// emit makes the produced row of a full row.
func (s *CDCSource) emit(full types.Row, opTS time.Time) types.Row {
	out := make(types.Row, len(s.produce))
	for i, c := range s.produce {
		if s.phys[i] >= 0 {
			out[i] = full[s.phys[i]]
			continue
		}
		switch c.MetadataKey {
		case "database_name":
			out[i] = types.StringValue(s.o.db)
		case "schema_name":
			out[i] = types.StringValue(s.o.schema)
		case "table_name":
			out[i] = types.StringValue(s.o.name)
		case "op_ts":
			out[i] = types.TimestampLTZValue(opTS.UnixMilli() * 1000)
		}
	}
	return out
}

// skip reports whether a change to the row with key k, committed at lsn, is in the
// snapshot that read the row already.
func (s *CDCSource) skip(k types.Row, lsn pglogrepl.LSN) bool {
	for _, r := range s.ranges {
		if r.upTo == nil || compareRows(k, r.upTo) <= 0 {
			return lsn < r.lsn
		}
	}
	return false
}

func compareRows(a, b types.Row) int {
	for i := range a {
		if c := types.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

func (s *CDCSource) pollStream(ctx context.Context, maxWait time.Duration) ([]connectors.SourceBatch, error) {
	if s.repl == nil {
		// The connection was lost: reconnect and stream again from the position (the
		// transaction being received when it broke comes again whole).
		repl, err := s.replConn(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if !connectionLost(err) {
				return nil, err
			}
			return nil, s.lostConnection(ctx, err, maxWait)
		}
		s.repl = repl
	}
	if !s.streams {
		err := pglogrepl.StartReplication(ctx, s.repl, s.o.slot, s.pos, pglogrepl.StartReplicationOptions{
			PluginArgs: []string{"proto_version '1'", "publication_names '" + s.o.pub + "'"}})
		if err != nil {
			if connectionLost(err) || s.repl.IsClosed() {
				return nil, s.lostConnection(ctx, err, maxWait)
			}
			return nil, fmt.Errorf("postgres-cdc %s: start replication at %s: %w", s.o.table, s.pos, err)
		}
		s.streams = true
		s.lastAck = s.clock.Now()
		if s.lost > 0 {
			s.log.Info("postgres-cdc: replication resumed", "table", s.o.table, "lsn", s.pos.String(), "attempts", s.lost)
		}
		s.lost, s.degraded = 0, ""
	}
	var rows []types.Row
	var kinds []connectors.RowKind
	deadline := s.clock.Now().Add(maxWait)
	for s.repl != nil { // nil once the connection is lost: the next Poll reconnects
		if s.clock.Now().Sub(s.lastAck) > 5*time.Second {
			if err := s.ack(ctx); err != nil {
				s.lostConnection(context.WithoutCancel(ctx), err, 0)
				break
			}
		}
		wait := deadline.Sub(s.clock.Now())
		if wait <= 0 || (len(rows) > 0 && len(s.pending) == 0) {
			break
		}
		rctx, cancel := context.WithTimeout(ctx, wait)
		msg, err := s.repl.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			if pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded) {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				break
			}
			if connectionLost(err) || s.repl.IsClosed() {
				// Return the transactions received whole; the next Poll reconnects.
				s.lostConnection(context.WithoutCancel(ctx), err, 0)
				break
			}
			return nil, fmt.Errorf("postgres-cdc %s: replication: %w", s.o.table, err)
		}
		cd, ok := msg.(*pgproto3.CopyData)
		if !ok {
			if e, isErr := msg.(*pgproto3.ErrorResponse); isErr {
				return nil, fmt.Errorf("postgres-cdc %s: replication: %s", s.o.table, e.Message)
			}
			continue
		}
		switch cd.Data[0] {
		case pglogrepl.PrimaryKeepaliveMessageByteID:
			ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(cd.Data[1:])
			if err == nil && ka.ReplyRequested {
				if err := s.ack(ctx); err != nil {
					s.lostConnection(context.WithoutCancel(ctx), err, 0)
				}
			}
		case pglogrepl.XLogDataByteID:
			xld, err := pglogrepl.ParseXLogData(cd.Data[1:])
			if err != nil {
				return nil, err
			}
			done, err := s.decode(xld.WALData)
			if err != nil {
				return nil, err
			}
			if done {
				rows = append(rows, s.pending...)
				kinds = append(kinds, s.kinds...)
				s.pending, s.kinds = s.pending[:0:0], s.kinds[:0:0]
			}
		}
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return []connectors.SourceBatch{{Split: s.Splits()[0], Rows: rows, Kinds: kinds}}, nil
}

// lostConnection drops the replication connection after err, says so in Degraded, and
// waits a backoff (at most wait plus the minimum backoff).
func (s *CDCSource) lostConnection(ctx context.Context, err error, wait time.Duration) error {
	if s.repl != nil {
		s.repl.Close(context.Background())
	}
	s.repl, s.streams = nil, false
	s.pending, s.kinds = s.pending[:0], s.kinds[:0]
	if s.lost == 0 {
		s.log.Warn("postgres-cdc: replication connection lost, retrying until it is back", "table", s.o.table, "error", err.Error())
	}
	s.lost++
	s.degraded = fmt.Sprintf("replication connection to %s lost: %v; retrying (attempt %d) from LSN %s", s.o.o.where, err, s.lost, s.pos)
	if wait == 0 {
		return nil
	}
	return sleep(ctx, s.clock, min(backoff(s.lost), wait+minBackoff))
}

// decode handles one pgoutput message; done is true at a commit (s.pos moved past it).
func (s *CDCSource) decode(data []byte) (done bool, err error) {
	m, err := pglogrepl.Parse(data)
	if err != nil {
		return false, fmt.Errorf("postgres-cdc %s: decode: %w", s.o.table, err)
	}
	switch x := m.(type) {
	case *pglogrepl.RelationMessage:
		if x.Namespace == s.o.schema && x.RelationName == s.o.name {
			s.relID = x.RelationID
			if int(x.ColumnNum) != len(s.schema) {
				return false, fmt.Errorf("postgres-cdc %s: %w: the table now has %d columns, the job reads %d", s.o.table, ErrSchemaMismatch, x.ColumnNum, len(s.schema))
			}
		}
	case *pglogrepl.BeginMessage:
		s.txnCommit = x.CommitTime
		s.pending, s.kinds = s.pending[:0], s.kinds[:0]
		s.txnLSN = x.FinalLSN
	case *pglogrepl.InsertMessage:
		if x.RelationID == s.relID {
			return false, s.change(x.Tuple, nil, connectors.Insert)
		}
	case *pglogrepl.UpdateMessage:
		if x.RelationID == s.relID {
			return false, s.change(x.NewTuple, x.OldTuple, connectors.UpdateAfter)
		}
	case *pglogrepl.DeleteMessage:
		if x.RelationID == s.relID {
			return false, s.change(nil, x.OldTuple, connectors.Delete)
		}
	case *pglogrepl.TruncateMessage:
		return false, fmt.Errorf("postgres-cdc %s: the table was truncated: a changelog cannot say so (Flink CDC skips it); restart the job without its checkpoints", s.o.table)
	case *pglogrepl.CommitMessage:
		if x.CommitLSN < s.pos {
			// Before the position (a restart from a checkpoint): already returned.
			s.pending, s.kinds = s.pending[:0], s.kinds[:0]
			return false, nil
		}
		s.pos = x.TransactionEndLSN
		return true, nil
	}
	return false, nil
}

func (s *CDCSource) change(newT, oldT *pglogrepl.TupleData, kind connectors.RowKind) error {
	var oldRow, newRow types.Row
	var err error
	if oldT != nil {
		if oldRow, err = s.tuple(oldT); err != nil {
			return err
		}
	}
	if newT != nil {
		if newRow, err = s.tuple(newT); err != nil {
			return err
		}
	}
	keyRow := newRow
	if keyRow == nil {
		keyRow = oldRow
	}
	if s.skip(s.key(keyRow), s.txnLSN) {
		return nil
	}
	switch kind {
	case connectors.UpdateAfter:
		if oldRow == nil {
			return fmt.Errorf("postgres-cdc %s: an update without its old row (REPLICA IDENTITY must be FULL)", s.o.table)
		}
		s.pending = append(s.pending, s.emit(oldRow, s.txnCommit), s.emit(newRow, s.txnCommit))
		s.kinds = append(s.kinds, connectors.UpdateBefore, connectors.UpdateAfter)
	case connectors.Delete:
		s.pending = append(s.pending, s.emit(oldRow, s.txnCommit))
		s.kinds = append(s.kinds, connectors.Delete)
	default:
		s.pending = append(s.pending, s.emit(newRow, s.txnCommit))
		s.kinds = append(s.kinds, connectors.Insert)
	}
	return nil
}

// tuple decodes a pgoutput tuple (text values) into the table's row.
func (s *CDCSource) tuple(t *pglogrepl.TupleData) (types.Row, error) {
	if len(t.Columns) != len(s.schema) {
		return nil, fmt.Errorf("postgres-cdc %s: a row of %d columns, want %d", s.o.table, len(t.Columns), len(s.schema))
	}
	row := make(types.Row, len(s.schema))
	for i, c := range t.Columns {
		switch c.DataType {
		case 'n':
			row[i] = types.NullValue
		case 't':
			oid := s.oid(i)
			dt, ok := s.typeMap.TypeForOID(oid)
			if !ok {
				return nil, fmt.Errorf("postgres-cdc %s: column %s: %w: type oid %d", s.o.table, s.schema[i].Name, ErrUnsupportedType, oid)
			}
			v, err := dt.Codec.DecodeValue(s.typeMap, oid, pgtype.TextFormatCode, c.Data)
			if err != nil {
				return nil, fmt.Errorf("postgres-cdc %s: column %s: %w", s.o.table, s.schema[i].Name, err)
			}
			row[i] = fromDB(v, s.schema[i].Type)
		default:
			return nil, fmt.Errorf("postgres-cdc %s: column %s: an unchanged TOASTed value (REPLICA IDENTITY must be FULL)", s.o.table, s.schema[i].Name)
		}
	}
	return row, nil
}

var typnameOID = map[string]uint32{
	"bool": pgtype.BoolOID, "int2": pgtype.Int2OID, "int4": pgtype.Int4OID, "int8": pgtype.Int8OID,
	"float4": pgtype.Float4OID, "float8": pgtype.Float8OID, "numeric": pgtype.NumericOID, "text": pgtype.TextOID,
	"varchar": pgtype.VarcharOID, "bpchar": pgtype.BPCharOID, "bytea": pgtype.ByteaOID, "date": pgtype.DateOID,
	"time": pgtype.TimeOID, "timestamp": pgtype.TimestampOID, "timestamptz": pgtype.TimestamptzOID,
}

func (s *CDCSource) oid(col int) uint32 { return typnameOID[s.dbCols[col].typname] }

// ack tells the server how far the slot may be released: the position of the last
// completed checkpoint, never further.
func (s *CDCSource) ack(ctx context.Context) error {
	s.lastAck = s.clock.Now()
	err := pglogrepl.SendStandbyStatusUpdate(ctx, s.repl, pglogrepl.StandbyStatusUpdate{WALWritePosition: s.confirmed})
	if err != nil {
		return fmt.Errorf("postgres-cdc %s: standby status: %w", s.o.table, err)
	}
	return nil
}

// Snapshot is the phase, the stream position, the last snapshot key and the ranges.
func (s *CDCSource) Snapshot() ([]byte, error) {
	b := []byte{1, byte(s.phase)}
	b = binary.BigEndian.AppendUint64(b, uint64(s.start))
	b = binary.BigEndian.AppendUint64(b, uint64(s.pos))
	b = appendKey(b, s.lastKey)
	b = binary.AppendUvarint(b, uint64(len(s.ranges)))
	for _, r := range s.ranges {
		b = appendKey(b, r.upTo)
		b = binary.BigEndian.AppendUint64(b, uint64(r.lsn))
	}
	s.lastSnap = s.pos
	return b, nil
}

func appendKey(b []byte, k types.Row) []byte {
	if k == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	for _, v := range k {
		b = types.AppendValue(b, v, 0)
	}
	return b
}

func (s *CDCSource) decodeState(b []byte) error {
	bad := errors.New("truncated state")
	if len(b) < 18 || b[0] != 1 {
		return errors.New("unknown state version")
	}
	s.phase = cdcPhase(b[1])
	s.start = pglogrepl.LSN(binary.BigEndian.Uint64(b[2:]))
	s.pos = pglogrepl.LSN(binary.BigEndian.Uint64(b[10:]))
	b = b[18:]
	readKey := func() (types.Row, error) {
		if len(b) == 0 {
			return nil, bad
		}
		flag := b[0]
		b = b[1:]
		if flag == 0 {
			return nil, nil
		}
		k := make(types.Row, len(s.keyIdx))
		for i := range k {
			v, n, err := types.DecodeValue(b, 0)
			if err != nil {
				return nil, err
			}
			k[i], b = v, b[n:]
		}
		return k, nil
	}
	var err error
	if s.lastKey, err = readKey(); err != nil {
		return err
	}
	n, w := binary.Uvarint(b)
	if w <= 0 {
		return bad
	}
	b = b[w:]
	s.ranges = nil
	for range n {
		k, err := readKey()
		if err != nil {
			return err
		}
		if len(b) < 8 {
			return bad
		}
		s.ranges = append(s.ranges, snapRange{upTo: k, lsn: pglogrepl.LSN(binary.BigEndian.Uint64(b))})
		b = b[8:]
	}
	return nil
}

// CheckpointComplete confirms the position of checkpoint id's snapshot to the slot, so
// the server may release the WAL before it.
func (s *CDCSource) CheckpointComplete(ctx context.Context, id uint64) error {
	if s.lastSnap > s.confirmed {
		s.confirmed = s.lastSnap
	}
	if s.repl == nil || !s.streams {
		return nil
	}
	if err := s.ack(ctx); err != nil {
		s.degraded = err.Error()
		s.log.Warn("postgres-cdc: confirming the slot's position failed", "table", s.o.table, "error", err.Error())
		return nil
	}
	s.degraded = ""
	return nil
}

// Degraded says why the source works in a reduced way, "" when it does not.
func (s *CDCSource) Degraded() string { return s.degraded }

// Close ends the snapshot's transaction and the connections; the slot stays, for the
// next run to resume from.
func (s *CDCSource) Close() error {
	if s.tx != nil {
		s.tx.Rollback(context.Background())
		s.tx = nil
	}
	if s.conn != nil {
		s.conn.Close(context.Background())
		s.conn = nil
	}
	if s.repl != nil {
		s.repl.Close(context.Background())
		s.repl = nil
	}
	return nil
}
