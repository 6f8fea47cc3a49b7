package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is one PostgreSQL server on a data directory of its own, started by Start.
// Its methods may be called from any goroutine.
type Server struct {
	// Port is the TCP port on 127.0.0.1; it stays the same across Stop and Start.
	Port int
	// Dir is the data directory, which also holds the unix socket.
	Dir string

	bin  string
	cred *syscall.Credential // nil when the test does not run as root

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  *bytes.Buffer
}

// Start initializes a data directory under a temporary directory, starts PostgreSQL
// on it (wal_level=logical, a free port, the socket in the data directory) and stops
// it when the test ends. It fails the test when PostgreSQL is not installed.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := BinDir()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{bin: bin}
	if os.Geteuid() == 0 {
		// initdb and postgres refuse to run as root: run them as the postgres user
		// Debian's package creates, in a directory it owns.
		cred, uid, gid, err := postgresUser()
		if err != nil {
			t.Fatal(err)
		}
		s.cred = cred
		dir, err := os.MkdirTemp("", "pgtest-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		s.Dir = filepath.Join(dir, "data")
	} else {
		s.Dir = filepath.Join(t.TempDir(), "data")
	}
	if s.Port, err = freePort(); err != nil {
		t.Fatal(err)
	}
	initdb := s.command(filepath.Join(bin, "initdb"), "-D", s.Dir, "-A", "trust", "-U", "postgres",
		"--no-sync", "-E", "UTF8", "--locale=C")
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	t.Cleanup(func() { s.shutdown(syscall.SIGQUIT) })
	s.Start(t)
	return s
}

// BinDir returns the directory of Debian's PostgreSQL binaries, the newest version
// when several are installed.
func BinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	var found []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			found = append(found, d)
		}
	}
	if len(found) == 0 {
		return "", errors.New("pgtest: PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/postgres); apt-get install -y postgresql")
	}
	sort.Slice(found, func(i, j int) bool { return version(found[i]) < version(found[j]) })
	return found[len(found)-1], nil
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func postgresUser() (*syscall.Credential, int, int, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, 0, 0, fmt.Errorf("pgtest: running as root needs the postgres user of Debian's postgresql package: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, uid, gid, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.cred}
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd
}

// Start starts the server again after Stop or Kill and waits until it accepts
// connections. It does nothing while the server runs.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
}

func (s *Server) start() error {
	s.mu.Lock()
	if s.cmd != nil {
		s.mu.Unlock()
		return nil
	}
	log := &bytes.Buffer{}
	cmd := s.command(filepath.Join(s.bin, "postgres"), "-D", s.Dir, "-p", strconv.Itoa(s.Port), "-k", s.Dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "wal_level=logical",
		"-c", "max_wal_senders=20", "-c", "max_replication_slots=20", "-c", "max_connections=100",
		"-c", "fsync=off", "-c", "full_page_writes=off")
	cmd.Stdout, cmd.Stderr = &lockedWriter{mu: &s.mu, w: log}, &lockedWriter{mu: &s.mu, w: log}
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	done := make(chan struct{})
	s.cmd, s.done, s.log = cmd, done, log
	s.mu.Unlock()
	go func() { cmd.Wait(); close(done) }()

	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := pgx.Connect(ctx, s.ConnString("postgres"))
		if err == nil {
			conn.Close(ctx)
			cancel()
			return nil
		}
		cancel()
		select {
		case <-done:
			return fmt.Errorf("pgtest: postgres exited: %s", s.Log())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgtest: postgres not accepting connections after a minute: %v\n%s", err, s.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop shuts the server down (fast shutdown: open connections are closed) and waits
// until it has exited.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.shutdown(syscall.SIGINT)
}

// Kill stops the server as a crash would (immediate shutdown, recovery at the next Start).
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	s.shutdown(syscall.SIGQUIT)
}

func (s *Server) shutdown(sig syscall.Signal) {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(time.Minute):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// Log returns what the server printed since it was last started.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return ""
	}
	return s.log.String()
}

// ConnString is a libpq connection URL for database db as the superuser postgres.
func (s *Server) ConnString(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}

// JDBCURL is the 'url' option of a jdbc table on database db.
func (s *Server) JDBCURL(db string) string {
	return fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/%s", s.Port, db)
}

// Connect opens a connection to database db that is closed when the test ends.
func (s *Server) Connect(t testing.TB, db string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.ConnString(db))
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// Exec runs SQL statements (separated by semicolons) on database postgres, failing the
// test on an error.
func (s *Server) Exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.ConnString("postgres"))
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}

// Query runs a query on database postgres and returns its rows as text, each row's
// columns joined by '|', NULL as "NULL".
func (s *Server) Query(t testing.TB, sql string, args ...any) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.ConnString("postgres"))
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatalf("pgtest: %s: %v", sql, err)
		}
		var b bytes.Buffer
		for i, v := range vals {
			if i > 0 {
				b.WriteByte('|')
			}
			if v == nil {
				b.WriteString("NULL")
			} else {
				fmt.Fprint(&b, v)
			}
		}
		out = append(out, b.String())
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
	return out
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
