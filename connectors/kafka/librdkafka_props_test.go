package kafka

import (
	"strings"
	"testing"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// TestLibrdkafkaNamesAreKnown sets each listed property on a real librdkafka client and
// checks that librdkafka knows the name (a value it rejects is fine: only the name
// matters here), and that an invented name is refused the same way.
func TestLibrdkafkaNamesAreKnown(t *testing.T) {
	unknown := func(name string) (bool, string) {
		p, err := ckafka.NewProducer(&ckafka.ConfigMap{
			"bootstrap.servers": "127.0.0.1:1",
			"log_level":         "0",
			name:                "1",
		})
		if err == nil {
			p.Close()
			return false, ""
		}
		return strings.Contains(err.Error(), "No such configuration property"), err.Error()
	}
	if u, msg := unknown("no.such.property.anywhere"); !u {
		t.Fatalf("an invented property was not refused as unknown: %q", msg)
	}
	for _, name := range librdkafkaNames {
		if u, msg := unknown(name); u {
			t.Errorf("librdkafka does not know %s: %s", name, msg)
		}
	}
}
