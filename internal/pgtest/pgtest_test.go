package pgtest

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestStartStopStart(t *testing.T) {
	s := Start(t)
	if got := s.Query(t, "SHOW wal_level"); !slices.Equal(got, []string{"logical"}) {
		t.Fatalf("wal_level = %v, want logical", got)
	}
	s.Exec(t, "CREATE TABLE kept (id int PRIMARY KEY, v text); INSERT INTO kept VALUES (1, 'a'), (2, NULL)")
	conn := s.Connect(t, "postgres")
	s.Stop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := conn.Ping(ctx); err == nil {
		t.Fatal("ping succeeded while the server is stopped")
	}
	s.Start(t)
	if got := s.Query(t, "SELECT id, v FROM kept ORDER BY id"); !slices.Equal(got, []string{"1|a", "2|NULL"}) {
		t.Fatalf("after restart: %v", got)
	}
	s.Exec(t, "INSERT INTO kept VALUES (3, 'c')")
	s.Kill(t)
	s.Start(t)
	if got := s.Query(t, "SELECT count(*) FROM kept"); !slices.Equal(got, []string{"3"}) {
		t.Fatalf("after a crash: %v", got)
	}
}
