package builtin

import (
	"strings"
	"testing"
)

// TestLocalPath: a filesystem table's path may be a plain path or a file: URI, as Flink
// jobs write it ('file:///tmp/out'); other file systems are refused by name.
func TestLocalPath(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"/tmp/out", "/tmp/out", ""},
		{"data/in.csv", "data/in.csv", ""},
		{"file:///tmp/out/", "/tmp/out", ""},
		{"file:/tmp/out", "/tmp/out", ""},
		{"FILE:///tmp/a/../b", "/tmp/b", ""},
		{"file://localhost/tmp/x", "/tmp/x", ""},
		{"file://otherhost/tmp/x", "", "names another host"},
		{"hdfs://namenode:8020/warehouse", "", "unsupported: the hdfs:// file system"},
		{"s3://bucket/key", "", "unsupported: the s3:// file system"},
	} {
		got, err := localPath(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: got %q, %v; want an error containing %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: got %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
