package registrytest

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hamba/avro/v2"
)

// Schema types, as the registry spells them in schemaType.
const (
	Avro     = "AVRO"
	Protobuf = "PROTOBUF"
	JSON     = "JSON"
)

// Compatibility levels.
const (
	None               = "NONE"
	Backward           = "BACKWARD"
	BackwardTransitive = "BACKWARD_TRANSITIVE"
	Forward            = "FORWARD"
	ForwardTransitive  = "FORWARD_TRANSITIVE"
	Full               = "FULL"
	FullTransitive     = "FULL_TRANSITIVE"
)

var levels = map[string]bool{None: true, Backward: true, BackwardTransitive: true, Forward: true,
	ForwardTransitive: true, Full: true, FullTransitive: true}

// Error codes of the registry's error bodies.
const (
	CodeSubjectNotFound      = 40401
	CodeVersionNotFound      = 40402
	CodeSchemaNotFound       = 40403
	CodeNoSubjectLevel       = 40408
	CodeUnauthorized         = 40101
	CodeIncompatible         = 409
	CodeInvalidSchema        = 42201
	CodeInvalidVersion       = 42202
	CodeInvalidCompatibility = 42203
	CodeInternal             = 50001
)

const contentType = "application/vnd.schemaregistry.v1+json"

// Reference is a schema's reference to another registered schema (Protobuf imports,
// Avro named types defined elsewhere).
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

type schema struct {
	id   int
	typ  string
	text string
	refs []Reference
	avro avro.Schema // parsed, for AVRO
}

type version struct {
	version int
	schema  *schema
}

type subject struct {
	versions []version // ascending; deleted ones removed
	next     int       // the next version number
	level    string    // "" when the subject has no level of its own
}

// Server is a running schema registry. Its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL clients use (schema.registry.url, avro-confluent.url).
	URL string
	// CAFile is the PEM file of the certificate authority of a WithTLS server ("" otherwise).
	CAFile string

	srv    *httptest.Server
	user   string
	pass   string
	bearer string
	tls    bool

	mu       sync.Mutex
	ids      map[int]*schema
	byKey    map[string]*schema // type + refs + compact text -> schema
	subjects map[string]*subject
	global   string
	nextID   int
	requests map[string]int
}

// Option configures a Server.
type Option func(*Server)

// WithBasicAuth requires HTTP basic auth with this user and password.
func WithBasicAuth(user, password string) Option {
	return func(s *Server) { s.user, s.pass = user, password }
}

// WithBearerToken requires "Authorization: Bearer token".
func WithBearerToken(token string) Option {
	return func(s *Server) { s.bearer = token }
}

// WithTLS serves HTTPS; the CA of its certificate is written to Server.CAFile.
func WithTLS() Option {
	return func(s *Server) { s.tls = true }
}

// New starts a registry and stops it when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{
		ids:      map[int]*schema{},
		byKey:    map[string]*schema{},
		subjects: map[string]*subject{},
		global:   Backward,
		nextID:   1,
		requests: map[string]int{},
	}
	for _, o := range opts {
		o(s)
	}
	if s.tls {
		s.srv = httptest.NewTLSServer(s)
		path := filepath.Join(t.TempDir(), "registry-ca.pem")
		cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
		if err := os.WriteFile(path, cert, 0o600); err != nil {
			s.srv.Close()
			t.Fatalf("registrytest: %v", err)
		}
		s.CAFile = path
	} else {
		s.srv = httptest.NewServer(s)
	}
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Close stops the server (New's cleanup does it too); clients then fail to connect.
func (s *Server) Close() { s.srv.Close() }

// Requests is how many requests the route received, route being the method and the
// path pattern, e.g. "GET /schemas/ids/{id}" or "POST /subjects/{subject}/versions".
// Requests refused for authentication count under "AUTH".
func (s *Server) Requests(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[route]
}

// Register registers a schema under subject as POST /subjects/{s}/versions does,
// compatibility checks included, and returns its id.
func (s *Server) Register(subj, schemaType, text string, refs ...Reference) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, herr := s.register(subj, schemaType, text, refs)
	if herr != nil {
		return 0, herr
	}
	return sc.id, nil
}

