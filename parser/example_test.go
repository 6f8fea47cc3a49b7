package parser_test

import (
	"fmt"

	"github.com/pipesql/pipesql/parser"
)

func ExampleParseScript() {
	script := `SET 'table.local-time-zone' = 'UTC';

CREATE TABLE events (
  user_id BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'events', 'format' = 'json');

insert into dau select window_start, count(distinct user_id)
from table(tumble(table events, descriptor(ts), interval '1' day))
group by window_start, window_end;`

	stmts, err := parser.ParseScript("dau.sql", script)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, st := range stmts {
		fmt.Printf("%d:%d %T\n", st.Pos().Line, st.Pos().Col, st)
	}
	fmt.Println(parser.Format(stmts[2]))

	_, err = parser.ParseScript("dau.sql", "SELECT user_id\nFROM events\nGROUP window_start;")
	fmt.Println(err)
	// Output:
	// 1:1 *parser.Set
	// 3:1 *parser.CreateTable
	// 9:1 *parser.Insert
	// INSERT INTO dau SELECT window_start, COUNT(DISTINCT user_id) FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY)) GROUP BY window_start, window_end
	// dau.sql:3:7: syntax error at 'window_start': expected BY
	// GROUP window_start;
	//       ^
}

func ExampleFormat() {
	e, err := parser.ParseExpr("", "case when `user` is not null then floor(ts to day) end")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(parser.Format(e))
	// Output: CASE WHEN `user` IS NOT NULL THEN FLOOR(ts TO DAY) END
}
