// Package pgtest starts Debian's PostgreSQL for tests: a server of its own per test,
// on a data directory under a temporary directory and a free port on 127.0.0.1, with
// wal_level=logical (for postgres-cdc) and its unix socket in the data directory.
//
// The binaries are the newest under /usr/lib/postgresql/*/bin (Debian's postgresql
// package; .ci/run installs it). initdb and postgres refuse to run as root, so when the
// test runs as root they run as the postgres user the package creates, on a directory
// owned by it. The server trusts every local connection as the superuser postgres.
//
// Tests can take the database away: Stop shuts it down (as an administrator would) and
// Kill stops it as a crash would; Start brings it back on the same port and data, so a
// job's 'url' stays valid across the outage. The server is stopped when the test ends.
package pgtest