// SetCompatibility sets a subject's level ("" subject: the global level).
func (s *Server) SetCompatibility(subj, level string) error {
	if !levels[level] {
		return fmt.Errorf("registrytest: unknown compatibility level %q", level)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if subj == "" {
		s.global = level
		return nil
	}
	s.subject(subj, true).level = level
	return nil
}

// Schema returns the type and text of the schema with this id.
func (s *Server) Schema(id int) (schemaType, text string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.ids[id]
	if sc == nil {
		return "", "", false
	}
	return sc.typ, sc.text, true
}

// HTTPError is an error answered with the registry's error body.
type HTTPError struct {
	Status  int    `json:"-"`
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("registry error %d: %s", e.Code, e.Message)
}

func errf(status, code int, format string, args ...any) *HTTPError {
	return &HTTPError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// request is the body of registration, lookup and compatibility requests.
type request struct {
	Schema     string      `json:"schema"`
	SchemaType string      `json:"schemaType"`
	References []Reference `json:"references"`
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		s.count("AUTH")
		w.Header().Set("WWW-Authenticate", `Basic realm="registrytest"`)
		writeJSON(w, http.StatusUnauthorized, errf(http.StatusUnauthorized, CodeUnauthorized, "Unauthorized"))
		return
	}
	parts := strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/")
	for i, p := range parts {
		if u, err := url.PathUnescape(p); err == nil {
			parts[i] = u
		}
	}
	route, handler := s.route(r.Method, parts)
	s.count(route)
	if handler == nil {
		writeJSON(w, http.StatusNotFound, errf(http.StatusNotFound, 404, "HTTP 404 Not Found"))
		return
	}
	var body request
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		data, err := io.ReadAll(r.Body)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errf(http.StatusBadRequest, 400, "reading the body: %v", err))
			return
		}
		if len(bytes.TrimSpace(data)) > 0 {
			if err := json.Unmarshal(data, &body); err != nil {
				writeJSON(w, http.StatusUnprocessableEntity, errf(http.StatusUnprocessableEntity, 422, "Unrecognized field or malformed JSON: %v", err))
				return
			}
			if route == "PUT /config" || route == "PUT /config/{subject}" {
				var c struct {
					Compatibility string `json:"compatibility"`
				}
				_ = json.Unmarshal(data, &c)
				body.Schema = c.Compatibility
			}
		}
	}
	s.mu.Lock()
	out, herr := handler(parts, r, body)
	s.mu.Unlock()
	if herr != nil {
		writeJSON(w, herr.Status, herr)
		return
	}
	if raw, ok := out.(rawText); ok {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = io.WriteString(w, string(raw))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// rawText is an answer sent as it is (the /schema endpoints answer the schema itself).
type rawText string

type handlerFunc func(parts []string, r *http.Request, body request) (any, *HTTPError)

func (s *Server) route(method string, p []string) (string, handlerFunc) {
	n := len(p)
	switch {
	case n == 2 && p[0] == "schemas" && p[1] == "types" && method == "GET":
		return "GET /schemas/types", func([]string, *http.Request, request) (any, *HTTPError) {
			return []string{JSON, Protobuf, Avro}, nil
		}
	case n >= 3 && n <= 4 && p[0] == "schemas" && p[1] == "ids" && method == "GET":
		switch {
		case n == 3:
			return "GET /schemas/ids/{id}", s.getByID
		case p[3] == "schema":
			return "GET /schemas/ids/{id}/schema", s.getByID
		case p[3] == "versions":
			return "GET /schemas/ids/{id}/versions", s.idVersions
		}
	case n == 1 && p[0] == "subjects" && method == "GET":
		return "GET /subjects", s.listSubjects
	case n == 2 && p[0] == "subjects":
		switch method {
		case "POST":
			return "POST /subjects/{subject}", s.lookup
		case "DELETE":
			return "DELETE /subjects/{subject}", s.deleteSubject
		}
	case n == 3 && p[0] == "subjects" && p[2] == "versions":
		switch method {
		case "GET":
			return "GET /subjects/{subject}/versions", s.listVersions
		case "POST":
			return "POST /subjects/{subject}/versions", s.postVersion
		}
	case n >= 4 && n <= 5 && p[0] == "subjects" && p[2] == "versions":
		switch {
		case n == 4 && method == "GET":
			return "GET /subjects/{subject}/versions/{version}", s.getVersion
		case n == 5 && p[4] == "schema" && method == "GET":
			return "GET /subjects/{subject}/versions/{version}/schema", s.getVersion
		case n == 4 && method == "DELETE":
			return "DELETE /subjects/{subject}/versions/{version}", s.deleteVersion
		}
	case p[0] == "compatibility" && method == "POST" && n >= 4 && p[1] == "subjects" && p[3] == "versions":
		if n == 4 {
			return "POST /compatibility/subjects/{subject}/versions", s.testCompatibility
		}
		if n == 5 {
			return "POST /compatibility/subjects/{subject}/versions/{version}", s.testCompatibility
		}
	case n == 1 && p[0] == "config":
		switch method {
		case "GET":
			return "GET /config", func([]string, *http.Request, request) (any, *HTTPError) {
				return map[string]string{"compatibilityLevel": s.global}, nil
			}
		case "PUT":
			return "PUT /config", s.putConfig
		}
	case n == 2 && p[0] == "config":
		switch method {
		case "GET":
			return "GET /config/{subject}", s.getConfig
		case "PUT":
			return "PUT /config/{subject}", s.putConfig
		case "DELETE":
			return "DELETE /config/{subject}", s.deleteConfig
		}
	case n >= 1 && p[0] == "mode" && method == "GET":
		return "GET /mode", func([]string, *http.Request, request) (any, *HTTPError) {
			return map[string]string{"mode": "READWRITE"}, nil
		}
	}
	return method + " " + "/" + strings.Join(p, "/"), nil
}

func (s *Server) authorized(r *http.Request) bool {
	if s.user != "" {
		u, p, ok := r.BasicAuth()
		return ok && subtle.ConstantTimeCompare([]byte(u), []byte(s.user)) == 1 &&
			subtle.ConstantTimeCompare([]byte(p), []byte(s.pass)) == 1
	}
	if s.bearer != "" {
		return subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+s.bearer)) == 1
	}
	return true
}

