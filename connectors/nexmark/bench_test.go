package nexmark

import (
	"context"
	"testing"
	"time"
)

// BenchmarkPoll is the source making Nexmark events in batches, all four columns
// produced as in the benchmark's DDL; ns/op is per event.
func BenchmarkPoll(b *testing.B) {
	s := open(&testing.T{}, map[string]string{}, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		bs, err := s.Poll(context.Background(), time.Second)
		if err != nil {
			b.Fatal(err)
		}
		for _, x := range bs {
			done += len(x.Rows)
		}
	}
}
