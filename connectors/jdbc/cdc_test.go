package jdbc

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pipesql/pipesql/connectors"
	"github.com/pipesql/pipesql/internal/pgtest"
	"github.com/pipesql/pipesql/types"
)

// TestCDCRestoreInSnapshot stops a postgres-cdc source in the middle of its snapshot,
// changes rows on both sides of the last key it read, restores it from its snapshot
// (position) and reads on, then stops and restores it again while it streams. The
// changelog applied in Go must equal the table each time.
func TestCDCRestoreInSnapshot(t *testing.T) {
	t.Parallel()
	pg := pgtest.Start(t)
	pg.Exec(t, `CREATE TABLE acc (id bigint PRIMARY KEY, v text);
		ALTER TABLE acc REPLICA IDENTITY FULL;
		INSERT INTO acc SELECT i, 'v' || i FROM generate_series(1, 10000) i`)
	schema := types.Schema{col("id", types.TypeBigInt.WithNotNull(true)), col("v", types.TypeString)}
	info := connectors.TableInfo{Name: "acc", Schema: schema, PrimaryKey: []string{"id"}, Options: map[string]string{
		"connector": "postgres-cdc", "hostname": "127.0.0.1", "port": fmt.Sprint(pg.Port), "database-name": "postgres",
		"schema-name": "public", "table-name": "acc", "username": "postgres", "slot.name": "s1", "scan.snapshot.fetch.size": "2000"}}
	cfg := connectors.SourceConfig{TableInfo: info, Log: &testLog{},
		Produce: []connectors.ProducedColumn{{Name: "id", Type: schema[0].Type}, {Name: "v", Type: schema[1].Type},
			{Name: "ts", Type: types.TimestampLTZType(3), MetadataKey: "op_ts"}}}
	ctx := ctxT(t)
	state := map[int64]string{}
	apply := func(src connectors.Source, polls int, until func() bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for i := 0; polls == 0 || i < polls; i++ {
			bs, err := src.Poll(ctx, 50*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bs {
				for j, r := range b.Rows {
					kind := connectors.Insert
					if b.Kinds != nil {
						kind = b.Kinds[j]
					}
					id := r[0].Int()
					switch kind {
					case connectors.Insert, connectors.UpdateAfter:
						if _, dup := state[id]; dup && kind == connectors.Insert {
							t.Fatalf("+I of id %d twice", id)
						}
						state[id] = r[1].Str()
					default:
						if state[id] != r[1].Str() {
							t.Fatalf("%s of id %d = %q, the state has %q", kind, id, r[1].Str(), state[id])
						}
						delete(state, id)
					}
				}
			}
			if until != nil && until() {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the changelog did not come to equal the table within a minute")
			}
		}
	}
	table := func() string { return strings.Join(pg.Query(t, "SELECT id, v FROM acc ORDER BY id"), "\n") }
	mine := func() string {
		var ids []int64
		for id := range state {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		var b strings.Builder
		for i, id := range ids {
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "%d|%s", id, state[id])
		}
		return b.String()
	}
	equal := func() bool { return mine() == table() }

	src, err := NewCDCSource(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	apply(src, 2, nil) // 4000 of the 10000 rows
	if len(state) != 4000 {
		t.Fatalf("%d rows after two polls", len(state))
	}
	snap, _ := src.Snapshot()
	src.Close()
	// Changes to rows read (ids <= 4000) and not read yet, and new rows.
	pg.Exec(t, `UPDATE acc SET v = v || '+' WHERE id % 10 = 3; DELETE FROM acc WHERE id % 10 = 7;
		INSERT INTO acc SELECT i, 'new' || i FROM generate_series(20001, 20100) i`)
	cfg.Restored = snap
	if src, err = NewCDCSource(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	apply(src, 0, equal)
	pg.Exec(t, `UPDATE acc SET v = 'again' WHERE id % 100 = 11`)
	apply(src, 0, equal)
	snap, _ = src.Snapshot()
	if err := src.CheckpointComplete(ctx, 1); err != nil {
		t.Fatal(err)
	}
	src.Close()
	pg.Exec(t, `DELETE FROM acc WHERE id % 100 = 12; INSERT INTO acc VALUES (30000, 'late')`)
	cfg.Restored = snap
	if src, err = NewCDCSource(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	apply(src, 0, equal)
}

// TestCDCOutage crashes PostgreSQL while a postgres-cdc source streams (an immediate
// stop: a fast shutdown waits for the client to confirm all WAL, which the source does
// only up to its last checkpoint, so it takes wal_sender_timeout): the source says
// it is degraded instead of failing, and when the server is back it streams on from
// its position, the changes made before and after the outage all there once.
func TestCDCOutage(t *testing.T) {
	t.Parallel()
	pg := pgtest.Start(t)
	pg.Exec(t, `CREATE TABLE kv (k bigint PRIMARY KEY, v bigint); ALTER TABLE kv REPLICA IDENTITY FULL;
		INSERT INTO kv SELECT i, i FROM generate_series(1, 100) i`)
	schema := types.Schema{col("k", types.TypeBigInt.WithNotNull(true)), col("v", types.TypeBigInt)}
	cfg := connectors.SourceConfig{Log: &testLog{}, TableInfo: connectors.TableInfo{Name: "kv", Schema: schema, PrimaryKey: []string{"k"},
		Options: map[string]string{"connector": "postgres-cdc", "hostname": "127.0.0.1", "port": fmt.Sprint(pg.Port),
			"database-name": "postgres", "schema-name": "public", "table-name": "kv", "username": "postgres", "slot.name": "s2"}},
		Produce: []connectors.ProducedColumn{{Name: "k", Type: schema[0].Type}, {Name: "v", Type: schema[1].Type}}}
	ctx := ctxT(t)
	src, err := NewCDCSource(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sum := int64(0)
	poll := func() {
		bs, err := src.Poll(ctx, 50*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			for j, r := range b.Rows {
				if b.Kinds == nil || b.Kinds[j] == connectors.Insert || b.Kinds[j] == connectors.UpdateAfter {
					sum += r[1].Int()
				} else {
					sum -= r[1].Int()
				}
			}
		}
	}
	want := func() int64 {
		var n int64
		fmt.Sscan(pg.Query(t, "SELECT sum(v)::bigint FROM kv")[0], &n)
		return n
	}
	waitFor(t, "the snapshot and a streamed update", func() bool { poll(); return sum == 5050 })
	pg.Exec(t, "UPDATE kv SET v = v + 1 WHERE k <= 10")
	waitFor(t, "a streamed update", func() bool { poll(); return sum == 5060 })
	pg.Kill(t)
	waitFor(t, "degraded", func() bool { poll(); return src.(*CDCSource).Degraded() != "" })
	if d := src.(*CDCSource).Degraded(); !strings.Contains(d, "replication connection to 127.0.0.1:") {
		t.Fatalf("degraded %q", d)
	}
	pg.Start(t)
	pg.Exec(t, "UPDATE kv SET v = v * 2 WHERE k > 90; DELETE FROM kv WHERE k = 50")
	w := want()
	deadline := time.Now().Add(time.Minute)
	for poll(); sum != w; poll() {
		if time.Now().After(deadline) {
			t.Fatalf("after the outage: sum %d, want %d; degraded %q", sum, w, src.(*CDCSource).Degraded())
		}
	}
	if d := src.(*CDCSource).Degraded(); d != "" {
		t.Fatalf("still degraded: %q", d)
	}
}
