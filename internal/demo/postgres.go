package demo

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Postgres is the demo's PostgreSQL variant: the DAU also lands in a table of a
// PostgreSQL database, when one is reachable.
type Postgres struct {
	// JDBCURL is the 'url' of the demo's jdbc table.
	JDBCURL string
	url     string    // the same as a libpq URL, for the viewer
	conn    *pgx.Conn // the viewer's connection, nil until (re)connected
}

// Table is the PostgreSQL table the demo upserts the DAU into.
const PostgresTable = "pipesql_demo_dau"

// ConnectPostgres checks that the database of jdbcURL
// (jdbc:postgresql://host:port/db?user=...&password=...) is reachable and creates the
// demo's table if it is not there. It returns why not, as an error, when it cannot.
func ConnectPostgres(ctx context.Context, jdbcURL string) (*Postgres, error) {
	rest, ok := strings.CutPrefix(jdbcURL, "jdbc:postgresql:")
	if !ok {
		return nil, fmt.Errorf("%s is not a jdbc:postgresql:// url", jdbcURL)
	}
	u, err := url.Parse("postgres:" + rest)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	if user := q.Get("user"); user != "" {
		u.User = url.UserPassword(user, q.Get("password"))
		if q.Get("password") == "" {
			u.User = url.User(user)
		}
		q.Del("user")
		q.Del("password")
	}
	if !q.Has("sslmode") {
		q.Set("sslmode", "prefer")
	}
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+PostgresTable+" (day text, app text, dau bigint, PRIMARY KEY (day, app))"); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return &Postgres{JDBCURL: jdbcURL, url: u.String(), conn: conn}, nil
}

// Statements are the demo job's extra statements: the jdbc table and the DAU query
// writing into it, the same as examples/dau.sql's.
func (p *Postgres) Statements() string {
	return fmt.Sprintf(`
CREATE TABLE dau_postgres (`+"`day`"+` STRING, app STRING, dau BIGINT, PRIMARY KEY (`+"`day`"+`, app) NOT ENFORCED)
WITH ('connector' = 'jdbc', 'url' = '%s', 'table-name' = '%s');
INSERT INTO dau_postgres
SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd'), app, COUNT(DISTINCT user_id)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY))
GROUP BY window_start, window_end, app;
`, strings.ReplaceAll(p.JDBCURL, "'", "''"), PostgresTable)
}

// Rows counts the rows of the demo's table and returns its latest day, "" when empty.
// It keeps one connection open across calls (the screen asks every second), and opens
// a new one after a failure.
func (p *Postgres) Rows(ctx context.Context) (n int64, latest string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if p.conn == nil {
		if p.conn, err = pgx.Connect(ctx, p.url); err != nil {
			return 0, "", err
		}
	}
	var day *string
	if err := p.conn.QueryRow(ctx, "SELECT count(*), max(day) FROM "+PostgresTable).Scan(&n, &day); err != nil {
		p.Close()
		return 0, "", err
	}
	if day != nil {
		latest = *day
	}
	return n, latest, nil
}

// Close closes the viewer's connection.
func (p *Postgres) Close() {
	if p.conn != nil {
		p.conn.Close(context.Background())
		p.conn = nil
	}
}
