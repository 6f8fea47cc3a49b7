// Package console is pipesql's web console: one page, served with the metrics on the
// engine's metrics server (pipesql --metrics-addr or --web-addr), that shows the jobs of
// the process — the jobs list with their status, and per job its operator graph with
// per-operator records, rates and backpressure, the latest rows each sink wrote, the
// per-partition offsets, end offsets and lag, the watermark and its delay, the
// checkpoint history, the exceptions and the SQL — with live charts, and the actions a
// user expects: trigger a savepoint, stop with a savepoint.
//
// # The API
//
// The page uses only the JSON API it documents in the README: GET /api/jobs,
// GET /api/jobs/{id}, POST /api/jobs/{id}/savepoint and
// POST /api/jobs/{id}/stop-with-savepoint. The API reads what the engine, obs and exec
// already keep; the per-operator and per-partition rates and backpressure shares come
// from samples taken when a job's page is asked for, and a sink keeps its latest rows
// (exec.Job.RecentRows) only once the page has asked for them, so a job nobody watches
// pays nothing for the console. Backpressure is exec's count of the time each task's
// sends waited for room downstream (exec.OperatorMetrics.Backpressured), shown with
// Flink's levels: OK up to 10%, LOW up to 50%, HIGH.
//
// # Assets
//
// The page is plain HTML, CSS and JavaScript under assets/, embedded with go:embed: no
// build step, nothing fetched at install or run time. Its charts are drawn on canvas.
//
// # Who may act
//
// The engine serves on loopback unless told otherwise (engine.Options.AllowRemote,
// pipesql --web-allow-remote). On loopback the actions need only the TokenHeader
// header, which a page of another site cannot send; elsewhere they need it to hold
// Options.Token.
package console