func (s *Server) count(route string) {
	s.mu.Lock()
	s.requests[route]++
	s.mu.Unlock()
}

func (s *Server) subject(name string, create bool) *subject {
	sub := s.subjects[name]
	if sub == nil && create {
		sub = &subject{next: 1}
		s.subjects[name] = sub
	}
	return sub
}

// live is the subject if it has versions.
func (s *Server) live(name string) (*subject, *HTTPError) {
	sub := s.subjects[name]
	if sub == nil || len(sub.versions) == 0 {
		return nil, errf(http.StatusNotFound, CodeSubjectNotFound, "Subject '%s' not found.", name)
	}
	return sub, nil
}

func (s *Server) level(sub *subject) string {
	if sub != nil && sub.level != "" {
		return sub.level
	}
	return s.global
}

func (s *Server) getByID(p []string, _ *http.Request, _ request) (any, *HTTPError) {
	id, err := strconv.Atoi(p[2])
	sc := s.ids[id]
	if err != nil || sc == nil {
		return nil, errf(http.StatusNotFound, CodeSchemaNotFound, "Schema %s not found", p[2])
	}
	if len(p) == 4 {
		return rawText(sc.text), nil
	}
	out := map[string]any{"schema": sc.text}
	if sc.typ != Avro {
		out["schemaType"] = sc.typ
	}
	if len(sc.refs) > 0 {
		out["references"] = sc.refs
	}
	return out, nil
}

func (s *Server) idVersions(p []string, _ *http.Request, _ request) (any, *HTTPError) {
	id, err := strconv.Atoi(p[2])
	if err != nil || s.ids[id] == nil {
		return nil, errf(http.StatusNotFound, CodeSchemaNotFound, "Schema %s not found", p[2])
	}
	type sv struct {
		Subject string `json:"subject"`
		Version int    `json:"version"`
	}
	out := []sv{}
	for _, name := range s.subjectNames() {
		for _, v := range s.subjects[name].versions {
			if v.schema.id == id {
				out = append(out, sv{name, v.version})
			}
		}
	}
	return out, nil
}

