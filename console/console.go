package console

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/pipesql/pipesql/engine"
	"github.com/pipesql/pipesql/exec"
	"github.com/pipesql/pipesql/obs"
)

//go:embed assets
var assets embed.FS

// TokenHeader is the header the console's actions carry their token in. Every action
// carries it, empty on loopback: a browser sends such a header to another site only
// after a CORS preflight the console never answers, so no page elsewhere can make a
// visitor's browser stop their jobs.
const TokenHeader = "X-Pipesql-Token"

// Options configures the console.
type Options struct {
	// Token is what the actions need in TokenHeader when the console is reached on an
	// address that is not loopback. Without it, actions are refused there (the pages
	// and the read API still work). On loopback any value is accepted.
	Token string
	// ActionTimeout bounds how long an action waits for its savepoint. Default: 2 minutes.
	ActionTimeout time.Duration
}

// Handler serves the console of e: the page at /, the JSON API under /api/, and
// obs.Handler's /metrics and /status. Use it as engine.Options.Handler:
//
//	engine.Options{Handler: func(e *engine.Engine) http.Handler { return console.Handler(e, opts) }}
func Handler(e *engine.Engine, opts Options) http.Handler {
	if opts.ActionTimeout <= 0 {
		opts.ActionTimeout = 2 * time.Minute
	}
	h := &handler{e: e, opts: opts}
	mux := http.NewServeMux()
	metrics := obs.Handler(e.Registry())
	mux.Handle("GET /metrics", metrics)
	mux.Handle("GET /status", metrics)
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", files))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, static, "index.html")
	})
	mux.HandleFunc("GET /api/jobs", h.jobs)
	mux.HandleFunc("GET /api/jobs/{id}", h.job)
	mux.HandleFunc("POST /api/jobs/{id}/savepoint", h.action(h.savepoint))
	mux.HandleFunc("POST /api/jobs/{id}/stop-with-savepoint", h.action(h.stopWithSavepoint))
	mux.HandleFunc("GET /api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path+" (see the README's web console section)")
	})
	return mux
}

type handler struct {
	e     *engine.Engine
	opts  Options
	rates rates
}

func (h *handler) tracker(id string) *obs.Tracker {
	for _, t := range h.e.Registry().Trackers() {
		if t.ID() == id {
			return t
		}
	}
	return nil
}

func (h *handler) jobs(w http.ResponseWriter, r *http.Request) {
	out := []jobSummary{}
	for _, j := range h.e.Jobs() {
		if t := h.tracker(j.ID()); t != nil {
			out = append(out, summarize(t.Status()))
		} else {
			out = append(out, summarize(j.Status()))
		}
	}
	writeJSON(w, http.StatusOK, struct {
		Jobs []jobSummary `json:"jobs"`
	}{out})
}

func (h *handler) job(w http.ResponseWriter, r *http.Request) {
	j := h.e.Job(r.PathValue("id"))
	if j == nil {
		writeError(w, http.StatusNotFound, "no job '"+r.PathValue("id")+"'")
		return
	}
	writeJSON(w, http.StatusOK, h.detail(j))
}

// actionRequest is the optional body of an action.
type actionRequest struct {
	// Dir is where the savepoint goes; default: the job's
	// execution.checkpointing.savepoint-dir.
	Dir string `json:"dir"`
}

func (h *handler) savepoint(ctx context.Context, id string, req actionRequest) (string, error) {
	return h.e.Savepoint(ctx, id, req.Dir)
}

func (h *handler) stopWithSavepoint(ctx context.Context, id string, req actionRequest) (string, error) {
	return h.e.Stop(ctx, id, engine.StopOptions{WithSavepoint: true, SavepointDir: req.Dir})
}

// action checks who asks, then runs do and answers {"savepoint": path}.
func (h *handler) action(do func(context.Context, string, actionRequest) (string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if code, msg := h.authorize(r); code != 0 {
			writeError(w, code, msg)
			return
		}
		var req actionRequest
		if r.ContentLength != 0 {
			if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil {
				writeError(w, http.StatusBadRequest, "the body must be JSON like {\"dir\": \"/savepoints\"}: "+err.Error())
				return
			}
		}
		ctx, cancel := context.WithTimeout(r.Context(), h.opts.ActionTimeout)
		defer cancel()
		path, err := do(ctx, r.PathValue("id"), req)
		switch {
		case err == nil:
			writeJSON(w, http.StatusOK, map[string]string{"savepoint": path})
		case errors.Is(err, engine.ErrNoSuchJob):
			writeError(w, http.StatusNotFound, err.Error())
		case errors.Is(err, engine.ErrNotRunning), errors.Is(err, exec.ErrJobNotRunning):
			writeError(w, http.StatusConflict, err.Error())
		case errors.Is(err, exec.ErrCheckpointingDisabled):
			writeError(w, http.StatusConflict, err.Error()+": set execution.checkpointing.interval to take savepoints")
		case errors.Is(err, engine.ErrNoSavepointDir):
			writeError(w, http.StatusBadRequest, err.Error()+": set execution.checkpointing.savepoint-dir or give {\"dir\": ...}")
		default:
			writeError(w, http.StatusInternalServerError, err.Error())
		}
	}
}

// authorize says whether r may act (0) or the status and message to refuse it with.
func (h *handler) authorize(r *http.Request) (int, string) {
	vals, sent := r.Header[http.CanonicalHeaderKey(TokenHeader)]
	if !sent {
		return http.StatusForbidden, "actions need the " + TokenHeader + " header (the console's page sends it)"
	}
	if loopback(r) {
		// A page of another site that resolves its name to 127.0.0.1 (DNS rebinding)
		// would reach us with its own name as the host.
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if ip := net.ParseIP(strings.Trim(host, "[]")); !(host == "localhost" || ip != nil && ip.IsLoopback()) {
			return http.StatusForbidden, "actions on a loopback console need a loopback host name, not " + r.Host
		}
		return 0, ""
	}
	if h.opts.Token == "" {
		return http.StatusForbidden, "actions are off: the console is served on an address other hosts reach, and no token was set (pipesql --web-token)"
	}
	got := ""
	if len(vals) > 0 {
		got = vals[0]
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(h.opts.Token)) != 1 {
		return http.StatusUnauthorized, "wrong or missing token in " + TokenHeader
	}
	return 0, ""
}

// loopback reports whether r came in on a loopback address of the server.
func loopback(r *http.Request) bool {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}
