package planner_test

import (
	"fmt"

	_ "github.com/pipesql/pipesql/connectors/formats"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
)

// The daily active users job: JSON events with an event-time watermark, counted per app
// and day with an exact COUNT(DISTINCT user_id).
func ExampleSession_Explain() {
	const script = `
CREATE TABLE events (
  app STRING,
  user_id STRING,
  event_time BIGINT,
  ts AS TO_TIMESTAMP_LTZ(event_time, 3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = 'localhost:9092',
  'scan.watermark.idle-timeout' = '30 s',
  'format' = 'json'
);
CREATE TABLE dau_sink (` + "`day`" + ` STRING, app STRING, dau BIGINT) WITH ('connector' = 'print');
INSERT INTO dau_sink
SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd') AS ` + "`day`" + `, app, COUNT(DISTINCT user_id) AS dau
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY))
GROUP BY window_start, window_end, app;
`
	stmts, err := parser.ParseScript("dau.sql", script)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := planner.NewSession()
	for _, st := range stmts[:2] {
		if err := s.Apply(st); err != nil {
			fmt.Println(err)
			return
		}
	}
	plan, err := s.Explain(stmts[2])
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(plan)
	// Output:
	// == Physical Plan ==
	// Sink(table=[dau_sink], connector=[print], columns=[day, app, dau])
	// +- Calc(select=[DATE_FORMAT(window_start, 'yyyy-MM-dd') AS day, app, dau])
	//    +- WindowAggregate(window=[TUMBLE(rowtime=[ts], size=[1 d])], groupBy=[app], select=[app, COUNT(DISTINCT user_id) AS dau], state=[dau: roaring bitmap + dictionary])
	//       +- WatermarkAssigner(rowtime=[ts], watermark=[(ts - INTERVAL '5' SECOND)], idleTimeout=[30 s])
	//          +- Calc(select=[app, user_id, TO_TIMESTAMP_LTZ(event_time, 3) AS ts])
	//             +- TableSourceScan(table=[events], connector=[kafka], decode=[app, user_id, event_time], format=[json])
}
