package jdbc

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/internal/pgtest"
	"github.com/pipesql/pipesql/types"
)

// TestSinkAppendTypes writes a row of every mapped type and NULLs without a primary key
// and reads them back as PostgreSQL prints them.
func TestSinkAppendTypes(t *testing.T) {
	t.Parallel()
	pg := pgtest.Start(t)
	for _, pk := range [][]string{nil, {"i"}} {
		t.Run(fmt.Sprintf("key %v", pk), func(t *testing.T) { testSinkTypes(t, pg, pk) })
	}
}

// testSinkTypes writes every mapped type by COPY (no key) or by the unnested upsert.
func testSinkTypes(t *testing.T, pg *pgtest.Server, pk []string) {
	pg.Exec(t, `DROP TABLE IF EXISTS everything; CREATE TABLE everything (b boolean, s smallint, i integer UNIQUE, l bigint, f real, d double precision,
		n numeric(10,2), c char(3), v varchar(20), x text, y bytea, dt date, tm time, ts timestamp(3), tz timestamptz)`)
	schema := types.Schema{
		col("b", types.TypeBoolean), col("s", types.Type{Kind: types.SmallInt}), col("i", types.TypeInt),
		col("l", types.TypeBigInt), col("f", types.Type{Kind: types.Float}), col("d", types.TypeDouble),
		col("n", types.Type{Kind: types.Decimal, Prec: 10, Scale: 2}), col("c", types.Type{Kind: types.Char, Length: 3}),
		col("v", types.Type{Kind: types.Varchar, Length: 20}), col("x", types.TypeString), col("y", types.Type{Kind: types.Bytes}),
		col("dt", types.TypeDate), col("tm", types.Type{Kind: types.Time}), col("ts", types.TimestampType(3)),
		col("tz", types.TimestampLTZType(3)),
	}
	ctx := ctxT(t)
	s, err := OpenSink(ctx, sinkConfig(pg, "everything", schema, pk, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts, _ := types.ParseTimestamp("2026-12-01 23:59:58.125", types.CastSyntax)
	full := types.Row{
		types.BoolValue(true), types.IntValue(types.SmallInt, -7), types.IntValue(types.Int, 123456), types.BigIntValue(1 << 40),
		types.FloatValue(1.5), types.DoubleValue(-2.25), types.DecimalValue(big.NewRat(12345, 100)), types.StringValue("abc"),
		types.StringValue("héllo"), types.StringValue("line\nbreak"), types.BytesValue([]byte{0, 1, 255}),
		types.DateValue(types.DaysFromCivil(2026, 12, 1)), types.TimeValue(((13*60+14)*60+15)*1e6 + 500000),
		types.TimestampValue(ts), types.TimestampLTZValue(ts),
	}
	nulls := make(types.Row, len(schema))
	if pk != nil {
		nulls[2] = types.IntValue(types.Int, 2)
	}
	if err := s.Write(ctx, connectors.ChangeBatch{Rows: []types.Row{full, nulls}}); err != nil {
		t.Fatal(err)
	}
	if got := pg.Query(t, "SELECT count(*) FROM everything"); got[0] != "0" {
		t.Fatalf("rows visible before the flush: %v", got)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := pg.Query(t, `SELECT b::text, s::text, i::text, l::text, f::text, d::text, n::text, c::text, v, x, encode(y, 'hex'),
		dt::text, tm::text, ts::text, (tz AT TIME ZONE 'UTC')::text FROM everything ORDER BY b NULLS LAST`)
	want := []string{
		"true|-7|123456|1099511627776|1.5|-2.25|123.45|abc|héllo|line\nbreak|0001ff|2026-12-01|13:14:15.5|2026-12-01 23:59:58.125|2026-12-01 23:59:58.125",
		"NULL|NULL|NULL|" + strings.Repeat("NULL|", 11) + "NULL",
	}
	if pk != nil {
		want[1] = "NULL|NULL|2|" + strings.Repeat("NULL|", 11) + "NULL"
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}

// TestSinkUpsertRandom applies a random changelog (inserts, updates with their -U,
// deletes, keys seen again after their deletion) through flushes of every size and
// compares the table with the changelog applied in Go.
func TestSinkUpsertRandom(t *testing.T) {
	t.Parallel()
	pg := pgtest.Start(t)
	pg.Exec(t, `CREATE TABLE counts (region text, day date, n bigint NOT NULL, note text, PRIMARY KEY (day, region))`)
	schema := types.Schema{col("region", types.TypeString.WithNotNull(true)), col("day", types.TypeDate.WithNotNull(true)),
		col("n", types.TypeBigInt), col("note", types.TypeString)}
	ctx := ctxT(t)
	s, err := OpenSink(ctx, sinkConfig(pg, "counts", schema, []string{"region", "day"},
		map[string]string{"sink.buffer-flush.max-rows": "7", "sink.buffer-flush.interval": "0"}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	truth := map[string]string{}
	for range 300 {
		var b connectors.ChangeBatch
		for range rng.IntN(9) {
			region := fmt.Sprintf("r%d", rng.IntN(6))
			day := types.DaysFromCivil(2026, 12, 1+rng.IntN(3))
			key := fmt.Sprintf("%s|%s", region, types.DateValue(day))
			n := rng.Int64N(1000)
			note := types.NullValue
			if rng.IntN(2) == 0 {
				note = types.StringValue(fmt.Sprint("it's ", n))
			}
			row := types.Row{types.StringValue(region), types.DateValue(day), types.BigIntValue(n), note}
			_, exists := truth[key]
			switch {
			case exists && rng.IntN(3) == 0:
				b.Kinds = append(b.Kinds, connectors.Delete)
				b.Rows = append(b.Rows, row)
				delete(truth, key)
				continue
			case exists:
				b.Kinds = append(b.Kinds, connectors.UpdateBefore, connectors.UpdateAfter)
				b.Rows = append(b.Rows, row, row)
			default:
				b.Kinds = append(b.Kinds, connectors.Insert)
				b.Rows = append(b.Rows, row)
			}
			noteText := "NULL"
			if !note.IsNull() {
				noteText = note.Str()
			}
			truth[key] = fmt.Sprintf("%s|%d|%s", key, n, noteText)
		}
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
		if rng.IntN(20) == 0 {
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := pg.Query(t, "SELECT region, day::text, n, coalesce(note, 'NULL') FROM counts ORDER BY 1, 2")
	var want []string
	for _, v := range truth {
		want = append(want, v)
	}
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("table differs from the changelog applied:\ngot  %v\nwant %v", got, want)
	}
}

// TestSinkStartErrors: a table that cannot be written is refused when the sink opens,
// with the column or option named.
func TestSinkStartErrors(t *testing.T) {
	t.Parallel()
	pg := pgtest.Start(t)
	pg.Exec(t, `CREATE TABLE users (id bigint PRIMARY KEY, name text, born date); CREATE TABLE nokey (id bigint, name text)`)
	good := types.Schema{col("id", types.TypeBigInt.WithNotNull(true)), col("name", types.TypeString)}
	cases := []struct {
		name   string
		table  string
		schema types.Schema
		pk     []string
		extra  map[string]string
		is     error
		want   string
	}{
		{"missing table", "userz", good, []string{"id"}, nil, ErrNoTable, "'table-name' = 'userz' is not a table"},
		{"missing column", "users", append(good[:2:2], col("email", types.TypeString)), []string{"id"}, nil, ErrSchemaMismatch,
			"column email: column does not match the database table: public.users has no column email (its columns: id, name, born)"},
		{"type mismatch", "users", types.Schema{col("id", types.TypeBigInt), col("born", types.TypeString)}, []string{"id"}, nil, ErrSchemaMismatch,
			"column born: column does not match the database table: STRING cannot be written to public.users.born of type date"},
		{"narrower column", "users", types.Schema{col("id", types.TypeString)}, []string{"id"}, nil, ErrSchemaMismatch,
			"column id"},
		{"no unique index", "nokey", good, []string{"id"}, nil, ErrSchemaMismatch,
			"PRIMARY KEY (id) needs a primary key or unique index on (id) in public.nokey"},
		{"updating without key", "nokey", good, nil, map[string]string{}, ErrUpdatingInput, "PRIMARY KEY"},
		{"other database", "users", good, []string{"id"}, map[string]string{"url": "jdbc:mysql://localhost:3306/db"}, ErrBadOptions,
			"the mysql database is not supported"},
		{"bad url parameter", "users", good, []string{"id"}, map[string]string{"url": pg.JDBCURL("postgres") + "?sslmod=disable"}, ErrBadOptions,
			`unknown parameter "sslmod"`},
		{"wrong driver", "users", good, []string{"id"}, map[string]string{"driver": "com.mysql.cj.jdbc.Driver"}, ErrBadOptions,
			"speaks to PostgreSQL only"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := sinkConfig(pg, c.table, c.schema, c.pk, c.extra)
			if c.name == "updating without key" {
				cfg.Updating = true
			}
			s, err := OpenSink(ctxT(t), cfg)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want %v containing %q", err, c.is, c.want)
			}
		})
	}
}

// TestSinkOutage stops the database while rows wait to be flushed: the flush waits,
// the sink says why it is degraded, and once the database is back the flush completes
// with nothing lost and the sink healthy again.
func TestSinkOutage(t *testing.T) {
	t.Parallel()
	pg := pgtest.Start(t)
	pg.Exec(t, `CREATE TABLE kv (k integer PRIMARY KEY, v integer)`)
	schema := types.Schema{col("k", types.TypeInt.WithNotNull(true)), col("v", types.TypeInt)}
	ctx := ctxT(t)
	log := &testLog{}
	cfg := sinkConfig(pg, "kv", schema, []string{"k"}, map[string]string{"sink.buffer-flush.interval": "0", "sink.buffer-flush.max-rows": "0"})
	cfg.Log = log
	s, err := OpenSink(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write := func(from, to int) {
		var b connectors.ChangeBatch
		for k := from; k < to; k++ {
			b.Rows = append(b.Rows, types.Row{types.IntValue(types.Int, int64(k)), types.IntValue(types.Int, int64(k*10))})
		}
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	write(0, 100)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	pg.Stop(t)
	write(100, 200)
	flushed := make(chan error, 1)
	go func() { flushed <- s.Flush(ctx) }()
	waitFor(t, "degraded status", func() bool { return s.Degraded() != "" })
	if d := s.Degraded(); !strings.Contains(d, "connection to 127.0.0.1:") || !strings.Contains(d, "100 rows waiting") {
		t.Fatalf("degraded reason %q", d)
	}
	select {
	case err := <-flushed:
		t.Fatalf("flush returned while the database is down: %v", err)
	default:
	}
	pg.Start(t)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if d := s.Degraded(); d != "" {
		t.Fatalf("still degraded after the flush: %q", d)
	}
	if got := pg.Query(t, "SELECT count(*), sum(v) FROM kv"); got[0] != "200|199000" {
		t.Fatalf("after the outage: %v", got)
	}
	if l := log.String(); !strings.Contains(l, "connection lost") || !strings.Contains(l, "connection restored") {
		t.Fatalf("log %s", l)
	}
}

// TestSinkIntervalFlush: rows reach the table after 'sink.buffer-flush.interval' with
// no further write or checkpoint.
func TestSinkIntervalFlush(t *testing.T) {
	t.Parallel()
	pg := pgtest.Start(t)
	pg.Exec(t, `CREATE TABLE ev (id bigint)`)
	ctx := ctxT(t)
	s, err := OpenSink(ctx, sinkConfig(pg, "ev", types.Schema{col("id", types.TypeBigInt)}, nil,
		map[string]string{"sink.buffer-flush.interval": "50 ms"}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Write(ctx, connectors.ChangeBatch{Rows: []types.Row{{types.BigIntValue(1)}, {types.BigIntValue(2)}}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "interval flush", func() bool { return pg.Query(t, "SELECT count(*) FROM ev")[0] == "2" })
}
