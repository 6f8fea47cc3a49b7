package obs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves the jobs of reg over HTTP:
//
//	/metrics  the Prometheus metrics (text exposition format)
//	/status   the status of every job as JSON: {"jobs": [ ... ]}
//	/         a short index of the two
func Handler(reg *Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(NewPrometheusRegistry(reg), promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
	}))
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		jobs := reg.Statuses()
		if jobs == nil {
			jobs = []JobStatus{}
		}
		if err := enc.Encode(struct {
			Jobs []JobStatus `json:"jobs"`
		}{jobs}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "pipesql\n  /metrics  Prometheus metrics of the jobs\n  /status   status of the jobs, as JSON\n")
	})
	return mux
}

// Server serves Handler on an address until closed.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// Serve listens on addr (host:port; port 0 picks a free one) and serves the jobs of reg
// in the background. The error wraps ErrListen.
func Serve(addr string, reg *Registry) (*Server, error) {
	return ServeHandler(addr, Handler(reg))
}

// ServeHandler is Serve with what to serve: Handler's endpoints and more (the web
// console).
func ServeHandler(addr string, h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrListen, addr, err)
	}
	s := &Server{
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		ln:   ln,
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Loopback reports whether the server listens on a loopback address only (127.0.0.1,
// ::1), so that only this host reaches it.
func (s *Server) Loopback() bool {
	a, ok := s.ln.Addr().(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}

// Close stops the server, letting requests in progress finish for up to a few seconds.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
