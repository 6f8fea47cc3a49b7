package formats

import (
	"strings"
	"testing"

	"github.com/pipesql/pipesql/types"
)

// TestAvroMultisetSchema: a MULTISET<STRING> is an Avro map of its elements' counts, as
// Flink's AvroSchemaConverter writes it; a multiset of another type has no Avro form.
func TestAvroMultisetSchema(t *testing.T) {
	ms := types.MultisetType(types.TypeString).WithNotNull(true)
	got, err := avroSchemaJSON(types.Schema{{Name: "tags", Type: ms}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"tags","type":{"type":"map","values":"int"}}`; !strings.Contains(got, want) {
		t.Errorf("schema %s lacks %s", got, want)
	}
	if _, err := avroSchemaJSON(types.Schema{{Name: "n", Type: types.MultisetType(types.TypeInt)}}, false); err == nil {
		t.Error("MULTISET<INT> got an Avro schema; Avro maps have string keys")
	}
}
