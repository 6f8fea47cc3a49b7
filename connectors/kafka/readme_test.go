package kafka

import (
	"os"
	"strings"
	"testing"
)

// The README's property table must list every translation the connector makes.
func TestREADMEListsTranslations(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range PropertyTranslations() {
		row := "| `" + tr.Java + "` | " + tr.Librdkafka + " | " + tr.Meaning + " |"
		if !strings.Contains(string(readme), row) {
			t.Errorf("README.md lacks the row\n%s", row)
		}
	}
}
