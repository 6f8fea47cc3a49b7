package exec

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestReadCheckpointConfig(t *testing.T) {
	c, err := ReadCheckpointConfig(nil)
	if err != nil || c.Enabled() || c.Timeout != 10*time.Minute || c.NumRetained != 1 || c.Dir != "" {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	c, err = ReadCheckpointConfig(map[string]string{
		KeyCheckpointInterval:       "10 s",
		KeyCheckpointNumRetainedOld: "3",
		KeyCheckpointMode:           "at_least_once",
		KeyIgnoreUnclaimedState:     "true",
	})
	if err != nil || c.Interval != 10*time.Second || c.NumRetained != 3 || !c.AtLeastOnce || !c.AllowNonRestoredState {
		t.Errorf("%+v, %v", c, err)
	}
	for _, bad := range []map[string]string{
		{KeyCheckpointTimeout: "0 ms"},
		{KeyCheckpointNumRetained: "0"},
		{KeyCheckpointInterval: "soon"},
		{KeyCheckpointDirOld: "s3://bucket/checkpoints"},
		{KeySavepointDir: "file://elsewhere/savepoints"},
	} {
		_, err := ReadCheckpointConfig(bad)
		for k := range bad {
			if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), k) {
				t.Errorf("%v: %v, want ErrInvalidOptions naming %s", bad, err, k)
			}
		}
	}
}

// file:///x, file:/x and /x are the same directory, under either name of the key.
func TestCheckpointDirsAsURIs(t *testing.T) {
	for _, dir := range []string{"/tmp/ck", "/tmp/ck/", "file:///tmp/ck", "file:/tmp/ck", "file://localhost/tmp/ck"} {
		for _, key := range []string{KeyCheckpointDir, KeyCheckpointDirOld} {
			c, err := ReadCheckpointConfig(map[string]string{key: dir, KeySavepointDirOld: dir, KeySavepointPath: dir})
			if err != nil || c.Dir != "/tmp/ck" || c.SavepointDir != "/tmp/ck" || c.RestorePath != "/tmp/ck" {
				t.Errorf("%s = %s: %+v, %v", key, dir, c, err)
			}
		}
	}
}
