package planner

import "testing"

// An OPTIONS hint reaches the connector of that one scan or sink, over the WITH options,
// and leaves the catalog's table as it was.
func TestOptionsHintReachesConnector(t *testing.T) {
	s := mustSession(t, auditDDL)
	prog := mustPlan(t, s, `INSERT INTO out_print /*+ OPTIONS('print-identifier' = 'dbg') */
SELECT app, CAST(n AS BIGINT) FROM clicks /*+ OPTIONS('number-of-rows' = '3', 'rows-per-second' = '7') */`)
	nodes := chain(prog.Pipelines[0].Root)
	sink, ok := nodes[0].(*Sink)
	if !ok {
		t.Fatalf("root is %T, want *Sink", nodes[0])
	}
	if got := sink.Info.Options["print-identifier"]; got != "dbg" {
		t.Errorf("sink print-identifier = %q, want dbg", got)
	}
	scan, ok := nodes[len(nodes)-1].(*TableSourceScan)
	if !ok {
		t.Fatalf("leaf is %T, want *TableSourceScan", nodes[len(nodes)-1])
	}
	for k, want := range map[string]string{"connector": "datagen", "number-of-rows": "3", "rows-per-second": "7"} {
		if got := scan.Info.Options[k]; got != want {
			t.Errorf("scan option %s = %q, want %q", k, got, want)
		}
	}
	tab, _ := s.Catalog().Table("clicks")
	if got := tab.Options["number-of-rows"]; got != "10" || tab.Hint != nil {
		t.Errorf("the catalog's table changed: number-of-rows = %q, hint %v", got, tab.Hint)
	}
	if _, set := tab.Options["rows-per-second"]; set {
		t.Errorf("the catalog's table gained the hint's rows-per-second")
	}
}