func (s *Server) subjectNames() []string {
	var names []string
	for name, sub := range s.subjects {
		if len(sub.versions) > 0 {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

func (s *Server) listSubjects([]string, *http.Request, request) (any, *HTTPError) {
	names := s.subjectNames()
	if names == nil {
		names = []string{}
	}
	return names, nil
}

func (s *Server) listVersions(p []string, _ *http.Request, _ request) (any, *HTTPError) {
	sub, herr := s.live(p[1])
	if herr != nil {
		return nil, herr
	}
	return versionNumbers(sub), nil
}

// versionNumbers lists a subject's live version numbers, [] when it has none.
func versionNumbers(sub *subject) []int {
	out := []int{}
	for _, v := range sub.versions {
		out = append(out, v.version)
	}
	return out
}

// findVersion resolves "latest", -1 or a number in a subject.
func findVersion(sub *subject, name, v string) (int, *HTTPError) {
	if v == "latest" || v == "-1" {
		return len(sub.versions) - 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, errf(http.StatusUnprocessableEntity, CodeInvalidVersion,
			"The specified version '%s' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\"", v)
	}
	for i, ver := range sub.versions {
		if ver.version == n {
			return i, nil
		}
	}
	return 0, errf(http.StatusNotFound, CodeVersionNotFound, "Version %d not found.", n)
}

// version finds version v of a live subject (getVersion, deleteVersion).
func (s *Server) version(name, v string) (*subject, int, *HTTPError) {
	sub, herr := s.live(name)
	if herr != nil {
		return nil, 0, herr
	}
	i, herr := findVersion(sub, name, v)
	return sub, i, herr
}

func metadata(name string, v version) map[string]any {
	out := map[string]any{"subject": name, "version": v.version, "id": v.schema.id, "schema": v.schema.text}
	if v.schema.typ != Avro {
		out["schemaType"] = v.schema.typ
	}
	if len(v.schema.refs) > 0 {
		out["references"] = v.schema.refs
	}
	return out
}

func (s *Server) getVersion(p []string, _ *http.Request, _ request) (any, *HTTPError) {
	sub, i, herr := s.version(p[1], p[3])
	if herr != nil {
		return nil, herr
	}
	if len(p) == 5 {
		return rawText(sub.versions[i].schema.text), nil
	}
	return metadata(p[1], sub.versions[i]), nil
}

func (s *Server) deleteVersion(p []string, _ *http.Request, _ request) (any, *HTTPError) {
	sub, i, herr := s.version(p[1], p[3])
	if herr != nil {
		return nil, herr
	}
	n := sub.versions[i].version
	sub.versions = append(sub.versions[:i], sub.versions[i+1:]...)
	return n, nil
}

func (s *Server) deleteSubject(p []string, _ *http.Request, _ request) (any, *HTTPError) {
	sub, herr := s.live(p[1])
	if herr != nil {
		return nil, herr
	}
	out := versionNumbers(sub)
	sub.versions = nil
	return out, nil
}

func (s *Server) postVersion(p []string, _ *http.Request, body request) (any, *HTTPError) {
	sc, herr := s.register(p[1], body.SchemaType, body.Schema, body.References)
	if herr != nil {
		return nil, herr
	}
	return map[string]int{"id": sc.id}, nil
}

func (s *Server) lookup(p []string, _ *http.Request, body request) (any, *HTTPError) {
	sub, herr := s.live(p[1])
	if herr != nil {
		return nil, herr
	}
	cand, herr := s.parse(body.SchemaType, body.Schema, body.References)
	if herr != nil {
		return nil, herr
	}
	for _, v := range sub.versions {
		if key(v.schema.typ, v.schema.text, v.schema.refs) == key(cand.typ, cand.text, cand.refs) {
			return metadata(p[1], v), nil
		}
	}
	return nil, errf(http.StatusNotFound, CodeSchemaNotFound, "Schema not found")
}

func (s *Server) testCompatibility(p []string, r *http.Request, body request) (any, *HTTPError) {
	cand, herr := s.parse(body.SchemaType, body.Schema, body.References)
	if herr != nil {
		return nil, herr
	}
	name := p[2]
	sub := s.subjects[name]
	var against []version
	if len(p) == 5 {
		live, herr := s.live(name)
		if herr != nil {
			return nil, herr
		}
		i, herr := findVersion(live, name, p[4])
		if herr != nil {
			return nil, herr
		}
		against = []version{live.versions[i]}
	} else if sub != nil {
		against = sub.versions
	}
	level := s.level(sub)
	if len(p) == 5 {
		level = strings.TrimSuffix(level, "_TRANSITIVE")
	}
	msgs := compatible(level, cand, against)
	out := map[string]any{"is_compatible": len(msgs) == 0}
	if r.URL.Query().Get("verbose") == "true" {
		if msgs == nil {
			msgs = []string{}
		}
		out["messages"] = msgs
	}
	return out, nil
}

func (s *Server) getConfig(p []string, r *http.Request, _ request) (any, *HTTPError) {
	sub := s.subjects[p[1]]
	if sub == nil || sub.level == "" {
		if r.URL.Query().Get("defaultToGlobal") == "true" {
			return map[string]string{"compatibilityLevel": s.global}, nil
		}
		return nil, errf(http.StatusNotFound, CodeNoSubjectLevel,
			"Subject '%s' does not have subject-level compatibility configured", p[1])
	}
	return map[string]string{"compatibilityLevel": sub.level}, nil
}

// putConfig reads the level from body.Schema (ServeHTTP puts "compatibility" there).
func (s *Server) putConfig(p []string, _ *http.Request, body request) (any, *HTTPError) {
	level := body.Schema
	if !levels[level] {
		return nil, errf(http.StatusUnprocessableEntity, CodeInvalidCompatibility,
			"Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive")
	}
	if len(p) == 1 {
		s.global = level
	} else {
		s.subject(p[1], true).level = level
	}
	return map[string]string{"compatibility": level}, nil
}

func (s *Server) deleteConfig(p []string, _ *http.Request, _ request) (any, *HTTPError) {
	sub := s.subjects[p[1]]
	if sub == nil || sub.level == "" {
		return nil, errf(http.StatusNotFound, CodeSubjectNotFound, "Subject '%s' not found.", p[1])
	}
	old := sub.level
	sub.level = ""
	return map[string]string{"compatibilityLevel": old}, nil
}

// parse validates a schema: its type, its references (which must be registered) and,
// for Avro, the schema itself.
func (s *Server) parse(typ, text string, refs []Reference) (*schema, *HTTPError) {
	if typ == "" {
		typ = Avro
	}
	if typ != Avro && typ != Protobuf && typ != JSON {
		return nil, errf(http.StatusUnprocessableEntity, CodeInvalidSchema, "Invalid schema type %s", typ)
	}
	if strings.TrimSpace(text) == "" {
		return nil, errf(http.StatusUnprocessableEntity, CodeInvalidSchema, "Empty schema")
	}
	sc := &schema{typ: typ, text: text, refs: refs}
	cache := &avro.SchemaCache{}
	for _, ref := range refs {
		sub, herr := s.live(ref.Subject)
		if herr != nil {
			return nil, errf(http.StatusUnprocessableEntity, CodeInvalidSchema,
				"Invalid schema: reference %q: subject %q not found", ref.Name, ref.Subject)
		}
		i, herr := findVersion(sub, ref.Subject, strconv.Itoa(ref.Version))
		if ref.Version == -1 {
			i, herr = len(sub.versions)-1, nil
		}
		if herr != nil {
			return nil, errf(http.StatusUnprocessableEntity, CodeInvalidSchema,
				"Invalid schema: reference %q: version %d of subject %q not found", ref.Name, ref.Version, ref.Subject)
		}
		if typ == Avro {
			if _, err := avro.ParseWithCache(sub.versions[i].schema.text, "", cache); err != nil {
				return nil, errf(http.StatusUnprocessableEntity, CodeInvalidSchema, "Invalid schema: reference %q: %v", ref.Name, err)
			}
		}
	}
	switch typ {
	case Avro:
		a, err := avro.ParseWithCache(text, "", cache)
		if err != nil {
			return nil, errf(http.StatusUnprocessableEntity, CodeInvalidSchema, "Invalid schema %s, details: %v", text, err)
		}
		sc.avro = a
	case JSON:
		if !json.Valid([]byte(text)) {
			return nil, errf(http.StatusUnprocessableEntity, CodeInvalidSchema, "Invalid schema %s: not JSON", text)
		}
	}
	return sc, nil
}

// key identifies a schema for deduplication: type, references and the text without
// insignificant whitespace (JSON for Avro and JSON Schema, as written for Protobuf).
func key(typ, text string, refs []Reference) string {
	canon := text
	if typ != Protobuf {
		var b bytes.Buffer
		if json.Compact(&b, []byte(text)) == nil {
			canon = b.String()
		}
	}
	r, _ := json.Marshal(refs)
	return typ + "\x00" + string(r) + "\x00" + canon
}

func (s *Server) register(name, typ, text string, refs []Reference) (*schema, *HTTPError) {
	cand, herr := s.parse(typ, text, refs)
	if herr != nil {
		return nil, herr
	}
	k := key(cand.typ, cand.text, cand.refs)
	sub := s.subject(name, true)
	for _, v := range sub.versions {
		if key(v.schema.typ, v.schema.text, v.schema.refs) == k {
			return v.schema, nil
		}
	}
	if msgs := compatible(s.level(sub), cand, sub.versions); len(msgs) > 0 {
		return nil, errf(http.StatusConflict, CodeIncompatible,
			"Schema being registered is incompatible with an earlier schema for subject \"%s\", details: [%s]",
			name, strings.Join(msgs, ", "))
	}
	sc := s.byKey[k]
	if sc == nil {
		cand.id = s.nextID
		s.nextID++
		s.byKey[k] = cand
		s.ids[cand.id] = cand
		sc = cand
	}
	sub.versions = append(sub.versions, version{version: sub.next, schema: sc})
	sub.next++
	return sc, nil
}

// compatible checks a candidate against the versions a level compares it with and
// returns why it is not compatible (nil: it is).
func compatible(level string, cand *schema, versions []version) []string {
	if level == None || len(versions) == 0 {
		return nil
	}
	against := versions
	if !strings.HasSuffix(level, "_TRANSITIVE") {
		against = versions[len(versions)-1:]
	}
	base := strings.TrimSuffix(level, "_TRANSITIVE")
	var msgs []string
	for i := len(against) - 1; i >= 0; i-- {
		old := against[i]
		if old.schema.typ != cand.typ {
			msgs = append(msgs, fmt.Sprintf("{oldSchemaVersion: %d, errorType: 'TYPE_MISMATCH', description: 'the new schema is of type %s, version %d of type %s'}",
				old.version, cand.typ, old.version, old.schema.typ))
			continue
		}
		if cand.typ != Avro {
			continue
		}
		sc := avro.NewSchemaCompatibility()
		if base == Backward || base == Full {
			if err := sc.Compatible(cand.avro, old.schema.avro); err != nil {
				msgs = append(msgs, fmt.Sprintf("{oldSchemaVersion: %d, errorType: 'READER_CANNOT_READ_WRITER', description: 'the new schema cannot read data written by version %d: %v', compatibility: '%s'}",
					old.version, old.version, err, level))
			}
		}
		if base == Forward || base == Full {
			if err := sc.Compatible(old.schema.avro, cand.avro); err != nil {
				msgs = append(msgs, fmt.Sprintf("{oldSchemaVersion: %d, errorType: 'WRITER_CANNOT_BE_READ', description: 'version %d cannot read data written by the new schema: %v', compatibility: '%s'}",
					old.version, old.version, err, level))
			}
		}
	}
	return msgs
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data, _ = json.Marshal(errf(status, CodeInternal, "encoding the answer: %v", err))
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(data)
}
