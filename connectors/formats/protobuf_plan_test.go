package formats_test

import (
	"strings"
	"testing"

	_ "github.com/pipesql/pipesql/connectors/builtin"
	"github.com/pipesql/pipesql/parser"
	"github.com/pipesql/pipesql/planner"
)

// TestProtobufOptionsAtPlanTime: the protobuf formats' options are checked by CREATE
// TABLE with the real kafka and filesystem connectors: a misspelt key names the closest
// one, a format a connector cannot use is refused.
func TestProtobufOptionsAtPlanTime(t *testing.T) {
	const kafka = `'connector' = 'kafka', 'topic' = 'x', 'properties.bootstrap.servers' = 'b:9092', `
	cases := []struct{ with, want string }{
		{kafka + `'format' = 'protobuf', 'protobuf.message-class-name' = 'com.example.orders.Order', 'protobuf.descriptor-file' = 'testdata/protobuf/order.desc'`, ""},
		// what the job would find only when it starts
		{kafka + `'format' = 'protobuf', 'protobuf.message-class-name' = 'a.B', 'protobuf.descriptor-file' = 'x.desc'`,
			"t.sql:1:177: table 't': option 'protobuf.descriptor-file' = 'x.desc': protobuf message not found: stat x.desc: no such file or directory"},
		{kafka + `'format' = 'protobuf', 'protobuf.message-class-name' = 'pipesql.test.Ordr', 'protobuf.proto-file' = 'testdata/protobuf/order.proto'`,
			"option 'protobuf.message-class-name' = 'pipesql.test.Ordr': protobuf message not found: no message 'pipesql.test.Ordr': did you mean 'pipesql.test.Order'?"},
		{kafka + `'format' = 'protobuf', 'protobuf.message-class-name' = 'pipesql.test.Click', 'protobuf.descriptor-file' = 'testdata/protobuf/order.desc'`,
			"t.sql:1:115: table 't': format 'protobuf': type not supported by format: column id: protobuf field id is string, read as STRING, not BIGINT"},
		{kafka + `'format' = 'protobuf', 'protobuf.descriptor-file' = 'testdata/protobuf/order.desc'`,
			"'protobuf.message-class-name'"},
		{kafka + `'format' = 'protobuf', 'protobuf.message-class-name' = 'a.B', 'protobuf.descriptor-fil' = 'x.desc'`,
			"unknown option 'protobuf.descriptor-fil' for format 'protobuf': did you mean 'protobuf.descriptor-file'?"},
		{kafka + `'format' = 'protobuf-confluent', 'protobuf-confluent.url' = 'http://r:8081'`, ""},
		{kafka + `'format' = 'protobuf-confluent', 'protobuf-confluent.url' = 'http://r:8081', 'protobuf-confluent.basic-auth.user-inf' = 'u:p'`,
			"did you mean 'protobuf-confluent.basic-auth.user-info'?"},
		{kafka + `'format' = 'protobuf-confluent', 'protobuf-confluent.url' = 'http://r:8081', 'protobuf.message-class-name' = 'a.B'`,
			"option 'protobuf.message-class-name' is for format 'protobuf', but the table's 'format' is 'protobuf-confluent'"},
		{kafka + `'format' = 'protobf'`, "does not support format 'protobf': did you mean 'protobuf'?"},
		{kafka + `'format' = 'protobuf-confluent', 'protobuf-confluent.url' = ''`, "option 'protobuf-confluent.url'"},
		{`'connector' = 'filesystem', 'path' = '/tmp/x', 'format' = 'protobuf'`, "connector 'filesystem' does not support format 'protobuf'"},
	}
	for _, c := range cases {
		stmts, err := parser.ParseScript("t.sql", "CREATE TABLE t (id BIGINT) WITH ("+c.with+");")
		if err != nil {
			t.Fatal(err)
		}
		err = planner.NewSession().Apply(stmts[0])
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.with, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.with, err, c.want)
		}
	}
}
