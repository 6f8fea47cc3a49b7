package jdbc

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pipesql/pipesql/connectors"
)

// Backoff between attempts after a lost connection: from minBackoff, doubling, at most
// maxBackoff, with jitter. Reconnecting is cheap, so the cap is short: the job resumes
// within about a second of the database coming back.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = time.Second
)

// connectionLost reports whether err says the connection to the database is gone or
// could not be made (the server shut down, restarting, unreachable), as opposed to the
// database refusing a statement. Such errors are retried for as long as they last.
func connectionLost(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case len(pe.Code) == 5 && pe.Code[:2] == "08": // connection exception
			return true
		case pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03": // admin/crash shutdown, cannot connect now
			return true
		case pe.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.As(err, &oe) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		pgconn.SafeToRetry(err) || pgconn.Timeout(err)
}

// backoff is the wait before attempt n (1-based) after a failure.
func backoff(n int) time.Duration {
	d := minBackoff
	for i := 1; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	d = min(d, maxBackoff)
	return d/2 + rand.N(d/2+1)
}

// sleep waits d on clock, or until ctx is done.
func sleep(ctx context.Context, clock connectors.Clock, d time.Duration) error {
	t := clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// connect opens a connection to the table's database.
func connect(ctx context.Context, o *tableOptions) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(o.dsn)
	if err != nil {
		return nil, err
	}
	return pgx.ConnectConfig(ctx, cfg)
}
