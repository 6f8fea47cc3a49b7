package config

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the README's configuration tables from the table")

const (
	readmeBegin = "<!-- config tables: generated from config/keys.go by `go test ./config -update` -->\n"
	readmeEnd   = "<!-- end of config tables -->\n"
)

// The README's Configuration section shows the table: every key, its default and
// whether it has an effect.
func TestREADME(t *testing.T) {
	const path = "../README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i, j := strings.Index(readme, readmeBegin), strings.Index(readme, readmeEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the markers %q and %q", readmeBegin, readmeEnd)
	}
	i += len(readmeBegin)
	want := Markdown()
	if readme[i:j] == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(readme[:i]+want+readme[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's configuration tables differ from config/keys.go; run go test ./config -update\ngot:\n%s\nwant:\n%s", readme[i:j], want)
}
