package eval

import (
	"testing"
	"time"

	"github.com/pipesql/pipesql/planner"
	"github.com/pipesql/pipesql/types"
)

// benchRows are event rows: (id BIGINT, ts TIMESTAMP(3), ltz TIMESTAMP_LTZ(3), name STRING).
func benchRows(n int) []types.Row {
	base := time.Date(2024, 3, 9, 0, 0, 0, 0, time.UTC).UnixMicro()
	rows := make([]types.Row, n)
	for i := range rows {
		micros := base + int64(i)*1_234_567
		rows[i] = types.Row{types.BigIntValue(int64(i)), types.TimestampValue(micros),
			types.TimestampLTZValue(micros), types.StringValue("user-" + string(rune('a'+i%26)))}
	}
	return rows
}

func runBench(b *testing.B, e planner.Expr, env Env) {
	ev := mustCompile(b, e, env)
	rows := benchRows(1024)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ev(rows[i&1023]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvalDateFormat is DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm:ss') with its layout
// compiled once, on a TIMESTAMP and on a TIMESTAMP_LTZ in Asia/Shanghai.
func BenchmarkEvalDateFormat(b *testing.B) {
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("timestamp", func(b *testing.B) {
		runBench(b, fn(b, "DATE_FORMAT", col(1, "ts", tTS3), slit("yyyy-MM-dd HH:mm:ss")), utcEnv)
	})
	b.Run("timestamp_ltz", func(b *testing.B) {
		runBench(b, fn(b, "DATE_FORMAT", col(2, "ltz", tLTZ3), slit("yyyy-MM-dd HH:mm:ss")), Env{Location: sh})
	})
}

// BenchmarkCompare is the filter id > 500 on a BIGINT column, evaluated as a value and as
// a predicate, and a string equality for contrast.
func BenchmarkCompare(b *testing.B) {
	gt := fn(b, ">", col(0, "id", tBig), ilit(500))
	b.Run("int_column_literal", func(b *testing.B) { runBench(b, gt, utcEnv) })
	b.Run("int_predicate", func(b *testing.B) {
		p, err := CompilePredicate(gt, utcEnv)
		if err != nil {
			b.Fatal(err)
		}
		rows := benchRows(1024)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := p(rows[i&1023]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("string_equal", func(b *testing.B) { runBench(b, fn(b, "=", col(3, "name", tStr), slit("user-q")), utcEnv) })
	b.Run("and_of_two", func(b *testing.B) {
		runBench(b, fn(b, "AND", gt, fn(b, "<", col(0, "id", tBig), ilit(900))), utcEnv)
	})
}

func BenchmarkLikeAndIn(b *testing.B) {
	b.Run("like_prefix", func(b *testing.B) { runBench(b, fn(b, "LIKE", col(3, "name", tStr), slit("user-%")), utcEnv) })
	b.Run("like_general", func(b *testing.B) { runBench(b, fn(b, "LIKE", col(3, "name", tStr), slit("%s_r-%q")), utcEnv) })
	b.Run("in_set", func(b *testing.B) {
		items := make([]planner.Expr, 20)
		for i := range items {
			items[i] = ilit(int64(i * 37))
		}
		runBench(b, &planner.In{X: col(0, "id", tBig), List: items}, utcEnv)
	})
}
